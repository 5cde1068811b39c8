#include <stddef.h>

int CRYPTO_memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    unsigned char r = 0;
    size_t i;

    for (i = 0; i < n; i++)
        r |= x[i] ^ y[i];
    return r;
}
