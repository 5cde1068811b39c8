/*
 * osslbuild's stand-in for Apple's <CommonCrypto/CommonRandom.h> (see
 * CommonCryptoError.h): the one function OpenSSL calls, as Apple declares it.
 */
#ifndef OSSLBUILD_COMMONRANDOM_H
#define OSSLBUILD_COMMONRANDOM_H
#include <stddef.h>
#include <CommonCrypto/CommonCryptoError.h>

typedef CCCryptorStatus CCRNGStatus;

CCRNGStatus CCRandomGenerateBytes(void *bytes, size_t count);
#endif
