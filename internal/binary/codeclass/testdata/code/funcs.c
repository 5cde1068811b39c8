/*
 * A self-contained C file for the code classifier's unit tests: small
 * accessors, loops, arithmetic, floating point, many and variadic
 * arguments, recursion, switches and structures, so that -O0 and optimised
 * builds of it show every shape the classifier meets in a real library.
 * No headers: the tests compile it with -nostdinc for every target.
 */
typedef unsigned long size_t;
typedef __builtin_va_list va_list;
#define va_start(ap, last) __builtin_va_start(ap, last)
#define va_arg(ap, type) __builtin_va_arg(ap, type)
#define va_end(ap) __builtin_va_end(ap)

struct buf {
    unsigned char *data;
    size_t len, cap;
    int flags;
};

struct point {
    long x, y, z;
};

extern void *ext_alloc(size_t n);
extern void ext_free(void *p);
extern int ext_log(const char *fmt, ...);

int buf_len(const struct buf *b) { return (int)b->len; }
int buf_flags(const struct buf *b) { return b->flags; }
void buf_set_flags(struct buf *b, int f) { b->flags = f; }
unsigned char *buf_data(struct buf *b) { return b->data; }

int buf_reserve(struct buf *b, size_t n)
{
    unsigned char *p;
    size_t i, cap = b->cap ? b->cap : 16;

    if (b->len + n <= b->cap)
        return 1;
    while (cap < b->len + n)
        cap *= 2;
    p = ext_alloc(cap);
    if (p == 0)
        return 0;
    for (i = 0; i < b->len; i++)
        p[i] = b->data[i];
    ext_free(b->data);
    b->data = p;
    b->cap = cap;
    return 1;
}

int buf_append(struct buf *b, const unsigned char *src, size_t n)
{
    size_t i;

    if (!buf_reserve(b, n))
        return 0;
    for (i = 0; i < n; i++)
        b->data[b->len + i] = src[i];
    b->len += n;
    return 1;
}

unsigned int checksum(const unsigned char *p, size_t n)
{
    unsigned int a = 1, s = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        a = (a + p[i]) % 65521;
        s = (s + a) % 65521;
    }
    return (s << 16) | a;
}

unsigned long long mulmod(unsigned long long a, unsigned long long b, unsigned long long m)
{
    unsigned long long r = 0;

    a %= m;
    while (b) {
        if (b & 1)
            r = (r + a) % m;
        a = (a * 2) % m;
        b >>= 1;
    }
    return r;
}

unsigned long long powmod(unsigned long long base, unsigned long long e, unsigned long long m)
{
    unsigned long long r = 1;

    while (e) {
        if (e & 1)
            r = mulmod(r, base, m);
        base = mulmod(base, base, m);
        e >>= 1;
    }
    return r;
}

int is_prime(unsigned long long n)
{
    unsigned long long d;

    if (n < 2)
        return 0;
    for (d = 2; d * d <= n; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

long gcd(long a, long b)
{
    while (b != 0) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

double poly(double x, double c0, double c1, double c2, double c3)
{
    return ((c3 * x + c2) * x + c1) * x + c0;
}

float lerp(float a, float b, float t) { return a + (b - a) * t; }

double mean(const double *v, int n)
{
    double s = 0;
    int i;

    for (i = 0; i < n; i++)
        s += v[i];
    return n ? s / n : 0;
}

long sum8(long a, long b, long c, long d, long e, long f, long g, long h)
{
    return a + b * 2 + c * 3 + d * 4 + e * 5 + f * 6 + g * 7 + h * 8;
}

long sum10(long a, long b, long c, long d, long e, long f, long g, long h, long i, long j)
{
    return sum8(a, b, c, d, e, f, g, h) + i * 9 + j * 10;
}

long sum_va(int n, ...)
{
    va_list ap;
    long s = 0;

    va_start(ap, n);
    while (n-- > 0)
        s += va_arg(ap, long);
    va_end(ap);
    return s;
}

const char *kind_name(int k)
{
    switch (k) {
    case 0: return "none";
    case 1: return "integer";
    case 2: return "string";
    case 3: return "sequence";
    case 4: return "set";
    case 5: return "object";
    case 6: return "boolean";
    case 7: return "null";
    default: return "unknown";
    }
}

int classify(int c)
{
    if (c >= '0' && c <= '9')
        return 1;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return 2;
    if (c == ' ' || c == '\t' || c == '\n')
        return 3;
    return 0;
}

size_t str_len(const char *s)
{
    const char *p = s;

    while (*p)
        p++;
    return (size_t)(p - s);
}

int str_cmp(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

void mem_xor(unsigned char *dst, const unsigned char *a, const unsigned char *b, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        dst[i] = a[i] ^ b[i];
}

int ct_eq(const unsigned char *a, const unsigned char *b, size_t n)
{
    unsigned char d = 0;
    size_t i;

    for (i = 0; i < n; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}

void point_add(struct point *r, const struct point *a, const struct point *b)
{
    r->x = a->x + b->x;
    r->y = a->y + b->y;
    r->z = a->z + b->z;
}

struct point point_scale(struct point p, long k)
{
    p.x *= k;
    p.y *= k;
    p.z *= k;
    return p;
}

long point_norm1(struct point p)
{
    return (p.x < 0 ? -p.x : p.x) + (p.y < 0 ? -p.y : p.y) + (p.z < 0 ? -p.z : p.z);
}

void sort_ints(int *v, int n)
{
    int i, j;

    for (i = 1; i < n; i++) {
        int x = v[i];

        for (j = i - 1; j >= 0 && v[j] > x; j--)
            v[j + 1] = v[j];
        v[j + 1] = x;
    }
}

int bsearch_int(const int *v, int n, int key)
{
    int lo = 0, hi = n - 1;

    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;

        if (v[mid] == key)
            return mid;
        if (v[mid] < key)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

unsigned int rotl32(unsigned int x, int n) { return (x << n) | (x >> (32 - n)); }

void quarter_round(unsigned int *a, unsigned int *b, unsigned int *c, unsigned int *d)
{
    *a += *b; *d ^= *a; *d = rotl32(*d, 16);
    *c += *d; *b ^= *c; *b = rotl32(*b, 12);
    *a += *b; *d ^= *a; *d = rotl32(*d, 8);
    *c += *d; *b ^= *c; *b = rotl32(*b, 7);
}

void block_mix(unsigned int s[16], int rounds)
{
    int i;

    for (i = 0; i < rounds; i += 2) {
        quarter_round(&s[0], &s[4], &s[8], &s[12]);
        quarter_round(&s[1], &s[5], &s[9], &s[13]);
        quarter_round(&s[2], &s[6], &s[10], &s[14]);
        quarter_round(&s[3], &s[7], &s[11], &s[15]);
        quarter_round(&s[0], &s[5], &s[10], &s[15]);
        quarter_round(&s[1], &s[6], &s[11], &s[12]);
        quarter_round(&s[2], &s[7], &s[8], &s[13]);
        quarter_round(&s[3], &s[4], &s[9], &s[14]);
    }
}

int parse_uint(const char *s, unsigned long *out)
{
    unsigned long v = 0;

    if (*s == 0)
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        if (v > (~0UL - 9) / 10)
            return 0;
        v = v * 10 + (unsigned long)(*s - '0');
    }
    *out = v;
    return 1;
}

int hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int hex_decode(unsigned char *out, const char *in, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        int hi = hex_digit(in[2 * i]), lo = hex_digit(in[2 * i + 1]);

        if (hi < 0 || lo < 0)
            return 0;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return 1;
}

int log_error(int code, const char *what)
{
    return ext_log("error %d: %s (%s)", code, what, kind_name(code & 7));
}

int buf_free(struct buf *b)
{
    if (b == 0)
        return 0;
    ext_free(b->data);
    b->data = 0;
    b->len = b->cap = 0;
    return 1;
}

int counter(void)
{
    static int n;

    return ++n;
}

long accumulate(const long *v, int n, long (*f)(long, long))
{
    long r = 0;
    int i;

    for (i = 0; i < n; i++)
        r = f(r, v[i]);
    return r;
}

int table_lookup(const int *keys, const int *vals, int n, int key, int dflt)
{
    int i;

    for (i = 0; i < n; i++)
        if (keys[i] == key)
            return vals[i];
    return dflt;
}

unsigned long long bswap64(unsigned long long x)
{
    unsigned long long r = 0;
    int i;

    for (i = 0; i < 8; i++) {
        r = (r << 8) | (x & 0xff);
        x >>= 8;
    }
    return r;
}

int popcount32(unsigned int x)
{
    int n = 0;

    while (x) {
        x &= x - 1;
        n++;
    }
    return n;
}

long clamp(long v, long lo, long hi) { return v < lo ? lo : v > hi ? hi : v; }

int matrix_trace(const int m[4][4])
{
    return m[0][0] + m[1][1] + m[2][2] + m[3][3];
}

void matrix_mul(int r[4][4], const int a[4][4], const int b[4][4])
{
    int i, j, k;

    for (i = 0; i < 4; i++)
        for (j = 0; j < 4; j++) {
            int s = 0;

            for (k = 0; k < 4; k++)
                s += a[i][k] * b[k][j];
            r[i][j] = s;
        }
}
