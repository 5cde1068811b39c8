package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/internal/source/unpack"
)

// TestUnpackErrorOnce: a tarball the unpacker refuses is named once, with
// the member, not "unpack X: unpack X: ...".
func TestUnpackErrorOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "openssl-9.9.9.tar.gz")
	if err := os.WriteFile(p, tarGz(t, d("openssl-9.9.8/"), f("openssl-9.9.8/VERSION.dat", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	v := &Verified{Release: recipe.Release{Version: "9.9.9"}, Tarball: fetch.Result{Path: p}}
	dest := filepath.Join(t.TempDir(), "src")
	_, err := Unpack(context.Background(), v, dest, os.DirFS(t.TempDir()))
	if !errors.Is(err, unpack.ErrLayout) {
		t.Fatalf("err = %v, want unpack.ErrLayout", err)
	}
	if got := strings.Count(err.Error(), "openssl-9.9.9.tar.gz"); got != 1 || !strings.HasPrefix(err.Error(), `unpack openssl-9.9.9.tar.gz: member "openssl-9.9.8/": `) {
		t.Errorf("error names the tarball %d times, want once at the start: %v", got, err)
	}
	if _, err := os.Lstat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dest left behind: %v", err)
	}
}
