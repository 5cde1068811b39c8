// Package signature verifies OpenSSL release tarballs against their detached
// OpenPGP signatures (.asc), using only the public keys pinned in package keys.
//
// # Policy
//
// A signature is accepted only when all of these hold:
//
//  1. The .asc holds exactly one signature packet, a binary-document
//     signature (type 0x00) with a hash of the SHA-2 family or stronger.
//  2. Its issuer (issuer fingerprint subpacket, else issuer key id) is the
//     primary key or a subkey of a key pinned in package keys AND that
//     primary key's fingerprint is in the recipe's allowed list. Anything else
//     is ErrUnknownSigner, naming the issuer.
//  3. The signature verifies cryptographically over the streamed tarball
//     against that pinned (sub)key (else ErrBadSignature).
//  4. The key is judged at the signature's creation time T, not at "now":
//     the primary key (and, for a subkey, the subkey) was created at or
//     before T; among the pinned file's verified self-signatures of the
//     primary key (direct-key and user-ID certifications) and, for a subkey,
//     its verified binding signatures, the newest one made at or before T is
//     the one in force, and the key expiry it states must lie after T
//     (else ErrKeyExpired). A primary key that signs must carry the sign
//     flag (or no flags at all, as old keys do); a subkey binding must carry
//     the sign flag, which also makes go-crypto insist on the subkey's
//     cross-signature (else ErrKeyInvalid).
//  5. No verified revocation of the primary key, or of the signing subkey,
//     exists in the pinned file, whatever its date (else ErrRevoked).
//  6. T is not later than now plus a small clock skew (else
//     ErrFutureSignature), and the signature itself has not expired (else
//     ErrSignatureExpired).
//
// Why judge at T: OpenSSL lets its release keys expire and extends them with
// fresh self-signatures; a release signed while the key was valid stays good
// after the key expires (3.5.7 was signed by BA54…81EF on 2026-06-09, when
// its self-signature of 2026-03-16 made it valid to 2026-06-13; the key's
// last extension ran out on 2026-09-08). go-crypto's own checks use "now"
// and the newest self-signature, which refuses such releases, so this
// package walks the packets itself.
//
// Why any revocation refuses, whatever its date: the creation time of a
// signature is asserted by whoever holds the key, so a thief can back-date
// signatures to before a revocation; a date-based rule would trust exactly
// the signatures a compromise revocation is meant to kill. Pinned keys only
// change by a reviewed commit, so if OpenSSL ever retires a key with a
// "superseded" revocation while old releases must still be built, that is a
// decision to take explicitly in keys/, not something to infer here.
//
// Signatures in the pinned files that do not verify (third-party
// certifications, corrupt packets) are ignored: they can neither bind nor
// revoke anything.
package signature

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/keys"
)

// Sentinel errors; every error Verify returns wraps one of them (or a
// context error), so callers can test with errors.Is.
var (
	ErrMalformed        = errors.New("malformed signature")
	ErrUnsupported      = errors.New("unsupported signature")
	ErrUnknownSigner    = errors.New("unknown signer")
	ErrBadSignature     = errors.New("bad signature")
	ErrKeyExpired       = errors.New("key expired at signing time")
	ErrKeyInvalid       = errors.New("key not valid for signing at signing time")
	ErrRevoked          = errors.New("key revoked")
	ErrFutureSignature  = errors.New("signature made in the future")
	ErrSignatureExpired = errors.New("signature expired")
	ErrPinnedKey        = errors.New("pinned key unusable")
)

// DefaultSkew is how far in the future a signature's creation time may lie
// before it is refused; it absorbs clock differences between signer and us.
const DefaultSkew = 10 * time.Minute

// Result describes an accepted signature.
type Result struct {
	Signer     string    // primary key fingerprint (upper-case hex), as pinned
	SigningKey string    // fingerprint of the key that made the signature: the primary or a subkey
	Created    time.Time // the signature's creation time (UTC)
	Hash       string    // hash algorithm of the signature, e.g. "SHA-512"
}

// Verifier holds the sources Verify uses; the zero value uses the keys pinned
// in package keys and the wall clock. Tests swap the fields.
type Verifier struct {
	Armored      func(fpr string) ([]byte, error) // pinned armored key for a primary fingerprint
	Fingerprints func() []string                  // all pinned primary fingerprints
	Now          func() time.Time
	Skew         time.Duration // 0 means DefaultSkew
}

func (v Verifier) armored() func(string) ([]byte, error) {
	if v.Armored == nil {
		return keys.Armored
	}
	return v.Armored
}

// Verify checks armoredSig over tarball with the pinned keys, accepting only
// signers whose primary fingerprint is in allowed. See the package doc.
func Verify(ctx context.Context, tarball io.Reader, armoredSig []byte, allowed []string) (Result, error) {
	return Verifier{}.Verify(ctx, tarball, armoredSig, allowed)
}

// Verify is the package-level Verify with v's key source and clock.
func (v Verifier) Verify(ctx context.Context, tarball io.Reader, armoredSig []byte, allowed []string) (Result, error) {
	v.Armored = v.armored()
	if v.Fingerprints == nil {
		v.Fingerprints = keys.Fingerprints
	}
	if v.Now == nil {
		v.Now = time.Now
	}
	if v.Skew == 0 {
		v.Skew = DefaultSkew
	}
	if len(allowed) == 0 {
		return Result{}, fmt.Errorf("%w: the recipe allows no keys", ErrUnknownSigner)
	}

	sig, err := parseSignature(armoredSig)
	if err != nil {
		return Result{}, err
	}
	issuer := issuerString(sig)

	// Load every pinned key, not just the allowed ones, so that a signature
	// by a pinned-but-not-allowed key can be reported as such.
	allowedSet := map[string]bool{}
	for _, a := range allowed {
		allowedSet[normFpr(a)] = true
	}
	pinned := map[string]bool{}
	var found *pinnedKey
	var signing *packet.PublicKey
	var sub *subkey
	for _, f := range v.Fingerprints() {
		f = normFpr(f)
		pinned[f] = true
		armored, err := v.Armored(f)
		if err != nil {
			return Result{}, fmt.Errorf("%w: %w", ErrPinnedKey, err)
		}
		k, err := parseKey(f, armored)
		if err != nil {
			return Result{}, err
		}
		if pk, s := k.issuerKey(sig); pk != nil && found == nil {
			found, signing, sub = k, pk, s
		}
	}
	for a := range allowedSet {
		if !pinned[a] {
			return Result{}, fmt.Errorf("%w: the recipe allows key %s, which is not pinned in keys/ (pinned: %s)",
				ErrPinnedKey, a, strings.Join(sortedKeys(pinned), ", "))
		}
	}
	if found == nil {
		return Result{}, fmt.Errorf("%w: signature issued by %s, which is not a pinned key (pinned: %s)",
			ErrUnknownSigner, issuer, strings.Join(sortedKeys(pinned), ", "))
	}
	primaryFpr := fprString(found.primary.Fingerprint)
	signingFpr := fprString(signing.Fingerprint)
	if !allowedSet[primaryFpr] {
		return Result{}, fmt.Errorf("%w: signature issued by key %s (primary %s), which is pinned but not allowed by the recipe (allowed: %s)",
			ErrUnknownSigner, signingFpr, primaryFpr, strings.Join(sortedKeys(allowedSet), ", "))
	}
	who := fmt.Sprintf("key %s", signingFpr)
	if sub != nil {
		who = fmt.Sprintf("subkey %s of %s", signingFpr, primaryFpr)
	}

	// Refuse things that need no hashing before reading 55 MB.
	now := v.Now()
	if sig.CreationTime.After(now.Add(v.Skew)) {
		return Result{}, fmt.Errorf("%w: signature by %s claims creation at %s, after now (%s)",
			ErrFutureSignature, who, utc(sig.CreationTime), utc(now))
	}
	if sig.SigLifetimeSecs != nil && *sig.SigLifetimeSecs != 0 && sig.SigExpired(now) {
		return Result{}, fmt.Errorf("%w: signature by %s made %s expired after %ds",
			ErrSignatureExpired, who, utc(sig.CreationTime), *sig.SigLifetimeSecs)
	}

	h, err := sig.PrepareVerify()
	if err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	if _, err := io.Copy(h, ctxio.Reader(ctx, tarball)); err != nil {
		return Result{}, fmt.Errorf("reading signed data: %w", err)
	}
	if err := signing.VerifySignature(h, sig); err != nil {
		return Result{}, fmt.Errorf("%w: signature by %s made %s does not match the data: %w",
			ErrBadSignature, who, utc(sig.CreationTime), err)
	}

	if err := found.validAt(sig.CreationTime, sub); err != nil {
		return Result{}, fmt.Errorf("signature by %s made %s: %w", who, utc(sig.CreationTime), err)
	}
	return Result{
		Signer:     primaryFpr,
		SigningKey: signingFpr,
		Created:    sig.CreationTime.UTC(),
		Hash:       sig.Hash.String(),
	}, nil
}

// parseSignature decodes an armored detached signature holding exactly one
// signature packet.
func parseSignature(armoredSig []byte) (*packet.Signature, error) {
	block, err := armor.Decode(bytes.NewReader(armoredSig))
	if err != nil {
		return nil, fmt.Errorf("%w: armor: %w", ErrMalformed, err)
	}
	if block.Type != "PGP SIGNATURE" {
		return nil, fmt.Errorf("%w: armor type %q, want PGP SIGNATURE", ErrMalformed, block.Type)
	}
	r := packet.NewReader(block.Body)
	var sig *packet.Signature
	for {
		p, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		s, ok := p.(*packet.Signature)
		if !ok {
			return nil, fmt.Errorf("%w: unexpected %T packet in detached signature", ErrMalformed, p)
		}
		if sig != nil {
			// One is all OpenSSL publishes; several would need a policy
			// (any? all?) that nobody has asked for yet.
			return nil, fmt.Errorf("%w: more than one signature packet", ErrUnsupported)
		}
		sig = s
	}
	if sig == nil {
		return nil, fmt.Errorf("%w: no signature packet", ErrMalformed)
	}
	if sig.SigType != packet.SigTypeBinary {
		return nil, fmt.Errorf("%w: signature type 0x%02x, want binary document (0x00)", ErrUnsupported, uint8(sig.SigType))
	}
	switch sig.Hash {
	case crypto.SHA256, crypto.SHA384, crypto.SHA512, crypto.SHA3_256, crypto.SHA3_512:
	default:
		// SHA-1 and older are collision-prone: a signed tarball could have
		// an evil twin.
		return nil, fmt.Errorf("%w: hash algorithm %v not accepted", ErrUnsupported, sig.Hash)
	}
	for _, n := range sig.Notations {
		if n.IsCritical {
			return nil, fmt.Errorf("%w: unknown critical notation %q", ErrUnsupported, n.Name)
		}
	}
	if sig.IssuerKeyId == nil && len(sig.IssuerFingerprint) == 0 {
		return nil, fmt.Errorf("%w: signature names no issuer", ErrMalformed)
	}
	return sig, nil
}

// issuerString names a signature's issuer for error messages.
func issuerString(sig *packet.Signature) string {
	var parts []string
	if len(sig.IssuerFingerprint) > 0 {
		parts = append(parts, "fingerprint "+fprString(sig.IssuerFingerprint))
	}
	if sig.IssuerKeyId != nil {
		parts = append(parts, fmt.Sprintf("key id %016X", *sig.IssuerKeyId))
	}
	return strings.Join(parts, ", ")
}

func fprString(b []byte) string { return strings.ToUpper(fmt.Sprintf("%x", b)) }

func normFpr(s string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
}

func utc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
