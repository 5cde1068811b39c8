/*
 * osslbuild's stand-in for Apple's <CommonCrypto/CommonCryptoError.h>, for
 * cross-compiling OpenSSL on Linux only. It declares just what OpenSSL 3+
 * uses (crypto/rand/rand_unix.c -> CCRandomGenerateBytes), with the types and
 * values Apple documents. Builds on macOS use the SDK's real header.
 */
#ifndef OSSLBUILD_COMMONCRYPTOERROR_H
#define OSSLBUILD_COMMONCRYPTOERROR_H
#include <stdint.h>

typedef int32_t CCStatus;
typedef int32_t CCCryptorStatus;

enum {
	kCCSuccess = 0,
	kCCParamError = -4300,
	kCCBufferTooSmall = -4301,
	kCCMemoryFailure = -4302,
	kCCAlignmentError = -4303,
	kCCDecodeError = -4304,
	kCCUnimplemented = -4305,
	kCCOverflow = -4306,
	kCCRNGFailure = -4307,
};
#endif
