/* The mini tree's consumer for osslbuild's link stage, as smoke/smoke.c is
 * for OpenSSL: it calls into both libraries. Nothing in the tree builds
 * it; the tests give it to the pipeline (Runtime.LinkProgram). */
#include <stddef.h>
#include <openssl/ssl.h>

int CRYPTO_memcmp(const void *a, const void *b, size_t n);

int main(void)
{
    return SSL_library_init() && CRYPTO_memcmp("a", "a", 1) == 0 ? 0 : 1;
}
