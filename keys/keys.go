// Package keys holds OpenSSL's pinned release signing keys.
//
// The keys are public data copied verbatim from Debian's packaging of OpenSSL
// (debian/upstream/signing-key.asc): openssl_4.0.2-1.debian.tar.xz for the
// current key B146647E45A7B33947AB226B2A2C87D161692D40 (signing subkey
// C46ED3F2CBEFDA1FDAADA44264ED7B1DCCE71CB2) and openssl_3.5.7-1~deb13u2.debian.tar.xz
// for the retired key BA5473A2B0587B07FB27CF2D216094DFD0CB81EF. Signatures are
// only ever checked against these files, never against a keyserver.
package keys

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
)

//go:embed *.asc
var files embed.FS

// Path is where the key pinned for the primary key fingerprint fpr lives
// in osslbuild's repository (what a manifest records of it).
func Path(fpr string) string { return "keys/openssl-" + strings.ToUpper(fpr) + ".asc" }

// Armored returns the armored public key block pinned for the primary key
// fingerprint fpr (40 hex digits, any case).
func Armored(fpr string) ([]byte, error) {
	name := strings.TrimPrefix(Path(fpr), "keys/")
	b, err := fs.ReadFile(files, name)
	if err != nil {
		return nil, fmt.Errorf("no pinned key %s in keys/ (have %s)", fpr, strings.Join(Fingerprints(), ", "))
	}
	return b, nil
}

// Fingerprints lists the primary key fingerprints pinned in keys/.
func Fingerprints() []string {
	ents, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "openssl-") && strings.HasSuffix(n, ".asc") {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(n, "openssl-"), ".asc"))
		}
	}
	return out
}
