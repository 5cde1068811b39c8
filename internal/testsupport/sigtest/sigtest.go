// Package sigtest makes OpenPGP signatures for the tests of the source
// packages.
package sigtest

import (
	"bytes"
	"crypto"
	"fmt"
	"os"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// Foreign is a valid detached signature over the file at p by a freshly
// generated key that nothing pins.
func Foreign(t testing.TB, p string) []byte {
	t.Helper()
	e, err := openpgp.NewEntity("Not OpenSSL", "", "foreign@example.invalid", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	if err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var buf bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&buf, e, fh, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Key is a freshly generated release key shaped like OpenSSL's current
// one: a primary key that certifies, and a signing subkey that signs.
type Key struct {
	Entity  *openpgp.Entity
	Signing *packet.PrivateKey
}

// NewKey generates a Key whose user ID carries name.
func NewKey(t testing.TB, name string) *Key {
	t.Helper()
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA}
	e, err := openpgp.NewEntity(name, "", "release@example.invalid", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddSigningSubkey(cfg); err != nil {
		t.Fatal(err)
	}
	return &Key{Entity: e, Signing: e.Subkeys[len(e.Subkeys)-1].PrivateKey}
}

// Fingerprint is the primary key's fingerprint, as recipes write it.
func (k *Key) Fingerprint() string { return fmt.Sprintf("%X", k.Entity.PrimaryKey.Fingerprint) }

// SigningKeyID is the signing subkey's 64-bit key id, as a signature
// names its issuer.
func (k *Key) SigningKeyID() string { return k.Signing.PublicKey.KeyIdString() }

// SigningFingerprint is the signing subkey's fingerprint.
func (k *Key) SigningFingerprint() string { return fmt.Sprintf("%X", k.Signing.PublicKey.Fingerprint) }

// Armored is the public key block, as a key file holds it.
func (k *Key) Armored(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Entity.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return buf.Bytes()
}

// Sign is a detached armored signature over the file at p by k's signing
// subkey, as OpenSSL signs its tarballs (SHA-512).
func (k *Key) Sign(t testing.TB, p string) []byte {
	t.Helper()
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var buf bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&buf, k.Entity, fh, &packet.Config{DefaultHash: crypto.SHA512}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
