package check

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"testing"
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
