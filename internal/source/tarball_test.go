package source

import (
	"archive/tar"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/testsupport/tartest"
)

// member is one entry of a tarball built by a test.
type member struct {
	name string
	typ  byte
	body string
	link string
}

func d(name string) member                 { return member{name: name, typ: tar.TypeDir} }
func f(name, body string) member           { return member{name: name, typ: tar.TypeReg, body: body} }
func globalHeader() member                 { return member{name: "pax_global_header", typ: tar.TypeXGlobalHeader} }
func symlinkMember(name, to string) member { return member{name: name, typ: tar.TypeSymlink, link: to} }

// tarGz builds a .tar.gz of ms.
func tarGz(t testing.TB, ms ...member) []byte {
	t.Helper()
	var es []tartest.Entry
	for _, m := range ms {
		h := tar.Header{Name: m.name, Typeflag: m.typ, Linkname: m.link, Mode: 0o644, ModTime: time.Unix(1700000000, 0)}
		switch m.typ {
		case tar.TypeReg:
			h.Size = int64(len(m.body))
		case tar.TypeXGlobalHeader:
			// As git archive writes it: the commit, nothing else.
			h = tar.Header{Name: m.name, Typeflag: m.typ, PAXRecords: map[string]string{"comment": "0123456789abcdef0123456789abcdef01234567"}}
		}
		es = append(es, tartest.Entry{Header: h, Body: m.body})
	}
	b, err := tartest.TarGz(t, es...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
