//go:build ignore

/*
 * smoke: proves an OpenSSL build computes right answers and speaks TLS.
 * (The line above only tells Go that this is not cgo source of package
 * smoke, which embeds it.)
 *
 * It is the consumer program of osslbuild's link check (internal/link links
 * it with every member of libssl.a and libcrypto.a into an executable on
 * every slice) and the program `go tool mage smoke <artifact>` runs where
 * the slice can run. Build and run by hand:
 *   cc -I<artifact>/include -o smoke smoke/smoke.c \
 *      <artifact>/lib/libssl.a <artifact>/lib/libcrypto.a -lpthread -ldl
 *   ./smoke
 *
 * Tests (no timing: whether the code is optimised is proven statically):
 *   - known answers from published vectors: SHA-256 and SHA3-256 (FIPS
 *     180-2 / FIPS 202 examples), HMAC-SHA256 (RFC 4231), AES-256-GCM (the
 *     GCM specification's test cases 14 and 16, both directions, and a
 *     forged tag refused), Ed25519 (RFC 8032 section 7.1 TEST 1), X25519
 *     (RFC 7748 sections 5.2 and 6.1);
 *   - ML-KEM-768 and ML-DSA-65 (OpenSSL 3.5 and later) from fixed seeds,
 *     with fixed encapsulation randomness and deterministic signing, against
 *     answers recorded from osslbuild's linux-x86_64 build of OpenSSL 4.0.2
 *     and computed independently with Go's crypto/mlkem and
 *     cloudflare/circl's ML-DSA (smoke/README.md);
 *   - a TLS 1.3 handshake between a libssl client and server in memory
 *     (memory BIOs), with a key and certificate made at run time, the
 *     client verifying the server's certificate and name, and data sent
 *     both ways.
 *
 * Output, tab-separated, one record per line (internal/link parses it):
 *   version   <OpenSSL_version(OPENSSL_VERSION)>
 *   compiler  <OpenSSL_version(OPENSSL_CFLAGS)>
 *   platform  <OpenSSL_version(OPENSSL_PLATFORM)>
 *   pass      <test>  <what was checked>
 *   skip      <test>  <why>
 *   fail      <test>  <what was expected and what came instead>
 *   result    <passed> <failed> <skipped>
 * The exit status is 0 only when every test ran to a pass or a skip.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

static int passed, failed, skipped;

static void pass(const char *test, const char *what)
{
    printf("pass\t%s\t%s\n", test, what);
    passed++;
}

#if !defined(OSSL_PKEY_PARAM_ML_KEM_SEED) || !defined(OSSL_PKEY_PARAM_ML_DSA_SEED)
static void skip(const char *test, const char *why)
{
    printf("skip\t%s\t%s\n", test, why);
    skipped++;
}
#endif

/* fail reports a failed test and OpenSSL's error queue, on one line. */
static void fail(const char *test, const char *fmt, ...)
{
    unsigned long e;
    char buf[256];
    va_list ap;

    printf("fail\t%s\t", test);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    while ((e = ERR_get_error()) != 0) {
        ERR_error_string_n(e, buf, sizeof(buf));
        printf(" [%s]", buf);
    }
    printf("\n");
    failed++;
}

static void tohex(char *out, const unsigned char *b, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
    out[2 * n] = '\0';
}

/* unhex decodes hex into out (capacity cap); returns the length or 0. */
static size_t unhex(unsigned char *out, size_t cap, const char *hex)
{
    size_t n = strlen(hex) / 2, i;
    unsigned int v;

    if (strlen(hex) % 2 != 0 || n > cap)
        return 0;
    for (i = 0; i < n; i++) {
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return 0;
        out[i] = (unsigned char)v;
    }
    return n;
}

/*
 * expect compares got with the hex answer want; a mismatch is a failure
 * naming both. It returns 1 on a match.
 */
static int expect(const char *test, const unsigned char *got, size_t n, const char *want)
{
    char *hex = malloc(2 * n + 1);
    int ok;

    if (hex == NULL) {
        fail(test, "out of memory");
        return 0;
    }
    tohex(hex, got, n);
    ok = strcmp(hex, want) == 0;
    if (!ok)
        fail(test, "expected %s, got %s", want, hex);
    free(hex);
    return ok;
}

/* ---- Digests and MACs ---- */

static void digest(const char *test, const char *alg, const unsigned char *in, size_t n, const char *want, const char *what)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_MD *md_alg = EVP_MD_fetch(NULL, alg, NULL);

    if (md_alg == NULL || EVP_Digest(in, n, md, &len, md_alg, NULL) != 1)
        fail(test, "%s failed", alg);
    else if (expect(test, md, len, want))
        pass(test, what);
    EVP_MD_free(md_alg);
}

static void digests(void)
{
    static const char *abc = "abc";
    static const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    unsigned char *million = malloc(1000000);

    digest("SHA-256 abc", "SHA256", (const unsigned char *)abc, 3,
           "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "FIPS 180-2 example 1");
    digest("SHA-256 448 bits", "SHA256", (const unsigned char *)two, strlen(two),
           "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "FIPS 180-2 example 2");
    digest("SHA3-256 abc", "SHA3-256", (const unsigned char *)abc, 3,
           "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532", "FIPS 202 example");
    if (million == NULL) {
        fail("SHA-256 million a", "out of memory");
        return;
    }
    /* A million bytes takes the bulk (assembly) paths. */
    memset(million, 'a', 1000000);
    digest("SHA-256 million a", "SHA256", million, 1000000,
           "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", "FIPS 180-2 example 3");
    digest("SHA3-256 million a", "SHA3-256", million, 1000000,
           "5c8875ae474a3634ba4fd55ec85bffd661f32aca75c6d699d0cdcb6c115891c1", "FIPS 202 example, 10^6 x 'a'");
    free(million);
}

static void hmac(const char *test, const char *keyhex, const char *data, const char *want, const char *what)
{
    unsigned char key[256], out[EVP_MAX_MD_SIZE];
    size_t klen = unhex(key, sizeof(key), keyhex), outlen = 0;

    if (klen == 0 || EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key, klen,
                               (const unsigned char *)data, strlen(data), out, sizeof(out), &outlen) == NULL)
        fail(test, "HMAC-SHA256 failed");
    else if (expect(test, out, outlen, want))
        pass(test, what);
}

static void hmacs(void)
{
    char big[2 * 131 + 1];
    int i;

    hmac("HMAC-SHA256 RFC 4231 1", "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "Hi There",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", "RFC 4231 test case 1");
    hmac("HMAC-SHA256 RFC 4231 2", "4a656665", "what do ya want for nothing?",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", "RFC 4231 test case 2");
    for (i = 0; i < 131; i++)
        memcpy(big + 2 * i, "aa", 2);
    big[2 * 131] = '\0';
    hmac("HMAC-SHA256 RFC 4231 6", big, "Test Using Larger Than Block-Size Key - Hash Key First",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54", "RFC 4231 test case 6 (key longer than a block)");
}

/* ---- AES-256-GCM ---- */

/* gcm runs one cipher operation; tag is read (encrypt) or checked (decrypt). */
static int gcm(int enc, const unsigned char *key, const unsigned char *iv, size_t ivlen,
               const unsigned char *aad, size_t aadlen, const unsigned char *in, size_t n,
               unsigned char *out, unsigned char *tag)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int len = 0, fin = 0, ok = 0;

    if (c == NULL || x == NULL
        || EVP_CipherInit_ex2(x, c, NULL, NULL, enc, NULL) != 1
        || EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IVLEN, (int)ivlen, NULL) != 1
        || EVP_CipherInit_ex2(x, NULL, key, iv, enc, NULL) != 1)
        goto done;
    if (aadlen > 0 && EVP_CipherUpdate(x, NULL, &len, aad, (int)aadlen) != 1)
        goto done;
    if (n > 0 && EVP_CipherUpdate(x, out, &len, in, (int)n) != 1)
        goto done;
    if (!enc && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_TAG, 16, tag) != 1)
        goto done;
    if (EVP_CipherFinal_ex(x, out + len, &fin) != 1)
        goto done;
    if (enc && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag) != 1)
        goto done;
    ok = 1;
done:
    EVP_CIPHER_CTX_free(x);
    EVP_CIPHER_free(c);
    return ok;
}

static void gcm_case(const char *test, const char *keyhex, const char *ivhex, const char *aadhex,
                     const char *pthex, const char *cthex, const char *taghex, const char *what)
{
    unsigned char key[32], iv[64], aad[64], pt[64], ct[64], tag[16], out[64];
    size_t ivlen = unhex(iv, sizeof(iv), ivhex), aadlen = unhex(aad, sizeof(aad), aadhex);
    size_t n = unhex(pt, sizeof(pt), pthex);

    if (unhex(key, sizeof(key), keyhex) != 32 || ivlen == 0 || unhex(ct, sizeof(ct), cthex) != n
        || unhex(tag, sizeof(tag), taghex) != 16) {
        fail(test, "bad test vector");
        return;
    }
    if (!gcm(1, key, iv, ivlen, aad, aadlen, pt, n, out, tag)) {
        fail(test, "encryption failed");
        return;
    }
    if (!expect(test, out, n, cthex) || !expect(test, tag, 16, taghex))
        return;
    if (!gcm(0, key, iv, ivlen, aad, aadlen, ct, n, out, tag)) {
        fail(test, "decryption refused the published tag");
        return;
    }
    if (!expect(test, out, n, pthex))
        return;
    tag[0] ^= 1;
    if (gcm(0, key, iv, ivlen, aad, aadlen, ct, n, out, tag)) {
        fail(test, "decryption accepted a forged tag");
        return;
    }
    ERR_clear_error();
    pass(test, what);
}

static void aes_gcm(void)
{
    gcm_case("AES-256-GCM 14",
             "0000000000000000000000000000000000000000000000000000000000000000",
             "000000000000000000000000", "",
             "00000000000000000000000000000000",
             "cea7403d4d606b6e074ec5d3baf39d18",
             "d0d1c8a799996bf0265b98b5d48ab919",
             "GCM specification test case 14: encrypt, decrypt, forged tag refused");
    gcm_case("AES-256-GCM 16",
             "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
             "cafebabefacedbaddecaf888",
             "feedfacedeadbeeffeedfacedeadbeefabaddad2",
             "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
             "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
             "76fc6ece0f4e1768cddf8853bb2d551b",
             "GCM specification test case 16 (with AAD): encrypt, decrypt, forged tag refused");
}

/* ---- Ed25519 and X25519 ---- */

static void ed25519(void)
{
    const char *test = "Ed25519 RFC 8032 1";
    unsigned char sk[32], pub[32], sig[64];
    size_t publen = sizeof(pub), siglen = sizeof(sig);
    EVP_PKEY *k;
    EVP_MD_CTX *c = EVP_MD_CTX_new();

    unhex(sk, sizeof(sk), "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
    k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, sk, sizeof(sk));
    if (k == NULL || c == NULL || EVP_PKEY_get_raw_public_key(k, pub, &publen) != 1) {
        fail(test, "key from the RFC's secret failed");
        goto done;
    }
    if (!expect(test, pub, publen, "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))
        goto done;
    if (EVP_DigestSignInit_ex(c, NULL, NULL, NULL, NULL, k, NULL) != 1
        || EVP_DigestSign(c, sig, &siglen, (const unsigned char *)"", 0) != 1) {
        fail(test, "signing failed");
        goto done;
    }
    if (!expect(test, sig, siglen, "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065"
                                   "224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"))
        goto done;
    EVP_MD_CTX_free(c);
    c = EVP_MD_CTX_new();
    sig[10] ^= 1;
    if (c == NULL || EVP_DigestVerifyInit_ex(c, NULL, NULL, NULL, NULL, k, NULL) != 1
        || EVP_DigestVerify(c, sig, siglen, (const unsigned char *)"", 0) == 1) {
        fail(test, "a corrupted signature verified");
        goto done;
    }
    ERR_clear_error();
    pass(test, "RFC 8032 section 7.1 TEST 1: public key, signature, corrupted signature refused");
done:
    EVP_MD_CTX_free(c);
    EVP_PKEY_free(k);
}

/* x25519 derives the shared secret of private key skhex and peer peerhex. */
static int x25519(const char *test, const char *skhex, const char *peerhex, unsigned char out[32])
{
    unsigned char sk[32], peer[32];
    size_t len = 32;
    EVP_PKEY *k, *p;
    EVP_PKEY_CTX *c = NULL;
    int ok = 0;

    unhex(sk, sizeof(sk), skhex);
    unhex(peer, sizeof(peer), peerhex);
    k = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, sk, sizeof(sk));
    p = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, peer, sizeof(peer));
    if (k != NULL && p != NULL && (c = EVP_PKEY_CTX_new_from_pkey(NULL, k, NULL)) != NULL
        && EVP_PKEY_derive_init(c) == 1 && EVP_PKEY_derive_set_peer(c, p) == 1
        && EVP_PKEY_derive(c, out, &len) == 1 && len == 32)
        ok = 1;
    else
        fail(test, "derive failed");
    EVP_PKEY_CTX_free(c);
    EVP_PKEY_free(k);
    EVP_PKEY_free(p);
    return ok;
}

static void x25519s(void)
{
    const char *alice = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
    const char *bob = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb";
    const char *alice_pub = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";
    const char *bob_pub = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f";
    const char *shared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742";
    unsigned char out[32], sk[32], pub[32];
    size_t publen = sizeof(pub);
    EVP_PKEY *k;

    if (x25519("X25519 RFC 7748 5.2", "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
               "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c", out)
        && expect("X25519 RFC 7748 5.2", out, 32, "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"))
        pass("X25519 RFC 7748 5.2", "RFC 7748 section 5.2, first vector");

    unhex(sk, sizeof(sk), alice);
    k = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, sk, sizeof(sk));
    if (k == NULL || EVP_PKEY_get_raw_public_key(k, pub, &publen) != 1) {
        fail("X25519 RFC 7748 6.1", "Alice's key failed");
        EVP_PKEY_free(k);
        return;
    }
    EVP_PKEY_free(k);
    if (!expect("X25519 RFC 7748 6.1", pub, publen, alice_pub))
        return;
    if (x25519("X25519 RFC 7748 6.1", alice, bob_pub, out) && expect("X25519 RFC 7748 6.1", out, 32, shared)
        && x25519("X25519 RFC 7748 6.1", bob, alice_pub, out) && expect("X25519 RFC 7748 6.1", out, 32, shared))
        pass("X25519 RFC 7748 6.1", "RFC 7748 section 6.1: Alice's public key, the shared secret from both sides");
}

/* ---- ML-KEM-768 and ML-DSA-65 (OpenSSL 3.5 and later) ---- */

#if defined(OSSL_PKEY_PARAM_ML_KEM_SEED) && defined(OSSL_PKEY_PARAM_ML_DSA_SEED)
/*
 * Recorded answers (smoke/README.md says how they were obtained and
 * checked): SHA-256 of the public key, ciphertext and signature, the
 * shared secret itself.
 */
#define MLKEM_EK_SHA256 "0b7934c83125c788995e2ba6bd761e33046b3e40571be53e023309a29f398cc9"
#define MLKEM_CT_SHA256 "dbf4e9aa48b078ad46ec1c9c47bda8c2d2fec9d0e7a21bd48d2238a2abedb856"
#define MLKEM_SS "9cddd089ffe70e3996e76f7c8d06746df34d07e8657bc0fcf2bb0e1c3084aea1"
#define MLDSA_PK_SHA256 "e00c3ad05e18901d30ebc2c9044f4b0756ae6922ff258d688292e8ead8d4a2d5"
#define MLDSA_SIG_SHA256 "e7428da900717bc95df997ddbd9a6302d236829af3b4a2eebdb7aeb10f55fd9d"

/* sha256hex is the SHA-256 of b in hex, for answers too long to print. */
static void sha256hex(char out[65], const unsigned char *b, size_t n)
{
    unsigned char md[32];
    unsigned int len = 0;

    if (EVP_Digest(b, n, md, &len, EVP_sha256(), NULL) != 1 || len != 32) {
        strcpy(out, "(SHA-256 failed)");
        return;
    }
    tohex(out, md, 32);
}

static int expect_sha256(const char *test, const unsigned char *got, size_t n, const char *want)
{
    char hex[65];

    sha256hex(hex, got, n);
    if (strcmp(hex, want) != 0) {
        fail(test, "expected sha256 %s, got sha256 %s", want, hex);
        return 0;
    }
    return 1;
}

static EVP_PKEY *from_seed(const char *type, const char *param, const unsigned char *seed, size_t n)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    EVP_PKEY *k = NULL;
    OSSL_PARAM p[2];

    p[0] = OSSL_PARAM_construct_octet_string(param, (void *)seed, n);
    p[1] = OSSL_PARAM_construct_end();
    if (c == NULL || EVP_PKEY_keygen_init(c) != 1 || EVP_PKEY_CTX_set_params(c, p) != 1
        || EVP_PKEY_generate(c, &k) != 1)
        k = NULL;
    EVP_PKEY_CTX_free(c);
    return k;
}

static void mlkem(void)
{
    const char *test = "ML-KEM-768";
    unsigned char seed[64], m[32], ek[1184], ct[1088], ss[32], ss2[32];
    size_t eklen = sizeof(ek), ctlen = sizeof(ct), sslen = sizeof(ss), ss2len = sizeof(ss2), i;
    EVP_PKEY *k;
    EVP_PKEY_CTX *c = NULL;
    OSSL_PARAM p[2];

    /* d || z = 00 01 ... 3f; the encapsulation's m = 40 41 ... 5f. */
    for (i = 0; i < sizeof(seed); i++)
        seed[i] = (unsigned char)i;
    for (i = 0; i < sizeof(m); i++)
        m[i] = (unsigned char)(0x40 + i);
    k = from_seed("ML-KEM-768", OSSL_PKEY_PARAM_ML_KEM_SEED, seed, sizeof(seed));
    if (k == NULL || EVP_PKEY_get_raw_public_key(k, ek, &eklen) != 1 || eklen != sizeof(ek)) {
        fail(test, "key from the seed failed");
        goto done;
    }
    if (!expect_sha256(test, ek, eklen, MLKEM_EK_SHA256))
        goto done;
    p[0] = OSSL_PARAM_construct_octet_string(OSSL_KEM_PARAM_IKME, m, sizeof(m));
    p[1] = OSSL_PARAM_construct_end();
    if ((c = EVP_PKEY_CTX_new_from_pkey(NULL, k, NULL)) == NULL || EVP_PKEY_encapsulate_init(c, p) != 1
        || EVP_PKEY_encapsulate(c, ct, &ctlen, ss, &sslen) != 1 || ctlen != sizeof(ct) || sslen != sizeof(ss)) {
        fail(test, "encapsulation failed");
        goto done;
    }
    if (!expect_sha256(test, ct, ctlen, MLKEM_CT_SHA256) || !expect(test, ss, sslen, MLKEM_SS))
        goto done;
    EVP_PKEY_CTX_free(c);
    if ((c = EVP_PKEY_CTX_new_from_pkey(NULL, k, NULL)) == NULL || EVP_PKEY_decapsulate_init(c, NULL) != 1
        || EVP_PKEY_decapsulate(c, ss2, &ss2len, ct, ctlen) != 1) {
        fail(test, "decapsulation failed");
        goto done;
    }
    if (!expect(test, ss2, ss2len, MLKEM_SS))
        goto done;
    /* A changed ciphertext must not give the secret (implicit rejection). */
    ct[0] ^= 1;
    ss2len = sizeof(ss2);
    if (EVP_PKEY_decapsulate(c, ss2, &ss2len, ct, ctlen) != 1 || memcmp(ss2, ss, sizeof(ss)) == 0) {
        fail(test, "a changed ciphertext decapsulated to the secret, or failed");
        goto done;
    }
    pass(test, "key from a fixed seed, encapsulation with fixed randomness, decapsulation, implicit rejection");
done:
    EVP_PKEY_CTX_free(c);
    EVP_PKEY_free(k);
}

static void mldsa(void)
{
    const char *test = "ML-DSA-65";
    static const char msg[] = "osslbuild smoke test";
    unsigned char seed[32], pk[1952], sig[3309];
    size_t pklen = sizeof(pk), siglen = sizeof(sig), i;
    int one = 1;
    OSSL_PARAM det[] = {
        OSSL_PARAM_int(OSSL_SIGNATURE_PARAM_DETERMINISTIC, &one),
        OSSL_PARAM_END,
    };
    EVP_PKEY *k;
    EVP_MD_CTX *c = NULL;

    /* xi = 80 81 ... 9f */
    for (i = 0; i < sizeof(seed); i++)
        seed[i] = (unsigned char)(0x80 + i);
    k = from_seed("ML-DSA-65", OSSL_PKEY_PARAM_ML_DSA_SEED, seed, sizeof(seed));
    if (k == NULL || EVP_PKEY_get_raw_public_key(k, pk, &pklen) != 1 || pklen != sizeof(pk)) {
        fail(test, "key from the seed failed");
        goto done;
    }
    if (!expect_sha256(test, pk, pklen, MLDSA_PK_SHA256))
        goto done;
    /* Pure ML-DSA, empty context, deterministic (rnd = 0^32). */
    if ((c = EVP_MD_CTX_new()) == NULL || EVP_DigestSignInit_ex(c, NULL, NULL, NULL, NULL, k, det) != 1
        || EVP_DigestSign(c, sig, &siglen, (const unsigned char *)msg, strlen(msg)) != 1 || siglen != sizeof(sig)) {
        fail(test, "signing failed");
        goto done;
    }
    if (!expect_sha256(test, sig, siglen, MLDSA_SIG_SHA256))
        goto done;
    EVP_MD_CTX_free(c);
    if ((c = EVP_MD_CTX_new()) == NULL || EVP_DigestVerifyInit_ex(c, NULL, NULL, NULL, NULL, k, NULL) != 1
        || EVP_DigestVerify(c, sig, siglen, (const unsigned char *)msg, strlen(msg)) != 1) {
        fail(test, "the signature does not verify");
        goto done;
    }
    EVP_MD_CTX_free(c);
    sig[100] ^= 1;
    if ((c = EVP_MD_CTX_new()) == NULL || EVP_DigestVerifyInit_ex(c, NULL, NULL, NULL, NULL, k, NULL) != 1
        || EVP_DigestVerify(c, sig, siglen, (const unsigned char *)msg, strlen(msg)) == 1) {
        fail(test, "a corrupted signature verified");
        goto done;
    }
    ERR_clear_error();
    pass(test, "key from a fixed seed, deterministic signature, verification, corrupted signature refused");
done:
    EVP_MD_CTX_free(c);
    EVP_PKEY_free(k);
}
#else
static void mlkem(void) { skip("ML-KEM-768", "this OpenSSL has no ML-KEM (3.5 and later)"); }
static void mldsa(void) { skip("ML-DSA-65", "this OpenSSL has no ML-DSA (3.5 and later)"); }
#endif

/* ---- TLS 1.3 in memory ---- */

#define TLS_NAME "smoke.test"

/* selfsigned makes a P-256 key and a certificate for TLS_NAME with it. */
static X509 *selfsigned(EVP_PKEY **key)
{
    X509 *x = X509_new();
    X509_NAME *n = X509_NAME_new();
    ASN1_INTEGER *serial = ASN1_INTEGER_new();

    *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    if (*key == NULL || x == NULL || n == NULL || serial == NULL
        || X509_set_version(x, X509_VERSION_3) != 1
        || ASN1_INTEGER_set(serial, 1) != 1 || X509_set_serialNumber(x, serial) != 1
        || X509_gmtime_adj(X509_getm_notBefore(x), -3600) == NULL
        || X509_gmtime_adj(X509_getm_notAfter(x), 86400) == NULL
        || X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)TLS_NAME, -1, -1, 0) != 1
        || X509_set_subject_name(x, n) != 1 || X509_set_issuer_name(x, n) != 1
        || X509_set_pubkey(x, *key) != 1 || X509_sign(x, *key, EVP_sha256()) <= 0) {
        X509_free(x);
        x = NULL;
    }
    X509_NAME_free(n);
    ASN1_INTEGER_free(serial);
    return x;
}

/* shuttle moves what one side wrote to the other side's input. */
static int shuttle(BIO *from, BIO *to)
{
    char buf[4096];
    int n;

    while ((n = BIO_read(from, buf, sizeof(buf))) > 0)
        if (BIO_write(to, buf, n) != n)
            return 0;
    return 1;
}

/* step advances a handshake; 1 done, 0 wants more, -1 failed. */
static int step(SSL *s)
{
    int r = SSL_do_handshake(s);

    if (r == 1)
        return 1;
    r = SSL_get_error(s, r);
    return r == SSL_ERROR_WANT_READ || r == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

/* transfer writes msg on one side and reads it on the other. */
static int transfer(SSL *w, BIO *wout, SSL *r, BIO *rin, const char *msg)
{
    char buf[256];
    int n, i;

    if (SSL_write(w, msg, (int)strlen(msg)) != (int)strlen(msg) || !shuttle(wout, rin))
        return 0;
    /* The first read may consume post-handshake messages (tickets) first. */
    for (i = 0; i < 4; i++) {
        n = SSL_read(r, buf, sizeof(buf) - 1);
        if (n > 0) {
            buf[n] = '\0';
            return strcmp(buf, msg) == 0;
        }
        if (SSL_get_error(r, n) != SSL_ERROR_WANT_READ)
            return 0;
    }
    return 0;
}

static void tls13(void)
{
    const char *test = "TLS 1.3 in memory";
    EVP_PKEY *key = NULL;
    X509 *cert = selfsigned(&key);
    SSL_CTX *sctx = SSL_CTX_new(TLS_server_method()), *cctx = SSL_CTX_new(TLS_client_method());
    SSL *srv = NULL, *cli = NULL;
    BIO *c_in = BIO_new(BIO_s_mem()), *c_out = BIO_new(BIO_s_mem());
    BIO *s_in = BIO_new(BIO_s_mem()), *s_out = BIO_new(BIO_s_mem());
    int cdone = 0, sdone = 0, owned = 0, i, r;
    char what[512];
    const char *group = "";

    if (cert == NULL || sctx == NULL || cctx == NULL || c_in == NULL || c_out == NULL || s_in == NULL || s_out == NULL) {
        fail(test, "setting up the key, certificate, contexts or BIOs failed");
        goto done;
    }
    /* An empty memory BIO says "retry", not EOF. */
    BIO_set_mem_eof_return(c_in, -1);
    BIO_set_mem_eof_return(s_in, -1);
    if (SSL_CTX_set_min_proto_version(sctx, TLS1_3_VERSION) != 1
        || SSL_CTX_set_min_proto_version(cctx, TLS1_3_VERSION) != 1
        || SSL_CTX_use_certificate(sctx, cert) != 1 || SSL_CTX_use_PrivateKey(sctx, key) != 1
        || SSL_CTX_check_private_key(sctx) != 1
        || X509_STORE_add_cert(SSL_CTX_get_cert_store(cctx), cert) != 1) {
        fail(test, "configuring the contexts failed");
        goto done;
    }
    SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
    if ((srv = SSL_new(sctx)) == NULL || (cli = SSL_new(cctx)) == NULL
        || X509_VERIFY_PARAM_set1_host(SSL_get0_param(cli), TLS_NAME, 0) != 1
        || SSL_set_tlsext_host_name(cli, TLS_NAME) != 1) {
        fail(test, "creating the connections failed");
        goto done;
    }
    SSL_set_bio(cli, c_in, c_out);
    SSL_set_bio(srv, s_in, s_out);
    owned = 1; /* the connections free the BIOs; the pointers stay for shuttling */
    SSL_set_connect_state(cli);
    SSL_set_accept_state(srv);
    for (i = 0; i < 20 && !(cdone && sdone); i++) {
        if (!cdone && (r = step(cli)) != 0) {
            if (r < 0) {
                fail(test, "client handshake failed");
                goto done;
            }
            cdone = 1;
        }
        if (!shuttle(c_out, s_in)) {
            fail(test, "moving client records failed");
            goto done;
        }
        if (!sdone && (r = step(srv)) != 0) {
            if (r < 0) {
                fail(test, "server handshake failed");
                goto done;
            }
            sdone = 1;
        }
        if (!shuttle(s_out, c_in)) {
            fail(test, "moving server records failed");
            goto done;
        }
    }
    if (!(cdone && sdone)) {
        fail(test, "the handshake did not finish in 20 rounds");
        goto done;
    }
    if (SSL_version(cli) != TLS1_3_VERSION || SSL_version(srv) != TLS1_3_VERSION) {
        fail(test, "expected TLS 1.3, got %s", SSL_get_version(cli));
        goto done;
    }
    if (SSL_get_verify_result(cli) != X509_V_OK || SSL_get0_peer_certificate(cli) == NULL) {
        fail(test, "expected the server's certificate to verify, got %s",
             X509_verify_cert_error_string(SSL_get_verify_result(cli)));
        goto done;
    }
    if (!transfer(cli, c_out, srv, s_in, "ping from the client")
        || !transfer(srv, s_out, cli, c_in, "pong from the server")) {
        fail(test, "application data did not arrive intact both ways");
        goto done;
    }
#if OPENSSL_VERSION_NUMBER >= 0x30300000L
    group = SSL_get0_group_name(cli);
#endif
    snprintf(what, sizeof(what), "%s, %s%s%s, server certificate verified for " TLS_NAME ", data both ways",
             SSL_get_version(cli), SSL_get_cipher_name(cli), group && *group ? ", group " : "", group ? group : "");
    pass(test, what);
done:
    if (!owned) {
        BIO_free(c_in);
        BIO_free(c_out);
        BIO_free(s_in);
        BIO_free(s_out);
    }
    SSL_free(cli);
    SSL_free(srv);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
    X509_free(cert);
    EVP_PKEY_free(key);
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: smoke (no arguments)\n");
        return 2;
    }
    if (OPENSSL_init_ssl(0, NULL) != 1) {
        fprintf(stderr, "smoke: OPENSSL_init_ssl failed\n");
        ERR_print_errors_fp(stderr);
        return 1;
    }
    printf("version\t%s\n", OpenSSL_version(OPENSSL_VERSION));
    printf("compiler\t%s\n", OpenSSL_version(OPENSSL_CFLAGS));
    printf("platform\t%s\n", OpenSSL_version(OPENSSL_PLATFORM));
    digests();
    hmacs();
    aes_gcm();
    ed25519();
    x25519s();
    mlkem();
    mldsa();
    tls13();
    printf("result\t%d\t%d\t%d\n", passed, failed, skipped);
    return failed == 0 ? 0 : 1;
}
