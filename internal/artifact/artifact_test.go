package artifact

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestTarballDeterministic: the same content gives the same bytes whatever
// the umask, modes, timestamps and creation order.
func TestTarballDeterministic(t *testing.T) {
	files := map[string]string{"lib/libcrypto.a": "crypto", "include/openssl/ssl.h": "/* h */", "lib/pkgconfig/libssl.pc": "prefix=${pcfiledir}/../..\n", "manifest.json": "{}"}
	a, b := t.TempDir(), t.TempDir()
	testfixture.WriteTree(t, a, files)
	old := syscall.Umask(0o077)
	testfixture.WriteTree(t, b, files)
	syscall.Umask(old)
	os.Chmod(filepath.Join(b, "lib/libcrypto.a"), 0o600)
	os.Chtimes(filepath.Join(b, "include/openssl/ssl.h"), time.Now(), time.Unix(12345, 0))
	mtime := time.Unix(1787657968, 0)
	var ta, tb bytes.Buffer
	da, err := WriteTarball(context.Background(), a, "x", mtime, &ta)
	if err != nil {
		t.Fatal(err)
	}
	db, err := WriteTarball(context.Background(), b, "x", mtime, &tb)
	if err != nil {
		t.Fatal(err)
	}
	if da != db || !bytes.Equal(ta.Bytes(), tb.Bytes()) {
		t.Errorf("digests differ: %+v vs %+v", da, db)
	}
	// A content change changes the digest.
	os.WriteFile(filepath.Join(b, "lib/libcrypto.a"), []byte("crypt0"), 0o644)
	var tc bytes.Buffer
	dc, _ := WriteTarball(context.Background(), b, "x", mtime, &tc)
	if dc.SHA256 == da.SHA256 || dc.TarSHA256 == da.TarSHA256 {
		t.Error("content change did not change the digest")
	}
}

func TestTarballRefusesSymlink(t *testing.T) {
	d := t.TempDir()
	testfixture.WriteTree(t, d, map[string]string{"a": "x"})
	os.Symlink("/etc/passwd", filepath.Join(d, "link"))
	if _, err := WriteTarball(context.Background(), d, "x", time.Unix(0, 0), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("want refusal naming the symlink, got %v", err)
	}
}

func TestRelocatePC(t *testing.T) {
	in := "prefix=/opt/osslbuild\nexec_prefix=${prefix}\nlibdir=${exec_prefix}/lib\nincludedir=${prefix}/include\nmodulesdir=/opt/osslbuild/lib/ossl-modules\nopenssldir=/opt/osslbuildx\n"
	out, err := RelocatePC([]byte(in), "/opt/osslbuild")
	if err != nil {
		t.Fatal(err)
	}
	want := "prefix=${pcfiledir}/../..\nexec_prefix=${prefix}\nlibdir=${exec_prefix}/lib\nincludedir=${prefix}/include\nmodulesdir=${prefix}/lib/ossl-modules\nopenssldir=/opt/osslbuildx\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if _, err := RelocatePC([]byte("prefix=/elsewhere\n"), "/opt/osslbuild"); err == nil {
		t.Error("a foreign prefix was accepted")
	}
	if _, err := RelocatePC([]byte("libdir=/x\n"), "/opt/osslbuild"); err == nil {
		t.Error("a .pc without prefix= was accepted")
	}
}

func TestPublishAtomicAndReplaces(t *testing.T) {
	out := t.TempDir()
	for i, body := range []string{"one", "two"} {
		src := filepath.Join(t.TempDir(), "tree")
		testfixture.WriteTree(t, src, map[string]string{"lib/libcrypto.a": body})
		pubs, err := PublishAll(context.Background(), out, []Item{{Dir: src, Name: "openssl-macos-arm64", Mtime: time.Unix(0, 0)}})
		if err != nil {
			t.Fatal(err)
		}
		p := pubs[0]
		b, _ := os.ReadFile(filepath.Join(p.Dir, "lib/libcrypto.a"))
		if string(b) != body {
			t.Errorf("publish %d: got %q", i, b)
		}
		sum, _ := os.ReadFile(p.Tarball + ".sha256")
		if !strings.HasPrefix(string(sum), p.Digests.SHA256+"  openssl-macos-arm64.tar.gz") {
			t.Errorf(".sha256 = %q", sum)
		}
	}
	ents, _ := os.ReadDir(out)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "openssl-macos-arm64 openssl-macos-arm64.tar.gz openssl-macos-arm64.tar.gz.sha256" { // no lock file left
		t.Errorf("output dir holds %s", got)
	}
}

func TestManifestFiles(t *testing.T) {
	d := t.TempDir()
	testfixture.WriteTree(t, d, map[string]string{"lib/libssl.a": "ssl"})
	m := &Manifest{Name: "n"}
	if err := WriteManifest(context.Background(), d, m); err != nil {
		t.Fatal(err)
	}
	r, _, err := readManifestFile(context.Background(), d, ManifestName)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("ssl"))
	if r.Schema != Schema || r.Files["lib/libssl.a"] != hex.EncodeToString(sum[:]) || len(r.Files) != 1 {
		t.Errorf("manifest files = %v", r.Files)
	}
	if _, ok := r.Files[ManifestName]; ok {
		t.Error("manifest lists itself")
	}
}

// TestPublishAfterAFailedPublisherRemovedOut: a publisher that made out and
// published nothing removes it under the lock; one waiting for the lock
// meanwhile must publish into the path's new directory, not fail on the
// removed one (on the old code it failed: "no such file or directory").
func TestPublishAfterAFailedPublisherRemovedOut(t *testing.T) {
	out := filepath.Join(t.TempDir(), "dist")
	unlock, created, err := lock(out)
	if err != nil || !created {
		t.Fatalf("lock: created %v, %v", created, err)
	}
	src := filepath.Join(t.TempDir(), "tree")
	testfixture.WriteTree(t, src, map[string]string{"lib/libcrypto.a": "bytes"})
	done := make(chan error, 1)
	go func() {
		_, err := PublishAll(context.Background(), out, []Item{{Dir: src, Name: "openssl-macos-arm64", Mtime: time.Unix(0, 0)}})
		done <- err
	}()
	// Let the publisher reach the lock and wait on it; if it has not yet,
	// it finds no directory and makes one, and the test passes without
	// the race it is for (it cannot fail wrongly).
	time.Sleep(200 * time.Millisecond)
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatalf("publish after the holder removed out: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "openssl-macos-arm64", "lib", "libcrypto.a")); err != nil || string(b) != "bytes" {
		t.Fatalf("published file: %q, %v", b, err)
	}
}
