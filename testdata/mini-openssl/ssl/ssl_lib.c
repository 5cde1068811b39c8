#include <openssl/ssl.h>

int SSL_library_init(void)
{
    return OpenSSL_version(0) != 0;
}
