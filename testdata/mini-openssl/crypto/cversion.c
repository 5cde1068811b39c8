/* Laid out as OpenSSL's crypto/cversion.c with its generated buildinf.h. */
#include <openssl/opensslv.h>
#include "buildinf.h"

const char *OpenSSL_version(int t)
{
    switch (t) {
    case 0:
        return OPENSSL_VERSION_TEXT;
    case 1:
        return compiler_flags;
    case 2:
        return DATE;
    case 3:
        return PLATFORM;
    }
    return "not available";
}
