/*
 * osslbench: times a few libcrypto operations, for comparing two builds of
 * the same OpenSSL release (osslbuild's, and the same sources configured
 * with CFLAGS in the environment, which leaves the C code at -O0).
 *
 * Build (statically against an artifact):
 *   cc -O2 -I<artifact>/include -o osslbench bench/osslbench.c \
 *      <artifact>/lib/libcrypto.a -lpthread -ldl
 * Run:
 *   ./osslbench [-n CALLS]      (default 1000 timed calls per operation)
 *   ./osslbench -serve          (one operation at a time, on request)
 *
 * Before timing anything it checks that the library computes the right
 * thing (KEM round trip, signatures verify and a tampered message does not,
 * a SHA3-256 known answer) and exits 1 with a message if not: a fast wrong
 * answer is not a result.
 *
 * Output, tab-separated, one record per line (internal/bench parses it):
 *   version   <OpenSSL_version(OPENSSL_VERSION)>
 *   compiler  <OpenSSL_version(OPENSSL_CFLAGS), i.e. "compiler: cc ...">
 *   platform  <OpenSSL_version(OPENSSL_PLATFORM)>
 *   check     ok
 *   op        <name>  <median ms per call>  <calls>
 *
 * With -serve it prints the identification lines and "check ok", then reads
 * requests from stdin, one per line, "slice<TAB><name><TAB><calls>", and
 * answers each with "slice<TAB><name><TAB><ms per call><TAB><calls>" until
 * end of input. calls is a multiple of SERVE_CYCLE; each cycle of calls is
 * timed in the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), and the answer
 * is the median cycle's time per call. CPU time, because a shared machine's
 * other processes do not add to it (a 4 ms call preempted half-way would
 * count their turn in wall time); per cycle, because reading that clock is
 * a system call (2 us on a VM: 15% of an ML-KEM encapsulation if read per
 * call, under 0.5% per cycle); the median, so one cycle hit by an
 * interrupt or a cold cache does not move the slice. internal/bench starts two of them, one per build, and
 * alternates short slices of the same operation between them, so both
 * builds meet the same moments of a shared machine's load. Call j of a
 * cycle passes j as the call's index (ML-DSA: the message), so every cycle
 * of every run on every machine signs the same mix of messages: ML-DSA's ratio depends on
 * how many rejection rounds the median message takes (the rounds are C,
 * part of the rest is assembly), and a mix that changed with the slice
 * length moved it between 7.4x and 9.0x from run to run.
 *
 * Each timed call is what one high-level call costs (as a binding such as
 * pyca/cryptography makes it): a fresh context, init, the operation, free.
 * Key generation is outside the timing. The median is used rather than the
 * mean so that a preemption on a shared machine does not move the result.
 *
 * ML-DSA signing repeats its main loop until a candidate passes the
 * rejection checks; with hedged (random) signing the number of rounds
 * varies per call, and a median over calls jumps between whole rounds
 * (4 vs 5 rounds is 25%) from run to run. The ML-DSA key therefore comes
 * from a fixed seed and signs deterministically, call i signing message i
 * (a counter in the first bytes): the calls are a fixed mix of round counts,
 * the same in every run and every build, so the median is comparable, and
 * typical of hedged signing rather than of one message's count. ML-KEM's
 * key comes from a fixed seed too, so both builds expand the same matrix.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#define MSG_LEN 64
#define SHA3_INPUT (64 * 1024)
#define WARMUP 10
#define SERVE_CYCLE 32 /* internal/bench: harnessCycle */

static void fail(const char *what)
{
    fprintf(stderr, "osslbench: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

static double ms_of(clockid_t id)
{
    struct timespec ts;

    if (clock_gettime(id, &ts) != 0)
        fail("clock_gettime failed");
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* now_ms is wall time, for the per-call timings of -n. */
static double now_ms(void)
{
    return ms_of(CLOCK_MONOTONIC);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* State shared by the operations. */
static EVP_PKEY *mlkem, *mldsa, *ed25519, *p256;
static EVP_MD *sha3;
static unsigned char msg[MSG_LEN];
static unsigned char kem_ct[2048], kem_ss[64];
static size_t kem_ctlen, kem_sslen;
static unsigned char mldsa_sig[8192];
static size_t mldsa_siglen;
static unsigned char *sha3_in;

static void kem_encaps(unsigned char *ct, size_t *ctlen, unsigned char *ss, size_t *sslen)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, mlkem, NULL);

    *ctlen = sizeof(kem_ct);
    *sslen = sizeof(kem_ss);
    if (c == NULL || EVP_PKEY_encapsulate_init(c, NULL) != 1
        || EVP_PKEY_encapsulate(c, ct, ctlen, ss, sslen) != 1)
        fail("ML-KEM-768 encapsulate failed");
    EVP_PKEY_CTX_free(c);
}

static void kem_decaps(unsigned char *ss, size_t *sslen, const unsigned char *ct, size_t ctlen)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, mlkem, NULL);

    *sslen = 64;
    if (c == NULL || EVP_PKEY_decapsulate_init(c, NULL) != 1
        || EVP_PKEY_decapsulate(c, ss, sslen, ct, ctlen) != 1)
        fail("ML-KEM-768 decapsulate failed");
    EVP_PKEY_CTX_free(c);
}

/*
 * sign with EVP_DigestSign: mdname NULL for ML-DSA and Ed25519 (pure). ML-DSA
 * signs deterministically (see the top of the file).
 */
static size_t sign(EVP_PKEY *k, const char *mdname, const unsigned char *m, size_t mlen,
                   unsigned char *sig, size_t cap, const char *what)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    size_t len = cap;
    int one = 1;
    OSSL_PARAM det[] = {
        OSSL_PARAM_int(OSSL_SIGNATURE_PARAM_DETERMINISTIC, &one),
        OSSL_PARAM_END,
    };

    if (c == NULL || EVP_DigestSignInit_ex(c, NULL, mdname, NULL, NULL, k, k == mldsa ? det : NULL) != 1
        || EVP_DigestSign(c, sig, &len, m, mlen) != 1) {
        fprintf(stderr, "osslbench: %s: ", what);
        fail("sign failed");
    }
    EVP_MD_CTX_free(c);
    return len;
}

/* verify returns EVP_DigestVerify's answer: 1 good, 0 bad, <0 error. */
static int verify(EVP_PKEY *k, const char *mdname, const unsigned char *m, size_t mlen,
                  const unsigned char *sig, size_t siglen, const char *what)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int r;

    if (c == NULL || EVP_DigestVerifyInit_ex(c, NULL, mdname, NULL, NULL, k, NULL) != 1) {
        fprintf(stderr, "osslbench: %s: ", what);
        fail("verify init failed");
    }
    r = EVP_DigestVerify(c, sig, siglen, m, mlen);
    EVP_MD_CTX_free(c);
    ERR_clear_error(); /* a rejected signature may leave an error queued */
    return r;
}

static void op_mlkem_encaps(long i)
{
    (void)i;
    unsigned char ct[2048], ss[64];
    size_t ctlen, sslen;

    kem_encaps(ct, &ctlen, ss, &sslen);
}

static void op_mlkem_decaps(long i)
{
    (void)i;
    unsigned char ss[64];
    size_t sslen;

    kem_decaps(ss, &sslen, kem_ct, kem_ctlen);
}

static void op_mldsa_sign(long i)
{
    unsigned char sig[8192], m[MSG_LEN];

    memcpy(m, msg, sizeof(m));
    memcpy(m, &i, sizeof(i));
    sign(mldsa, NULL, m, sizeof(m), sig, sizeof(sig), "ML-DSA-65");
}

static void op_mldsa_verify(long i)
{
    (void)i;
    if (verify(mldsa, NULL, msg, sizeof(msg), mldsa_sig, mldsa_siglen, "ML-DSA-65") != 1)
        fail("ML-DSA-65: signature stopped verifying");
}

static void op_ed25519_sign(long i)
{
    (void)i;
    unsigned char sig[64];

    sign(ed25519, NULL, msg, sizeof(msg), sig, sizeof(sig), "Ed25519");
}

static void op_p256_sign(long i)
{
    (void)i;
    unsigned char sig[80];

    sign(p256, "SHA256", msg, sizeof(msg), sig, sizeof(sig), "ECDSA P-256");
}

static void op_sha3(long i)
{
    (void)i;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len;

    if (EVP_Digest(sha3_in, SHA3_INPUT, md, &len, sha3, NULL) != 1)
        fail("SHA3-256 failed");
}

static EVP_PKEY *keygen(const char *type, const char *group)
{
    EVP_PKEY *k = group ? EVP_PKEY_Q_keygen(NULL, NULL, type, group)
                        : EVP_PKEY_Q_keygen(NULL, NULL, type);

    if (k == NULL) {
        fprintf(stderr, "osslbench: %s: ", type);
        fail("key generation failed");
    }
    return k;
}

/* keygen_seed derives a key of type from a fixed seed, given as param. */
static EVP_PKEY *keygen_seed(const char *type, const char *param, size_t seedlen)
{
    unsigned char seed[64];
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    EVP_PKEY *k = NULL;
    OSSL_PARAM p[2];
    size_t i;

    for (i = 0; i < seedlen; i++)
        seed[i] = (unsigned char)(0xA5 ^ i);
    p[0] = OSSL_PARAM_construct_octet_string(param, seed, seedlen);
    p[1] = OSSL_PARAM_construct_end();
    if (c == NULL || seedlen > sizeof(seed) || EVP_PKEY_keygen_init(c) != 1
        || EVP_PKEY_CTX_set_params(c, p) != 1 || EVP_PKEY_generate(c, &k) != 1) {
        fprintf(stderr, "osslbench: %s: ", type);
        fail("key generation from a seed failed");
    }
    EVP_PKEY_CTX_free(c);
    return k;
}

static int hexeq(const unsigned char *b, size_t n, const char *hex)
{
    char s[2 * EVP_MAX_MD_SIZE + 1];
    size_t i;

    for (i = 0; i < n; i++)
        snprintf(s + 2 * i, 3, "%02x", b[i]);
    return strlen(hex) == 2 * n && memcmp(s, hex, 2 * n) == 0;
}

/* A signature must verify, and must not verify a different message. */
static void check_signature(EVP_PKEY *k, const char *mdname, const char *what)
{
    unsigned char sig[8192], bad[MSG_LEN];
    size_t len = sign(k, mdname, msg, sizeof(msg), sig, sizeof(sig), what);

    if (verify(k, mdname, msg, sizeof(msg), sig, len, what) != 1) {
        fprintf(stderr, "osslbench: %s: ", what);
        fail("a fresh signature does not verify");
    }
    memcpy(bad, msg, sizeof(bad));
    bad[0] ^= 1;
    if (verify(k, mdname, bad, sizeof(bad), sig, len, what) == 1) {
        fprintf(stderr, "osslbench: %s: ", what);
        fail("a signature verifies a tampered message");
    }
}

static void checks(void)
{
    unsigned char ss[64], md[EVP_MAX_MD_SIZE];
    unsigned int mdlen;
    size_t sslen;

    /* ML-KEM-768: decapsulation recovers the encapsulated secret. */
    kem_encaps(kem_ct, &kem_ctlen, kem_ss, &kem_sslen);
    if (kem_ctlen != 1088 || kem_sslen != 32)
        fail("ML-KEM-768: unexpected ciphertext or secret length");
    kem_decaps(ss, &sslen, kem_ct, kem_ctlen);
    if (sslen != kem_sslen || memcmp(ss, kem_ss, sslen) != 0)
        fail("ML-KEM-768: decapsulated secret differs from the encapsulated one");

    check_signature(mldsa, NULL, "ML-DSA-65");
    check_signature(ed25519, NULL, "Ed25519");
    check_signature(p256, "SHA256", "ECDSA P-256");
    mldsa_siglen = sign(mldsa, NULL, msg, sizeof(msg), mldsa_sig, sizeof(mldsa_sig), "ML-DSA-65");
    if (mldsa_siglen != 3309)
        fail("ML-DSA-65: unexpected signature length");
    /* Deterministic signing must be in effect, or the timed work varies. */
    {
        unsigned char again[8192];
        size_t len = sign(mldsa, NULL, msg, sizeof(msg), again, sizeof(again), "ML-DSA-65");

        if (len != mldsa_siglen || memcmp(again, mldsa_sig, len) != 0)
            fail("ML-DSA-65: deterministic signing gave two different signatures");
    }

    /* SHA3-256 known answer (FIPS 202 example, "abc"). */
    if (EVP_Digest("abc", 3, md, &mdlen, sha3, NULL) != 1
        || !hexeq(md, mdlen, "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"))
        fail("SHA3-256(\"abc\") does not match the known answer");
}

struct op {
    const char *name;
    void (*fn)(long i); /* i: the call's index */
};

static const struct op ops[] = {
    {"ML-KEM-768 encapsulate", op_mlkem_encaps},
    {"ML-KEM-768 decapsulate", op_mlkem_decaps},
    {"ML-DSA-65 sign", op_mldsa_sign},
    {"ML-DSA-65 verify", op_mldsa_verify},
    {"Ed25519 sign", op_ed25519_sign},
    {"ECDSA P-256 sign", op_p256_sign},
    {"SHA3-256 64 KiB", op_sha3},
};

/* serve answers slice requests from stdin until end of input. */
static int serve(void)
{
    char line[512], *name, *count, *end;
    double t0, *t = NULL;
    long calls, c, j, cap = 0;
    size_t i;

    while (fgets(line, sizeof(line), stdin) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "slice\t", 6) != 0 || (name = line + 6, count = strchr(name, '\t')) == NULL) {
            fprintf(stderr, "osslbench: bad request %s\n", line);
            return 2;
        }
        *count++ = '\0';
        calls = strtol(count, &end, 10);
        if (*end != '\0' || calls < SERVE_CYCLE || calls > 10000000 || calls % SERVE_CYCLE != 0) {
            fprintf(stderr, "osslbench: bad call count in request for %s (want whole cycles of %d)\n", name, SERVE_CYCLE);
            return 2;
        }
        for (i = 0; i < sizeof(ops) / sizeof(ops[0]) && strcmp(ops[i].name, name) != 0; i++)
            ;
        if (i == sizeof(ops) / sizeof(ops[0])) {
            fprintf(stderr, "osslbench: unknown operation %s\n", name);
            return 2;
        }
        if (calls / SERVE_CYCLE > cap) {
            free(t);
            cap = calls / SERVE_CYCLE;
            if ((t = malloc(sizeof(*t) * (size_t)cap)) == NULL)
                fail("out of memory");
        }
        for (c = 0; c < calls / SERVE_CYCLE; c++) {
            t0 = ms_of(CLOCK_THREAD_CPUTIME_ID);
            for (j = 0; j < SERVE_CYCLE; j++)
                ops[i].fn(j);
            t[c] = (ms_of(CLOCK_THREAD_CPUTIME_ID) - t0) / SERVE_CYCLE;
        }
        printf("slice\t%s\t%.6f\t%ld\n", ops[i].name, median(t, (int)(calls / SERVE_CYCLE)), calls);
        fflush(stdout);
    }
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    long calls = 1000;
    double *t;
    size_t i;
    long j;
    int serving = 0;

    for (int a = 1; a < argc; a++) {
        char *end;

        if (strcmp(argv[a], "-serve") == 0) {
            serving = 1;
        } else if (strcmp(argv[a], "-n") == 0 && a + 1 < argc) {
            calls = strtol(argv[++a], &end, 10);
            if (*end != '\0' || calls < 1 || calls > 10000000) {
                fprintf(stderr, "osslbench: -n wants a count from 1 to 10000000\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: osslbench [-n CALLS | -serve]\n");
            return 2;
        }
    }

    if (OPENSSL_init_crypto(0, NULL) != 1)
        fail("OPENSSL_init_crypto failed");
    mlkem = keygen_seed("ML-KEM-768", OSSL_PKEY_PARAM_ML_KEM_SEED, 64); /* d || z */
    mldsa = keygen_seed("ML-DSA-65", OSSL_PKEY_PARAM_ML_DSA_SEED, 32);  /* xi */
    ed25519 = keygen("ED25519", NULL);
    p256 = keygen("EC", "P-256");
    /* Fetched once, so the timing is the digest, not the provider lookup. */
    if ((sha3 = EVP_MD_fetch(NULL, "SHA3-256", NULL)) == NULL)
        fail("fetch SHA3-256 failed");
    if ((sha3_in = malloc(SHA3_INPUT)) == NULL || (t = malloc(sizeof(*t) * (size_t)calls)) == NULL)
        fail("out of memory");
    for (i = 0; i < SHA3_INPUT; i++)
        sha3_in[i] = (unsigned char)(i * 131 + 7);
    for (i = 0; i < sizeof(msg); i++)
        msg[i] = (unsigned char)i;

    printf("version\t%s\n", OpenSSL_version(OPENSSL_VERSION));
    printf("compiler\t%s\n", OpenSSL_version(OPENSSL_CFLAGS));
    printf("platform\t%s\n", OpenSSL_version(OPENSSL_PLATFORM));
    checks();
    printf("check\tok\n");
    fflush(stdout);
    if (serving) {
        int r = serve();

        free(t);
        free(sha3_in);
        return r;
    }

    for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        for (j = 0; j < WARMUP; j++)
            ops[i].fn(calls + j); /* messages the timed calls do not use */
        for (j = 0; j < calls; j++) {
            double t0 = now_ms();

            ops[i].fn(j);
            t[j] = now_ms() - t0;
        }
        printf("op\t%s\t%.6f\t%ld\n", ops[i].name, median(t, (int)calls), calls);
        fflush(stdout);
    }
    free(t);
    free(sha3_in);
    EVP_MD_free(sha3);
    EVP_PKEY_free(mlkem);
    EVP_PKEY_free(mldsa);
    EVP_PKEY_free(ed25519);
    EVP_PKEY_free(p256);
    return 0;
}
