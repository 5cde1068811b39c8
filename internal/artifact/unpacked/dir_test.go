package unpacked

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// published writes a small artifact tree with its manifest, as a build does.
func published(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "openssl-macos-arm64")
	testfixture.WriteTree(t, dir, map[string]string{"include/openssl/ssl.h": "/* ssl */\n", "lib/libcrypto.a": "!<arch>\ncrypto", "lib/libssl.a": "!<arch>\nssl"})
	m := &artifact.Manifest{Name: "openssl-macos-arm64",
		Target: platform.Slice{Name: "arm64", Configure: "darwin64-arm64-cc", OS: "macos", Arch: "arm64", MinOS: "11.0",
			Flags: []string{"-mmacosx-version-min=11.0"}, Options: []string{"no-shared"}, OpenSSLDir: "/opt/homebrew/etc/openssl@3"},
		Configure: artifact.Configure{
			Argv:   []string{"perl", "Configure", "darwin64-arm64-cc", "--prefix=/opt/osslbuild", "--openssldir=/opt/homebrew/etc/openssl@3", "no-shared", "-mmacosx-version-min=11.0"},
			Env:    []string{"PATH=$WORK/toolchain/bin:/usr/bin:/bin", "LC_ALL=C"},
			CFLAGS: "-O3 -Wall -mmacosx-version-min=11.0",
		}}
	if err := artifact.WriteManifest(context.Background(), dir, m); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDirResolvesALinkedArtifact: an artifact directory given as a symlink
// (a download location, a workspace link) is the directory it names, for
// merge and smoke as for check; links inside it are still refused.
func TestDirResolvesALinkedArtifact(t *testing.T) {
	dir := published(t)
	link := filepath.Join(t.TempDir(), "artifact-link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	got, err := Dir(context.Background(), link, filepath.Join(t.TempDir(), "unpacked"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Verify(context.Background(), got); err != nil {
		t.Errorf("a symlinked artifact directory does not verify: %v", err)
	}
	os.Symlink("/etc/hostname", filepath.Join(dir, "include/openssl/leak.h"))
	if _, err := artifact.Verify(context.Background(), got); err == nil || !strings.Contains(err.Error(), "include/openssl/leak.h: symlink") {
		t.Errorf("a link inside the linked artifact: %v", err)
	}
}
