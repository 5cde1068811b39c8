package artifact

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestCheckTarballStream: a cached tarball is held to its tree by the tar
// stream it unpacks to and osslbuild's gzip header, with nothing after
// it; WriteTarball's own output passes, as does the same tar stream
// compressed otherwise, and each tampering is refused, named.
func TestCheckTarballStream(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tree := filepath.Join(dir, "a")
	os.MkdirAll(filepath.Join(tree, "lib"), 0o755)
	os.WriteFile(filepath.Join(tree, "lib", "libcrypto.a"), []byte(strings.Repeat("x", 4096)), 0o644)
	mtime := time.Unix(1700000000, 0)
	var good bytes.Buffer
	d, err := WriteTarball(ctx, tree, "a", mtime, &good)
	if err != nil {
		t.Fatal(err)
	}
	tarStream := func() []byte {
		zr, _ := gzip.NewReader(bytes.NewReader(good.Bytes()))
		b, _ := io.ReadAll(zr)
		return b
	}()
	gz := func(hdr gzip.Header, level int, body []byte) []byte {
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, level)
		w.Header = hdr
		w.Write(body)
		w.Close()
		return b.Bytes()
	}
	for _, tc := range []struct {
		name  string
		bytes []byte
		want  string // "" passes
	}{
		{"WriteTarball's own", good.Bytes(), ""},
		{"the same stream compressed faster", gz(gzip.Header{OS: 255}, gzip.BestSpeed, tarStream), ""},
		{"bytes after the stream", append(bytes.Clone(good.Bytes()), "payload"...), "bytes after its gzip stream"},
		{"a second gzip member", append(bytes.Clone(good.Bytes()), gz(gzip.Header{OS: 255}, 9, []byte("more"))...), "bytes after its gzip stream"},
		{"a named gzip header", gz(gzip.Header{Name: "evil", OS: 255}, 9, tarStream), "gzip header"},
		{"an extra field", gz(gzip.Header{Extra: []byte("xx"), OS: 255}, 9, tarStream), "gzip header"},
		{"another file's content", gz(gzip.Header{OS: 255}, 9, bytes.Replace(tarStream, []byte("xxxx"), []byte("xxxy"), 1)), "is not the tree's"},
		{"not gzip", []byte("plain"), "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "a.tar.gz")
			os.WriteFile(p, tc.bytes, 0o644)
			got, err := ReadTarballStream(ctx, p)
			if err == nil {
				err = SameStream(p, got, d.TarSHA256)
			}
			switch {
			case tc.want == "":
				if err != nil || got.TarSHA256 != d.TarSHA256 || got.Size != int64(len(tc.bytes)) {
					t.Errorf("refused: %v (%+v)", err, got)
				}
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	// A FIFO in the tarball's place is refused by name, not waited on
	// (open(2) of a FIFO blocks where no context reaches).
	fifo := filepath.Join(t.TempDir(), "a.tar.gz")
	testfixture.FIFO(t, fifo)
	if _, err := ReadTarballStream(ctx, fifo); err == nil || !strings.Contains(err.Error(), fifo+": named pipe (FIFO), expected a regular file") {
		t.Errorf("a FIFO for the tarball: %v", err)
	}
}
