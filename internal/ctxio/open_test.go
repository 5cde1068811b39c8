package ctxio_test

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestOpenRegular: a FIFO, a socket, a device, a directory (and, where
// links are not followed, a symlink) are refused by name without blocking;
// a regular file, or a link to one where links are followed, is read.
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "proved.json")
	if err := os.WriteFile(file, []byte(`{"rules":"r"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.tar.gz")
	testfixture.FIFO(t, fifo)
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(dir, "link")
	if err := os.Symlink("proved.json", link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path   string
		follow bool
		want   string // "" reads the file
	}{
		{file, false, ""},
		{link, true, ""},
		{link, false, "symlink, expected a regular file: not followed"},
		{fifo, true, "named pipe (FIFO), expected a regular file: not read"},
		{fifo, false, "named pipe (FIFO), expected a regular file: not read"},
		{sock, true, "socket, expected a regular file"},
		{os.DevNull, true, "character device, expected a regular file"},
		{dir, true, "directory, expected a regular file"},
	} {
		b, err := ctxio.ReadFile(context.Background(), tt.path, tt.follow, 1<<10)
		sum, errSum := ctxio.SHA256(context.Background(), tt.path, tt.follow)
		switch {
		case tt.want == "" && (err != nil || string(b) != `{"rules":"r"}` || errSum != nil || len(sum) != 64):
			t.Errorf("%s (follow %v): %q, %v; sha256 %s, %v", tt.path, tt.follow, b, err, sum, errSum)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.path+": "+tt.want)):
			t.Errorf("%s (follow %v): %q, %v; want %q", tt.path, tt.follow, b, err, tt.want)
		case tt.want != "" && (errSum == nil || errSum.Error() != err.Error()):
			t.Errorf("%s (follow %v): SHA256 %v, ReadFile %v", tt.path, tt.follow, errSum, err)
		}
	}
	if _, err := ctxio.ReadFile(context.Background(), filepath.Join(dir, "nope"), false, 1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, err := ctxio.ReadFile(context.Background(), file, false, 3); err == nil || !strings.Contains(err.Error(), "larger than 3 bytes") {
		t.Errorf("too large: %v", err)
	}
}

// TestWriteFile: the file appears with its mode and nothing else is left
// in the directory; a failed write leaves no temporary file.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "advisories.json")
	for _, data := range []string{"old", "new"} {
		if err := ctxio.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if fi, serr := os.Stat(p); err != nil || serr != nil || string(b) != data || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: %q %v; stat %v", p, b, err, serr)
		}
	}
	if err := ctxio.WriteFile(filepath.Join(dir, "no", "such"), nil, 0o644); err == nil {
		t.Error("write into a missing directory: no error")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}
