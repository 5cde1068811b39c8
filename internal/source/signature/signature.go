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
//     primary key or a subkey of a pinned key, one of package keys or one
//     a recipe pins beside them (its release_keys, Verifier.Extra), AND
//     that primary key's fingerprint is in the recipe's allowed list.
//     Anything else is ErrUnknownSigner, naming the issuer's key id and
//     where OpenSSL publishes its keys (PublishedAt).
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
//
// A recipe may pin a file of a key osslbuild pins too (a copy carrying a
// newer self-signature that extends its expiry, say). Each file is judged
// on its own, osslbuild's first, then the recipe's in its order, and the
// first under which the key was valid when it signed is the one the Result
// names (Result.Key: its fingerprint, origin, path and sha256, what a
// manifest records); a revocation in any file of the key counts in all, so
// a copy cannot hide one.
package signature

import (
	"bytes"
	"cmp"
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

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
	Key        Key       // the key file that verified it (without its bytes)
}

// Verifier holds the sources Verify uses; the zero value uses the keys pinned
// in package keys and the wall clock. Tests swap the fields.
type Verifier struct {
	Armored      func(fpr string) ([]byte, error) // pinned armored key for a primary fingerprint
	Fingerprints func() []string                  // all pinned primary fingerprints
	// Extra are keys pinned beside osslbuild's, a recipe's release_keys
	// (each checked to hold its primary fingerprint, see NewKey).
	Extra []Key
	Now   func() time.Time
	Skew  time.Duration // 0 means DefaultSkew
}

// Verify checks armoredSig over tarball with v's keys and clock, accepting
// only signers whose primary fingerprint is in allowed. See the package doc.
func (v Verifier) Verify(ctx context.Context, tarball io.Reader, armoredSig []byte, allowed []string) (Result, error) {
	if v.Armored == nil {
		v.Armored = keys.Armored
	}
	if v.Fingerprints == nil {
		v.Fingerprints = keys.Fingerprints
	}
	if v.Now == nil {
		v.Now = time.Now
	}
	v.Skew = cmp.Or(v.Skew, DefaultSkew)
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
	all, err := v.keyFiles()
	if err != nil {
		return Result{}, err
	}
	ours, theirs := map[string]bool{}, map[string]bool{}
	for _, c := range all {
		if c.key.Origin == OriginOsslbuild {
			ours[c.key.Fingerprint] = true
		} else {
			theirs[c.key.Fingerprint] = true
		}
	}
	for a := range allowedSet {
		if !ours[a] && !theirs[a] {
			return Result{}, fmt.Errorf("%w: the recipe allows key %s, which is pinned neither in osslbuild's keys/ (%s) nor among the recipe's release_keys (%s)",
				ErrPinnedKey, a, list(ours), list(theirs))
		}
	}
	// The files that hold the issuer, as primary or subkey, in order
	// (osslbuild's first); of those, the ones whose primary is allowed and
	// that hold the same signing key as the first.
	var holding, usable []keyFile
	for _, c := range all {
		if pk, _ := c.k.issuerKey(sig); pk != nil {
			holding = append(holding, c)
			if allowedSet[c.key.Fingerprint] {
				usable = append(usable, c)
			}
		}
	}
	if len(holding) == 0 {
		return Result{}, fmt.Errorf("%w: signature made by %s, which no pinned key holds, as its primary key or a subkey (osslbuild's keys/: %s; the recipe's release_keys: %s); OpenSSL publishes its release keys at %s: check the signing key's primary fingerprint there, then add its file to the recipe's release_keys with that fingerprint",
			ErrUnknownSigner, issuer, list(ours), list(theirs), PublishedAt)
	}
	if len(usable) == 0 {
		pk, _ := holding[0].k.issuerKey(sig)
		return Result{}, fmt.Errorf("%w: signature issued by key %s (primary %s), which is pinned but not allowed by the recipe (allowed: %s)",
			ErrUnknownSigner, fprString(pk.Fingerprint), holding[0].key.Fingerprint, strings.Join(sortedKeys(allowedSet), ", "))
	}
	signing, sub := usable[0].k.issuerKey(sig)
	primaryFpr := usable[0].key.Fingerprint
	signingFpr := fprString(signing.Fingerprint)
	usable = slices.DeleteFunc(usable, func(c keyFile) bool {
		pk, _ := c.k.issuerKey(sig)
		return !bytes.Equal(pk.Fingerprint, signing.Fingerprint)
	})
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

	// Each file of the key judged on its own, a revocation in any of them
	// counting in all: the first file under which the key was valid when
	// it signed is the one that verified the release.
	var errs []error
	for _, c := range usable {
		k := c.k.withRevocationsOf(all)
		_, s := k.issuerKey(sig)
		if err := k.validAt(sig.CreationTime, s); err != nil {
			if len(usable) > 1 {
				err = fmt.Errorf("%s %s: %w", c.key.Origin, c.key.Path, err)
			}
			errs = append(errs, err)
			continue
		}
		key := c.key
		key.Armored = nil
		return Result{
			Signer:     primaryFpr,
			SigningKey: signingFpr,
			Created:    sig.CreationTime.UTC(),
			Hash:       sig.Hash.String(),
			Key:        key,
		}, nil
	}
	return Result{}, fmt.Errorf("signature by %s made %s: %w", who, utc(sig.CreationTime), errors.Join(errs...))
}

// keyFile is one pinned key file, parsed.
type keyFile struct {
	key Key
	k   *pinnedKey
}

// keyFiles parses osslbuild's pinned keys, then the extra ones, in order.
func (v Verifier) keyFiles() ([]keyFile, error) {
	var out []keyFile
	for _, f := range v.Fingerprints() {
		f = normFpr(f)
		armored, err := v.Armored(f)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPinnedKey, err)
		}
		k, err := parseKey(f, armored)
		if err != nil {
			return nil, err
		}
		out = append(out, keyFile{Key{Fingerprint: f, Origin: OriginOsslbuild, Path: keys.Path(f), SHA256: digest(armored), Armored: armored}, k})
	}
	for _, x := range v.Extra {
		x.Fingerprint = normFpr(x.Fingerprint)
		k, err := parseKey(x.Fingerprint, x.Armored)
		if err != nil {
			return nil, fmt.Errorf("%s key %s: %w", x.Origin, x.Path, err)
		}
		out = append(out, keyFile{x, k})
	}
	return out, nil
}

// list names the fingerprints of set for messages, "none" if empty.
func list(set map[string]bool) string {
	if len(set) == 0 {
		return "none"
	}
	return strings.Join(sortedKeys(set), ", ")
}

// parseSignature decodes an armored detached signature holding exactly one
// signature packet.
func parseSignature(armoredSig []byte) (*packet.Signature, error) {
	var sig *packet.Signature
	for p, err := range packets(armoredSig, "PGP SIGNATURE") {
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
