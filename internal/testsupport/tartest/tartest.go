// Package tartest writes the .tar.gz archives that the tests of the source
// packages read.
package tartest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// Entry is one member of an archive: its header and the body after it.
type Entry struct {
	Header tar.Header
	Body   string
}

// TarGz is a .tar.gz of es. A header or body that cannot be written fails
// the test; an error closing the archive is returned, since a test may
// declare more bytes than it writes.
func TarGz(t testing.TB, es ...Entry) ([]byte, error) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range es {
		if err := tw.WriteHeader(&e.Header); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.Body); err != nil {
			t.Fatal(err)
		}
	}
	err := tw.Close()
	if zerr := zw.Close(); err == nil {
		err = zerr
	}
	return buf.Bytes(), err
}
