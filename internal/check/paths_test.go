package check

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// checkWithin runs Check, failing the test if it never returns (a FIFO
// opened for reading blocks until a writer comes).
func checkWithin(t *testing.T, o Options) (*Result, error) {
	t.Helper()
	type out struct {
		res *Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := Check(context.Background(), o)
		done <- out{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-time.After(2 * time.Minute):
		t.Fatalf("check %s never returned", o.Path)
		return nil, nil
	}
}

// A FIFO, socket or device given as the path is refused, never opened.
func TestSpecialFileAsPath(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(dir, "zero-link")
	os.Symlink("/dev/zero", link)
	for _, tc := range []struct{ path, what string }{
		{fifo, "is a named pipe (FIFO), not a file or directory: refusing to read it"},
		{sock, "is a socket, not a file or directory"},
		{"/dev/null", "is a character device, not a file or directory"},
		{link, "is a character device, not a file or directory"}, // the link the user passed is followed, to a device
	} {
		_, err := checkWithin(t, Options{Path: tc.path})
		if err == nil || errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), tc.path+" "+tc.what) {
			t.Errorf("%s: err = %v, want %q", tc.path, err, tc.what)
		}
	}
}

// Inside a directory: special files are skipped with a note; links are
// never followed, a binary reached by a link inside the directory is
// checked once and lists the link, links outside are noted, loops end.
func TestDirectoryEntries(t *testing.T) {
	k := newKit(t)
	good := k.macho("good.o", "arm64-apple-macos11", cversion(lineArmO3, "darwin64-arm64-cc"))
	outside := k.macho("outside.o", "arm64-apple-macos11", cversion(lineArmO0, "darwin64-arm64-cc"))
	root := filepath.Join(t.TempDir(), "tree")
	os.MkdirAll(filepath.Join(root, "lib", "sub"), 0o755)
	testfixture.CopyFile(t, good, filepath.Join(root, "lib", "libcrypto.3.dylib"))
	os.Symlink("libcrypto.3.dylib", filepath.Join(root, "lib", "libcrypto.dylib"))
	os.Symlink("../libcrypto.3.dylib", filepath.Join(root, "lib", "sub", "again.dylib"))
	os.Symlink(outside, filepath.Join(root, "lib", "outside.dylib"))
	os.Symlink("/dev/zero", filepath.Join(root, "zero"))
	os.Symlink("..", filepath.Join(root, "lib", "sub", "loop"))
	os.Symlink("missing", filepath.Join(root, "broken"))
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(root, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	os.WriteFile(filepath.Join(root, "empty"), nil, 0o644)

	res, err := checkWithin(t, Options{Path: root})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || len(res.Binaries) != 1 || res.Skipped != 1 {
		t.Fatalf("ok %v, %d binaries, %d skipped: %+v", res.OK, len(res.Binaries), res.Skipped, res)
	}
	b := res.Binaries[0]
	wantLinks := []string{filepath.Join(root, "lib", "libcrypto.dylib"), filepath.Join(root, "lib", "sub", "again.dylib")}
	if b.Path != filepath.Join(root, "lib", "libcrypto.3.dylib") || strings.Join(b.Links, "|") != strings.Join(wantLinks, "|") {
		t.Errorf("binary %s links %q, want %q", b.Path, b.Links, wantLinks)
	}
	notes := strings.Join(res.Notes, "\n")
	for _, w := range []string{
		filepath.Join(root, "pipe") + ": named pipe (FIFO), not a regular file: skipped without opening it",
		filepath.Join(root, "s.sock") + ": socket, not a regular file: skipped",
		filepath.Join(root, "lib", "outside.dylib") + ": symlink to " + outside + ", outside " + root + ": not followed",
		filepath.Join(root, "zero") + ": symlink to /dev/zero, outside " + root + ": not followed",
		filepath.Join(root, "broken") + ": symlink to missing that cannot be resolved",
	} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	// The link passed itself is followed: the -O0 file outside is checked.
	res, err = checkWithin(t, Options{Path: filepath.Join(root, "lib", "outside.dylib")})
	if err != nil || res.OK {
		t.Errorf("link passed as the path: %v %q", err, res.Failures)
	}
	// So is a link to a directory passed as the path.
	dl := filepath.Join(t.TempDir(), "dirlink")
	os.Symlink(root, dl)
	res, err = checkWithin(t, Options{Path: dl})
	if err != nil || !res.OK || len(res.Binaries) != 1 || res.Binaries[0].Path != filepath.Join(dl, "lib", "libcrypto.3.dylib") {
		t.Errorf("directory link: %v %+v", err, res)
	}
}

// An empty file named as the path says so.
func TestEmptyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "libcrypto.dylib")
	os.WriteFile(p, nil, 0o644)
	res, err := Check(context.Background(), Options{Path: p})
	if err != nil || res.OK || len(res.Binaries) != 1 ||
		res.Binaries[0].Error != p+": unrecognised file format: the file is empty (0 bytes): expected a Mach-O, universal, ar or ELF binary, a wheel (zip) or a .tar.gz" {
		t.Errorf("%v %+v", err, res)
	}
}

// -minopt takes 0, 1, 2, 3, s, z; anything else is refused by name.
func TestMinOptFlag(t *testing.T) {
	k := newKit(t)
	os := k.retype("libcrypto-os.dylib", k.macho("os.o", "arm64-apple-macos11", cversion(strings.Replace(lineArmO3, "-O3", "-Os", 1), "darwin64-arm64-cc")), 6)
	for _, tc := range []struct {
		minopt string
		ok     bool
		min    string
	}{{"", true, "-O2"}, {"0", true, "-O0"}, {"1", true, "-O1"}, {"2", true, "-O2"}, {"s", true, "-Os"}, {"z", true, "-Oz"}, {"3", false, "-O3"}} {
		res, err := Check(context.Background(), Options{Path: os, MinOpt: tc.minopt})
		if err != nil || res.OK != tc.ok || res.MinOpt != tc.min {
			t.Errorf("-minopt=%q: %v ok %v min %s, want %v %s", tc.minopt, err, res.OK, res.MinOpt, tc.ok, tc.min)
		}
	}
	for _, bad := range []string{"-1", "4", "fast", "g", "O3", "-O3", "two"} {
		_, err := Check(context.Background(), Options{Path: os, MinOpt: bad})
		if err == nil || errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), `-minopt "`+bad+`": expected 0, 1, 2, 3, s or z`) {
			t.Errorf("-minopt=%q: err = %v", bad, err)
		}
	}
}

// A mapped file truncated while it is hashed is an error naming it, not a
// crash.
func TestMappedFileTruncated(t *testing.T) {
	p := filepath.Join(t.TempDir(), "libcrypto.a")
	if err := os.WriteFile(p, make([]byte, smallFile+1), 0o644); err != nil {
		t.Fatal(err)
	}
	f, size, err := open(p, false)
	if err != nil || size != smallFile+1 {
		t.Fatal(err)
	}
	defer f.Close()
	data, release, err := mapFile(f, size)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	os.Truncate(p, 0)
	err = guard(p, func() error { artifact.SHA256(data); return nil })
	if err == nil || !strings.Contains(err.Error(), p+": the file changed while it was read") {
		t.Errorf("err = %v", err)
	}
}
