package diff

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestUniversalSymbolsPerArch: a universal2 static library whose arm64
// slice lost an exported symbol that its x86_64 slice still defines is
// reported as that symbol removed from arm64, and x86_64 unchanged; a
// union over the slices would see no change at all.
func TestUniversalSymbolsPerArch(t *testing.T) {
	tc := testfixture.NeedToolchain(t)
	const both = "int ossl_keep(void) { return 1; }\nint ossl_lost(void) { return 2; }\n"
	const keepOnly = "int ossl_keep(void) { return 1; }\n"
	universal := func(arm64Src string) string {
		dir := t.TempDir()
		var thin []string
		for _, x := range []struct{ arch, triple, src string }{
			{"arm64", "arm64-apple-macos11", arm64Src},
			{"x86_64", "x86_64-apple-macos10.12", both},
		} {
			d := filepath.Join(dir, x.arch)
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			o := tc.Compile(t, d, x.triple, "libx-lib-keep", x.src)
			thin = append(thin, tc.Archive(t, "darwin", false, filepath.Join(d, "libx.a"), o))
		}
		if err := os.MkdirAll(filepath.Join(dir, "out", "lib"), 0o755); err != nil {
			t.Fatal(err)
		}
		tc.LipoCreate(t, filepath.Join(dir, "out", "lib", "libx.a"), thin...)
		return filepath.Join(dir, "out")
	}
	side := func(dir string) *Side {
		l, err := artifact.ReadLibrary(context.Background(), filepath.Join(dir, "lib", "libx.a"))
		if err != nil {
			t.Fatal(err)
		}
		return &Side{Path: dir, Manifest: &artifact.Manifest{}, Dir: dir, Libraries: map[string]artifact.Library{"lib/libx.a": l}}
	}
	a, b := side(universal(both)), side(universal(keepOnly))
	r, err := CompareSides(context.Background(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	var arm64 *Section
	for i, s := range r.Sections {
		if strings.HasPrefix(s.Title, "exported symbols of lib/libx.a") {
			if !strings.Contains(s.Title, "arm64") {
				t.Errorf("section %q: a slice other than arm64 changed:\n%s", s.Title, Text(r))
				continue
			}
			arm64 = &r.Sections[i]
		}
	}
	if arm64 == nil {
		t.Fatalf("no exported symbols section for arm64: the lost symbol is not reported:\n%s", Text(r))
	}
	if !slices.Equal(arm64.Removed, []string{"_ossl_lost"}) || len(arm64.Added) != 0 {
		t.Errorf("arm64: removed %q, added %q; want removed [_ossl_lost]:\n%s", arm64.Removed, arm64.Added, Text(r))
	}
	// The same library on both sides: nothing to report.
	if r, err := CompareSides(context.Background(), a, a); err != nil || !r.Identical {
		t.Errorf("a library differs from itself (%v):\n%s", err, Text(r))
	}
}
