package signature

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// Where a key comes from, as Result.Key and a manifest record it.
const (
	OriginOsslbuild = "osslbuild" // osslbuild's keys/, embedded in it: Path is keys/openssl-<fingerprint>.asc
	OriginRecipe    = "recipe"    // a recipe's release_keys: Path as the recipe writes it, relative to the recipe
)

// PublishedAt is where OpenSSL publishes its release keys, for a refusal
// of a signer no pinned key holds.
const PublishedAt = "https://openssl-library.org/source/ (the keyring pubkeys.asc there, and the fingerprints that page lists)"

// Key is one pinned OpenPGP key file: the primary fingerprint it is
// pinned under, where it comes from, its path there, the sha256 of its
// bytes and the bytes (armored). Fingerprint, origin, path and digest are
// what a manifest records of the key that verified a release: enough to
// find the same file again and to know it is the same.
type Key struct {
	Fingerprint string `json:"fingerprint"`
	Origin      string `json:"origin"`
	Path        string `json:"path"`
	SHA256      string `json:"sha256"`
	Armored     []byte `json:"-"`
}

// NewKey is the key file armored, read from path of origin, pinned under
// the primary fingerprint fpr: it must hold exactly that primary key
// (ErrPinnedKey otherwise, naming the fingerprint it holds), so a file
// swapped for another key's is refused before anything is verified with it.
func NewKey(fpr, origin, path string, armored []byte) (Key, error) {
	fpr = normFpr(fpr)
	if _, err := parseKey(fpr, armored); err != nil {
		return Key{}, err
	}
	return Key{Fingerprint: fpr, Origin: origin, Path: path, SHA256: digest(armored), Armored: armored}, nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// withRevocationsOf is k with the revocations of every other file in all
// that holds the same primary key added, the primary's and each subkey's.
func (k *pinnedKey) withRevocationsOf(all []keyFile) *pinnedKey {
	c := *k
	c.revocations = slices.Clone(k.revocations)
	c.subkeys = nil
	for _, s := range k.subkeys {
		sc := *s
		sc.revocations = slices.Clone(s.revocations)
		c.subkeys = append(c.subkeys, &sc)
	}
	for _, o := range all {
		if o.k == k || !bytes.Equal(o.k.primary.Fingerprint, k.primary.Fingerprint) {
			continue
		}
		c.revocations = append(c.revocations, o.k.revocations...)
		for _, os := range o.k.subkeys {
			for _, cs := range c.subkeys {
				if bytes.Equal(os.pub.Fingerprint, cs.pub.Fingerprint) {
					cs.revocations = append(cs.revocations, os.revocations...)
				}
			}
		}
	}
	return &c
}

// pinnedKey is one pinned certificate with every verified self-signature
// kept. go-crypto's Entity keeps only the newest binding per subkey, and
// validity at a past time needs the older ones too.
type pinnedKey struct {
	primary     *packet.PublicKey
	direct      []*packet.Signature // verified direct-key self-signatures (0x1f)
	certs       []*packet.Signature // verified user-ID self-signatures (0x10-0x13)
	revocations []*packet.Signature // verified key revocations (0x20)
	subkeys     []*subkey
}

type subkey struct {
	pub         *packet.PublicKey
	bindings    []*packet.Signature // verified binding signatures (0x18), cross-signature checked for signing subkeys
	revocations []*packet.Signature // verified subkey revocations (0x28)
}

// parseKey reads the armored certificate pinned under fpr.
func parseKey(fpr string, armored []byte) (*pinnedKey, error) {
	k, err := parseCert(armored)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPinnedKey, fpr, err)
	}
	if got := fprString(k.primary.Fingerprint); got != fpr {
		return nil, fmt.Errorf("%w: %s: file holds key %s instead", ErrPinnedKey, fpr, got)
	}
	return k, nil
}

// PrimaryFingerprint is the fingerprint of the primary key an armored key
// file holds (it must hold exactly one).
func PrimaryFingerprint(armored []byte) (string, error) {
	k, err := parseCert(armored)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrPinnedKey, err)
	}
	return fprString(k.primary.Fingerprint), nil
}

// parseCert reads an armored certificate, keeping the self-signatures and
// revocations that verify.
func parseCert(armored []byte) (*pinnedKey, error) {
	k := &pinnedKey{}
	var uid *packet.UserId // the user ID the following signatures belong to
	var sk *subkey         // the subkey the following signatures belong to
	for p, err := range packets(armored, "PGP PUBLIC KEY BLOCK") {
		if _, ok := errors.AsType[pgperrors.UnsupportedError](err); ok {
			continue // e.g. a packet of a newer algorithm: skip, as go-crypto's ReadKeyRing does
		}
		if err != nil {
			return nil, err
		}
		switch pkt := p.(type) {
		case *packet.PublicKey:
			if !pkt.IsSubkey {
				if k.primary != nil {
					return nil, errors.New("holds more than one primary key")
				}
				k.primary = pkt
				continue
			}
			if k.primary == nil {
				return nil, errors.New("subkey before primary key")
			}
			sk = &subkey{pub: pkt}
			k.subkeys = append(k.subkeys, sk)
			uid = nil
		case *packet.UserId:
			uid, sk = pkt, nil
		case *packet.UserAttribute:
			uid, sk = nil, nil
		case *packet.Signature:
			if k.primary == nil {
				return nil, errors.New("signature before primary key")
			}
			k.addSignature(pkt, uid, sk)
		}
	}
	if k.primary == nil {
		return nil, errors.New("no primary key")
	}
	return k, nil
}

// packets decodes the armored block of type typ and yields its packets,
// each with the error reading it (the last one, if reading cannot go on).
func packets(armored []byte, typ string) iter.Seq2[packet.Packet, error] {
	return func(yield func(packet.Packet, error) bool) {
		block, err := armor.Decode(bytes.NewReader(armored))
		if err != nil {
			yield(nil, fmt.Errorf("armor: %w", err))
			return
		}
		if block.Type != typ {
			yield(nil, fmt.Errorf("armor type %q, want %s", block.Type, typ))
			return
		}
		r := packet.NewReader(block.Body)
		for {
			p, err := r.Next()
			if err == io.EOF || !yield(p, err) {
				return
			}
		}
	}
}

// addSignature keeps sig if it is a self-signature or revocation that
// verifies; anything else (third-party certifications, bad packets) is
// dropped because it cannot bind or revoke anything.
func (k *pinnedKey) addSignature(sig *packet.Signature, uid *packet.UserId, sk *subkey) {
	if !sig.CheckKeyIdOrFingerprint(k.primary) {
		return
	}
	switch sig.SigType {
	case packet.SigTypeDirectSignature:
		if k.primary.VerifyDirectKeySignature(sig) == nil {
			k.direct = append(k.direct, sig)
		}
	case packet.SigTypeKeyRevocation:
		if k.primary.VerifyRevocationSignature(sig) == nil {
			k.revocations = append(k.revocations, sig)
		}
	case packet.SigTypeGenericCert, packet.SigTypePersonaCert, packet.SigTypeCasualCert, packet.SigTypePositiveCert:
		if uid != nil && k.primary.VerifyUserIdSignature(uid.Id, k.primary, sig) == nil {
			k.certs = append(k.certs, sig)
		}
	case packet.SigTypeSubkeyBinding:
		if sk != nil && k.primary.VerifyKeySignature(sk.pub, sig) == nil {
			sk.bindings = append(sk.bindings, sig)
		}
	case packet.SigTypeSubkeyRevocation:
		if sk != nil && k.primary.VerifySubkeyRevocationSignature(sig, sk.pub) == nil {
			sk.revocations = append(sk.revocations, sig)
		}
	}
}

// issuerKey returns the key of k that sig names as its issuer: the primary
// (sub nil) or a subkey.
func (k *pinnedKey) issuerKey(sig *packet.Signature) (*packet.PublicKey, *subkey) {
	if matchesIssuer(sig, k.primary) {
		return k.primary, nil
	}
	for _, s := range k.subkeys {
		if matchesIssuer(sig, s.pub) {
			return s.pub, s
		}
	}
	return nil, nil
}

// matchesIssuer prefers the full fingerprint; the 64-bit key id is only a
// fallback for signatures that carry no fingerprint.
func matchesIssuer(sig *packet.Signature, pk *packet.PublicKey) bool {
	if len(sig.IssuerFingerprint) > 0 {
		return bytes.Equal(sig.IssuerFingerprint, pk.Fingerprint)
	}
	return sig.IssuerKeyId != nil && *sig.IssuerKeyId == pk.KeyId
}

// newestAt returns the newest signature among sigs made at or before t and
// not itself expired at t.
func newestAt(sigs []*packet.Signature, t time.Time) *packet.Signature {
	var best *packet.Signature
	for _, s := range sigs {
		if s.CreationTime.After(t) || s.SigExpired(t) {
			continue
		}
		if best == nil || s.CreationTime.After(best.CreationTime) {
			best = s
		}
	}
	return best
}

// expiredAt reports whether a key created at created is expired at t
// according to the self-signature sig, and when it expires.
func expiredAt(created time.Time, sig *packet.Signature, t time.Time) (bool, time.Time) {
	if sig == nil || sig.KeyLifetimeSecs == nil || *sig.KeyLifetimeSecs == 0 {
		return false, time.Time{}
	}
	exp := created.Add(time.Duration(*sig.KeyLifetimeSecs) * time.Second)
	return !t.Before(exp), exp
}

// validAt judges, at time t, the primary key and (if sub is non-nil) the
// signing subkey, per the package policy.
func (k *pinnedKey) validAt(t time.Time, sub *subkey) error {
	pfpr := fprString(k.primary.Fingerprint)
	if len(k.revocations) > 0 {
		return fmt.Errorf("%w: primary key %s carries a revocation made %s (reason %s)",
			ErrRevoked, pfpr, utc(k.revocations[0].CreationTime), reason(k.revocations[0]))
	}
	if k.primary.CreationTime.After(t) {
		return fmt.Errorf("%w: primary key %s was created %s, after the signature",
			ErrKeyInvalid, pfpr, utc(k.primary.CreationTime))
	}
	// The v4 key's expiry may be stated on a direct-key signature or on a
	// user-ID certification (OpenSSL's current key uses the former, the
	// retired one the latter); the newest of each kind in force at t counts,
	// and either can expire the key.
	inForce := []*packet.Signature{newestAt(k.direct, t), newestAt(k.certs, t)}
	if inForce[0] == nil && inForce[1] == nil {
		return fmt.Errorf("%w: primary key %s has no self-signature made at or before the signature",
			ErrKeyInvalid, pfpr)
	}
	for _, s := range inForce {
		if s == nil {
			continue
		}
		if exp, when := expiredAt(k.primary.CreationTime, s, t); exp {
			return fmt.Errorf("%w: primary key %s expired %s (self-signature of %s)",
				ErrKeyExpired, pfpr, utc(when), utc(s.CreationTime))
		}
		if sub == nil && s.FlagsValid && !s.FlagSign {
			return fmt.Errorf("%w: primary key %s is not flagged for signing (self-signature of %s)",
				ErrKeyInvalid, pfpr, utc(s.CreationTime))
		}
	}
	if sub == nil {
		return nil
	}

	sfpr := fprString(sub.pub.Fingerprint)
	if len(sub.revocations) > 0 {
		return fmt.Errorf("%w: subkey %s of %s carries a revocation made %s (reason %s)",
			ErrRevoked, sfpr, pfpr, utc(sub.revocations[0].CreationTime), reason(sub.revocations[0]))
	}
	if sub.pub.CreationTime.After(t) {
		return fmt.Errorf("%w: subkey %s was created %s, after the signature",
			ErrKeyInvalid, sfpr, utc(sub.pub.CreationTime))
	}
	b := newestAt(sub.bindings, t)
	if b == nil {
		return fmt.Errorf("%w: subkey %s has no binding signature made at or before the signature",
			ErrKeyInvalid, sfpr)
	}
	// Without the sign flag go-crypto does not check the cross-signature,
	// so such a subkey could be someone else's key bound to ours.
	if !b.FlagsValid || !b.FlagSign {
		return fmt.Errorf("%w: subkey %s is not flagged for signing (binding of %s)",
			ErrKeyInvalid, sfpr, utc(b.CreationTime))
	}
	if exp, when := expiredAt(sub.pub.CreationTime, b, t); exp {
		return fmt.Errorf("%w: subkey %s of %s expired %s (binding of %s)",
			ErrKeyExpired, sfpr, pfpr, utc(when), utc(b.CreationTime))
	}
	return nil
}

func reason(s *packet.Signature) string {
	if s.RevocationReason == nil {
		return "unspecified"
	}
	r := fmt.Sprintf("%d", *s.RevocationReason)
	if s.RevocationReasonText != "" {
		r += fmt.Sprintf(" %q", s.RevocationReasonText)
	}
	return r
}
