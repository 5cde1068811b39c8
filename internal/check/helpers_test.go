package check

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/osslbuild/osslbuild/internal/advisory"
)

// wheelMember is one file of a test wheel: literal data, or a file on disk.
type wheelMember struct {
	name string
	data string
	file string
}

// writeWheel writes a zip shaped like a wheel (deflated members plus a
// dist-info METADATA, WHEEL and RECORD) at path.
func writeWheel(t testing.TB, path string, members ...wheelMember) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	di := "cryptography-46.0.0.dist-info/"
	members = append(members,
		wheelMember{name: di + "METADATA", data: "Metadata-Version: 2.1\nName: cryptography\nVersion: 46.0.0\n"},
		wheelMember{name: di + "WHEEL", data: "Wheel-Version: 1.0\nGenerator: osslbuild-test\nRoot-Is-Purelib: false\nTag: cp311-abi3-macosx_10_9_universal2\n"},
		wheelMember{name: di + "RECORD", data: ""})
	for _, m := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if m.file != "" {
			src, err := os.Open(m.file)
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(w, src)
			src.Close()
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := io.WriteString(w, m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func abs(t testing.TB, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// testAdvisories is a small advisory table of two of OpenSSL's real
// advisories (4.0.2's high one and a low one), for tests about how
// advisories are shown rather than which there are: the embedded table
// grows with every update.
func testAdvisories(t testing.TB) *advisory.Table {
	t.Helper()
	tab, err := advisory.Parse("testAdvisories", []byte(`{"schema":"`+advisory.Schema+`","as_of":"2026-09-29","sources":[{"name":"test","url":"https://example/test","commit":"abc1234","through":"2026-09-29"}],"advisories":[
{"cve":"CVE-2026-84782","source":"test","date":"2026-09-29","severity":"high","url":"https://openssl-library.org/news/secadv/20260929.txt","affected":[{"series":"4.0","introduced":"4.0.0","fixed":"4.0.3","public":true},{"series":"3.0","introduced":"3.0.0","fixed":"3.0.23","public":false},{"series":"1.1.1","introduced":"1.1.1","fixed":"1.1.1zj","public":false}]},
{"cve":"CVE-2026-35189","source":"test","date":"2026-09-29","severity":"low","url":"https://openssl-library.org/news/secadv/20260929.txt","affected":[{"series":"4.0","introduced":"4.0.0","fixed":"4.0.3","public":true},{"series":"3.0","introduced":"3.0.0","fixed":"3.0.23","public":false}]},
{"cve":"CVE-2023-0286","source":"test","date":"2023-02-07","severity":"high","url":"https://www.openssl.org/news/secadv/20230207.txt","affected":[{"series":"3.0","introduced":"3.0.0","fixed":"3.0.8","public":true},{"series":"1.1.1","introduced":"1.1.1","fixed":"1.1.1t","public":true}]},
{"cve":"CVE-2014-0160","source":"test","date":"2014-04-07","severity":"unknown","url":"https://www.openssl.org/news/secadv/20140407.txt","affected":[{"series":"1.0.1","introduced":"1.0.1","fixed":"1.0.1g","public":true}]}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	return tab
}
