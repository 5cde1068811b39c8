// Package sigtest makes OpenPGP signatures for the tests of the source
// packages.
package sigtest

import (
	"bytes"
	"os"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
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
