package signature

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/keys"
)

const (
	current    = "B146647E45A7B33947AB226B2A2C87D161692D40"
	currentSub = "C46ED3F2CBEFDA1FDAADA44264ED7B1DCCE71CB2"
	retired    = "BA5473A2B0587B07FB27CF2D216094DFD0CB81EF"
)

// real opens a real release fixture: the tarball as a stream, and its .asc.
func real(t *testing.T, version string) (*os.File, []byte) {
	t.Helper()
	r := testfixture.Get(t, version)
	sig, err := os.ReadFile(r.Signature)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(r.Tarball)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, sig
}

func TestRealReleases(t *testing.T) {
	for _, tc := range []struct {
		version, signer, signing, created string
	}{
		{"4.0.2", current, currentSub, "2026-08-25"},
		// Signed by the retired key, expired today but valid when it signed.
		{"3.5.7", retired, retired, "2026-06-09"},
		{"3.0.20", retired, retired, "2026-04-07"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			f, sig := real(t, tc.version)
			res, err := Verifier{}.Verify(context.Background(), f, sig, []string{current, retired})
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if res.Signer != tc.signer || res.SigningKey != tc.signing {
				t.Errorf("signer %s via %s, want %s via %s", res.Signer, res.SigningKey, tc.signer, tc.signing)
			}
			if got := res.Created.Format(time.DateOnly); got != tc.created {
				t.Errorf("created %s, want %s", got, tc.created)
			}
			if res.Hash != "SHA-512" {
				t.Errorf("hash %s", res.Hash)
			}
		})
	}
}

// flipReader streams r with the byte at offset off inverted.
type flipReader struct {
	r   io.Reader
	pos int64
	off int64
}

func (f *flipReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if f.off >= f.pos && f.off < f.pos+int64(n) {
		p[f.off-f.pos] ^= 0xff
	}
	f.pos += int64(n)
	return n, err
}

func TestTamperedTarball(t *testing.T) {
	f, sig := real(t, "4.0.2")
	_, err := Verifier{}.Verify(context.Background(), &flipReader{r: f, off: 30_000_000}, sig, []string{current})
	if !errors.Is(err, ErrBadSignature) {
		t.Fatalf("want ErrBadSignature, got %v", err)
	}
	if !strings.Contains(err.Error(), currentSub) {
		t.Errorf("error does not name the signing key: %v", err)
	}
}

func TestPinnedButNotAllowed(t *testing.T) {
	f, sig := real(t, "4.0.2")
	_, err := Verifier{}.Verify(context.Background(), f, sig, []string{retired})
	if !errors.Is(err, ErrUnknownSigner) {
		t.Fatalf("want ErrUnknownSigner, got %v", err)
	}
	for _, want := range []string{currentSub, current, "not allowed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func TestAllowedButNotPinned(t *testing.T) {
	f, sig := real(t, "4.0.2")
	_, err := Verifier{}.Verify(context.Background(), f, sig, []string{current, "0123456789ABCDEF0123456789ABCDEF01234567"})
	if !errors.Is(err, ErrPinnedKey) {
		t.Fatalf("want ErrPinnedKey, got %v", err)
	}
}

func TestCancelled(t *testing.T) {
	f, sig := real(t, "4.0.2")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Verifier{}).Verify(ctx, f, sig, []string{current}); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

func TestNotPinnedSigner(t *testing.T) {
	r := testfixture.Get(t, "4.0.2")
	e := newEntity(t, time.Now().Add(-time.Hour), 0)
	f, err := os.Open(r.Tarball)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sig := signAt(t, e.PrivateKey, f, time.Now())
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	_, err = Verifier{}.Verify(context.Background(), f, sig, []string{current, retired})
	if !errors.Is(err, ErrUnknownSigner) {
		t.Fatalf("want ErrUnknownSigner, got %v", err)
	}
	if !strings.Contains(err.Error(), e.PrimaryKey.KeyIdString()) {
		t.Errorf("error does not name key id %s: %v", e.PrimaryKey.KeyIdString(), err)
	}
}

func TestMalformed(t *testing.T) {
	for name, sig := range map[string]string{
		"not armored": "hello",
		"public key":  "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nxA==\n-----END PGP PUBLIC KEY BLOCK-----\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Verifier{}.Verify(context.Background(), strings.NewReader("x"), []byte(sig), []string{current})
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("want ErrMalformed, got %v", err)
			}
		})
	}
}

// --- generated keys ---

var (
	day  = 24 * time.Hour
	t0   = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	data = []byte("openssl-9.9.9.tar.gz stand-in\n")
)

func cfgAt(at time.Time, lifetime time.Duration) *packet.Config {
	return &packet.Config{
		Algorithm:       packet.PubKeyAlgoEdDSA, // fast to generate
		Time:            func() time.Time { return at },
		KeyLifetimeSecs: uint32(lifetime / time.Second),
	}
}

func newEntity(t *testing.T, created time.Time, lifetime time.Duration) *openpgp.Entity {
	t.Helper()
	e, err := openpgp.NewEntity("Test", "", "test@example.invalid", cfgAt(created, lifetime))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// signAt makes a detached signature by priv over r dated at, bypassing
// go-crypto's own validity checks so that invalid cases can be built.
func signAt(t *testing.T, priv *packet.PrivateKey, r io.Reader, at time.Time) []byte {
	t.Helper()
	sig := &packet.Signature{
		SigType:      packet.SigTypeBinary,
		PubKeyAlgo:   priv.PubKeyAlgo,
		Hash:         crypto.SHA256,
		CreationTime: at,
		IssuerKeyId:  &priv.KeyId,
	}
	cfg := cfgAt(at, 0)
	h, err := sig.PrepareSign(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(h, r); err != nil {
		t.Fatal(err)
	}
	if err := sig.Sign(h, priv, cfg); err != nil {
		t.Fatal(err)
	}
	return armored(t, openpgp.SignatureType, sig.Serialize)
}

// armored is what serialize writes, armored as a blockType block.
func armored(t *testing.T, blockType string, serialize func(io.Writer) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, blockType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return buf.Bytes()
}

// pinning returns a Verifier whose pinned keys are es.
func pinning(t *testing.T, es ...*openpgp.Entity) Verifier {
	t.Helper()
	m := map[string][]byte{}
	var fprs []string
	for _, e := range es {
		f := fprString(e.PrimaryKey.Fingerprint)
		m[f] = armored(t, openpgp.PublicKeyType, e.Serialize)
		fprs = append(fprs, f)
	}
	return Verifier{
		Armored:      func(f string) ([]byte, error) { return m[f], nil },
		Fingerprints: func() []string { return fprs },
		Now:          func() time.Time { return t0.Add(365 * day) },
	}
}

func fpr(e *openpgp.Entity) string { return fprString(e.PrimaryKey.Fingerprint) }

func TestGenerated(t *testing.T) {
	expiring := newEntity(t, t0, 30*day)

	withSub := newEntity(t, t0, 0)
	if err := withSub.AddSigningSubkey(cfgAt(t0.Add(day), 10*day)); err != nil {
		t.Fatal(err)
	}
	signSub := withSub.Subkeys[len(withSub.Subkeys)-1]

	revoked := newEntity(t, t0, 0)
	// Revoked long after the signature below: still refused.
	if err := revoked.RevokeKey(packet.KeyRetired, "retired", cfgAt(t0.Add(200*day), 0)); err != nil {
		t.Fatal(err)
	}

	subRevoked := newEntity(t, t0, 0)
	if err := subRevoked.AddSigningSubkey(cfgAt(t0, 0)); err != nil {
		t.Fatal(err)
	}
	rsk := &subRevoked.Subkeys[len(subRevoked.Subkeys)-1]
	if err := subRevoked.RevokeSubkey(rsk, packet.KeyCompromised, "", cfgAt(t0.Add(100*day), 0)); err != nil {
		t.Fatal(err)
	}

	v := pinning(t, expiring, withSub, revoked, subRevoked)
	for _, tc := range []struct {
		name    string
		priv    *packet.PrivateKey
		at      time.Time
		allowed string
		want    error
		naming  string
	}{
		// Expired now, valid when it signed: accepted (the 3.5.7 case).
		{"expired key signed before expiry", expiring.PrivateKey, t0.Add(10 * day), fpr(expiring), nil, ""},
		{"expired at signing time", expiring.PrivateKey, t0.Add(40 * day), fpr(expiring), ErrKeyExpired, fpr(expiring)},
		{"signed before key creation", expiring.PrivateKey, t0.Add(-day), fpr(expiring), ErrKeyInvalid, fpr(expiring)},
		{"subkey valid", signSub.PrivateKey, t0.Add(5 * day), fpr(withSub), nil, ""},
		{"subkey expired at signing time", signSub.PrivateKey, t0.Add(20 * day), fpr(withSub), ErrKeyExpired, fprString(signSub.PublicKey.Fingerprint)},
		{"subkey signed before its creation", signSub.PrivateKey, t0.Add(time.Hour), fpr(withSub), ErrKeyInvalid, fprString(signSub.PublicKey.Fingerprint)},
		{"revoked later", revoked.PrivateKey, t0.Add(day), fpr(revoked), ErrRevoked, fpr(revoked)},
		{"subkey revoked", rsk.PrivateKey, t0.Add(day), fpr(subRevoked), ErrRevoked, fprString(rsk.PublicKey.Fingerprint)},
		{"future", withSub.PrivateKey, t0.Add(366 * day), fpr(withSub), ErrFutureSignature, fpr(withSub)},
		{"not allowed", withSub.PrivateKey, t0.Add(day), fpr(expiring), ErrUnknownSigner, fpr(withSub)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sig := signAt(t, tc.priv, bytes.NewReader(data), tc.at)
			res, err := v.Verify(context.Background(), bytes.NewReader(data), sig, []string{tc.allowed})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if res.Signer != tc.allowed || !res.Created.Equal(tc.at) {
					t.Errorf("result %+v", res)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
			if !strings.Contains(err.Error(), tc.naming) {
				t.Errorf("error does not name %s: %v", tc.naming, err)
			}
		})
	}
}

// The primary of OpenSSL's current key is certify-only: a signature that
// claims to come from it must not be accepted even if it verified.
func TestPrimaryNotSigningCapable(t *testing.T) {
	e := newEntity(t, t0, 0)
	for _, id := range e.Identities {
		// Re-sign the user ID with certify-only flags.
		id.SelfSignature.FlagSign = false
		if err := id.SelfSignature.SignUserId(id.UserId.Id, e.PrimaryKey, e.PrivateKey, cfgAt(t0, 0)); err != nil {
			t.Fatal(err)
		}
		id.Signatures = []*packet.Signature{id.SelfSignature}
	}
	v := pinning(t, e)
	sig := signAt(t, e.PrivateKey, bytes.NewReader(data), t0.Add(day))
	_, err := v.Verify(context.Background(), bytes.NewReader(data), sig, []string{fpr(e)})
	if !errors.Is(err, ErrKeyInvalid) {
		t.Fatalf("want ErrKeyInvalid, got %v", err)
	}
}

// The pinned keys judged at chosen instants: which self-signature is in force
// decides, not the newest one.
func TestPinnedKeyValidity(t *testing.T) {
	load := func(f string) *pinnedKey {
		b, err := keys.Armored(f)
		if err != nil {
			t.Fatal(err)
		}
		k, err := parseKey(f, b)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	ret, cur := load(retired), load(current)
	if len(cur.subkeys) != 1 || fprString(cur.subkeys[0].pub.Fingerprint) != currentSub {
		t.Fatalf("current key's subkeys: %+v", cur.subkeys)
	}
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, tc := range []struct {
		key  *pinnedKey
		sub  bool
		at   string
		want error
	}{
		{ret, false, "2024-04-08T12:40:00Z", nil},
		{ret, false, "2026-04-07T12:50:09Z", nil}, // 3.0.20; self-signature of 2026-03-16 in force
		{ret, false, "2026-06-12T00:00:00Z", nil}, // self-signature of 2026-06-10 in force
		{ret, false, "2026-09-09T00:00:00Z", ErrKeyExpired},
		{ret, false, "2024-01-01T00:00:00Z", ErrKeyInvalid}, // before the key existed
		{cur, false, "2026-08-25T12:00:00Z", ErrKeyInvalid}, // primary is certify-only
		{cur, true, "2026-08-25T12:00:00Z", nil},
		{cur, true, "2027-05-27T00:00:00Z", ErrKeyExpired}, // subkey bound for one year
	} {
		var sub *subkey
		if tc.sub {
			sub = tc.key.subkeys[0]
		}
		err := tc.key.validAt(at(tc.at), sub)
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("%s sub=%v at %s: got %v, want %v", fprString(tc.key.primary.Fingerprint), tc.sub, tc.at, err, tc.want)
		}
	}
}

// --- keys a recipe pins beside osslbuild's ---

// recipeKey is e's public key as a recipe pins it: a file at path of
// origin recipe, checked to hold e's primary key.
func recipeKey(t *testing.T, e *openpgp.Entity, path string) Key {
	t.Helper()
	k, err := NewKey(fpr(e), OriginRecipe, path, armored(t, openpgp.PublicKeyType, e.Serialize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// withSigningSubkey is a key made at t0 whose signing subkey (made a day
// later) signs, as OpenSSL's current key's does.
func withSigningSubkey(t *testing.T) (*openpgp.Entity, *packet.PrivateKey) {
	t.Helper()
	e := newEntity(t, t0, 0)
	if err := e.AddSigningSubkey(cfgAt(t0.Add(day), 0)); err != nil {
		t.Fatal(err)
	}
	return e, e.Subkeys[len(e.Subkeys)-1].PrivateKey
}

// TestRecipeKeyVerifies: a release signed by the subkey of a key only the
// recipe pins verifies beside osslbuild's keys, and the result names the
// file that verified it (fingerprint, origin, path, the file's sha256).
func TestRecipeKeyVerifies(t *testing.T) {
	theirs, sub := withSigningSubkey(t)
	ours := newEntity(t, t0, 0)
	v := pinning(t, ours)
	v.Extra = []Key{recipeKey(t, theirs, "keys/openssl-next.asc")}
	sig := signAt(t, sub, bytes.NewReader(data), t0.Add(2*day))
	res, err := v.Verify(context.Background(), bytes.NewReader(data), sig, []string{fpr(ours), fpr(theirs)})
	if err != nil {
		t.Fatal(err)
	}
	want := Key{Fingerprint: fpr(theirs), Origin: OriginRecipe, Path: "keys/openssl-next.asc", SHA256: v.Extra[0].SHA256}
	if res.Signer != fpr(theirs) || res.SigningKey != fprString(sub.PublicKey.Fingerprint) || !reflect.DeepEqual(res.Key, want) {
		t.Errorf("result %+v, want signer %s via subkey %s, key %+v", res, fpr(theirs), fprString(sub.PublicKey.Fingerprint), want)
	}
	// osslbuild's own key names its file in keys/.
	sig = signAt(t, ours.PrivateKey, bytes.NewReader(data), t0.Add(2*day))
	res, err = v.Verify(context.Background(), bytes.NewReader(data), sig, []string{fpr(ours), fpr(theirs)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Key.Origin != OriginOsslbuild || res.Key.Path != "keys/openssl-"+fpr(ours)+".asc" || res.Key.Fingerprint != fpr(ours) || len(res.Key.SHA256) != 64 {
		t.Errorf("osslbuild's key: %+v", res.Key)
	}
}

// TestRealReleaseRecipeKeyNotNeeded: the real 4.0.2 verifies with osslbuild's
// key when a recipe pins another key beside it, and the result names
// keys/ and the pinned file's digest.
func TestRealReleaseRecipeKeyNotNeeded(t *testing.T) {
	theirs, _ := withSigningSubkey(t)
	f, sig := real(t, "4.0.2")
	v := Verifier{Extra: []Key{recipeKey(t, theirs, "keys/openssl-next.asc")}}
	res, err := v.Verify(context.Background(), f, sig, []string{current, fpr(theirs)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := keys.Armored(current)
	if res.Key.Origin != OriginOsslbuild || res.Key.Path != "keys/openssl-"+current+".asc" || res.Key.SHA256 != digest(b) {
		t.Errorf("key %+v", res.Key)
	}
}

// TestUnknownSignerNamesTheKey: a signature by the subkey of a key neither
// osslbuild nor the recipe pins is refused naming the subkey's id (what a
// signature names) and where OpenSSL publishes its keys, and the keys
// that were pinned.
func TestUnknownSignerNamesTheKey(t *testing.T) {
	stranger, sub := withSigningSubkey(t)
	theirs, _ := withSigningSubkey(t)
	ours := newEntity(t, t0, 0)
	v := pinning(t, ours)
	v.Extra = []Key{recipeKey(t, theirs, "keys/openssl-next.asc")}
	sig := signAt(t, sub, bytes.NewReader(data), t0.Add(2*day))
	_, err := v.Verify(context.Background(), bytes.NewReader(data), sig, []string{fpr(ours), fpr(theirs)})
	if !errors.Is(err, ErrUnknownSigner) {
		t.Fatalf("want ErrUnknownSigner, got %v", err)
	}
	for _, want := range []string{"key id " + sub.PublicKey.KeyIdString(), PublishedAt, fpr(ours), fpr(theirs), "release_keys"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), fpr(stranger)) {
		t.Errorf("error names a primary fingerprint the signature does not give: %v", err)
	}
}

// TestNewKeyHoldsItsFingerprint: a file pinned under another key's
// fingerprint (a swapped file) is refused, naming the key it holds.
func TestNewKeyHoldsItsFingerprint(t *testing.T) {
	a, b := newEntity(t, t0, 0), newEntity(t, t0, 0)
	_, err := NewKey(fpr(a), OriginRecipe, "keys/a.asc", armored(t, openpgp.PublicKeyType, b.Serialize))
	if !errors.Is(err, ErrPinnedKey) || !strings.Contains(err.Error(), "holds key "+fpr(b)) {
		t.Errorf("a file of another key: %v", err)
	}
	if _, err := NewKey(fpr(a), OriginRecipe, "keys/a.asc", []byte("not a key")); !errors.Is(err, ErrPinnedKey) {
		t.Errorf("not a key: %v", err)
	}
	if _, err := NewKey(strings.ToLower(fpr(a)), OriginRecipe, "keys/a.asc", armored(t, openpgp.PublicKeyType, a.Serialize)); err != nil {
		t.Errorf("a lower-case fingerprint: %v", err)
	}
}

// extended is e's public key with a newer user-ID self-signature, made at
// at, stating lifetime (0: no expiry): what a key's owner publishes to
// extend it.
func extended(t *testing.T, e *openpgp.Entity, at time.Time, lifetime time.Duration) []byte {
	t.Helper()
	for _, id := range e.Identities {
		ns := *id.SelfSignature
		ns.CreationTime = at
		secs := uint32(lifetime / time.Second)
		ns.KeyLifetimeSecs = &secs
		if err := ns.SignUserId(id.UserId.Id, e.PrimaryKey, e.PrivateKey, cfgAt(at, lifetime)); err != nil {
			t.Fatal(err)
		}
		id.Signatures = append(id.Signatures, &ns)
	}
	return armored(t, openpgp.PublicKeyType, e.Serialize)
}

// TestTwoFilesOfOneKey: a recipe's copy of a key osslbuild pins, extended
// since, verifies a signature made after osslbuild's copy says the key
// expired, and is named as what verified it; a revocation in osslbuild's
// copy refuses the key whatever the recipe's copy says.
func TestTwoFilesOfOneKey(t *testing.T) {
	e := newEntity(t, t0, 30*day)
	old := armored(t, openpgp.PublicKeyType, e.Serialize)
	renewed := extended(t, e, t0.Add(20*day), 0)
	copyKey, err := NewKey(fpr(e), OriginRecipe, "keys/openssl-renewed.asc", renewed)
	if err != nil {
		t.Fatal(err)
	}
	v := Verifier{
		Armored:      func(string) ([]byte, error) { return old, nil },
		Fingerprints: func() []string { return []string{fpr(e)} },
		Extra:        []Key{copyKey},
		Now:          func() time.Time { return t0.Add(365 * day) },
	}
	allowed := []string{fpr(e)}
	// Within osslbuild's copy's lifetime: osslbuild's file verifies.
	res, err := v.Verify(context.Background(), bytes.NewReader(data), signAt(t, e.PrivateKey, bytes.NewReader(data), t0.Add(10*day)), allowed)
	if err != nil || res.Key.Origin != OriginOsslbuild {
		t.Errorf("signed within the old lifetime: %+v, %v; want osslbuild's file", res.Key, err)
	}
	// After it: only the recipe's copy makes the key valid then.
	res, err = v.Verify(context.Background(), bytes.NewReader(data), signAt(t, e.PrivateKey, bytes.NewReader(data), t0.Add(40*day)), allowed)
	if err != nil || !reflect.DeepEqual(res.Key, Key{Fingerprint: fpr(e), Origin: OriginRecipe, Path: "keys/openssl-renewed.asc", SHA256: copyKey.SHA256}) {
		t.Errorf("signed after osslbuild's copy expires: %+v, %v; want the recipe's copy", res.Key, err)
	}
	// Without the copy the same signature is refused, naming the expiry.
	plain := v
	plain.Extra = nil
	if _, err := plain.Verify(context.Background(), bytes.NewReader(data), signAt(t, e.PrivateKey, bytes.NewReader(data), t0.Add(40*day)), allowed); !errors.Is(err, ErrKeyExpired) {
		t.Errorf("without the recipe's copy: %v, want ErrKeyExpired", err)
	}
	// A revocation in one file counts in the other.
	if err := e.RevokeKey(packet.KeyCompromised, "", cfgAt(t0.Add(50*day), 0)); err != nil {
		t.Fatal(err)
	}
	revoked := armored(t, openpgp.PublicKeyType, e.Serialize)
	v.Armored = func(string) ([]byte, error) { return revoked, nil }
	_, err = v.Verify(context.Background(), bytes.NewReader(data), signAt(t, e.PrivateKey, bytes.NewReader(data), t0.Add(40*day)), allowed)
	if !errors.Is(err, ErrRevoked) || !strings.Contains(err.Error(), "keys/openssl-renewed.asc") {
		t.Errorf("revoked in osslbuild's file: %v; want ErrRevoked from the recipe's copy too", err)
	}
}
