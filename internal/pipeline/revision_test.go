package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestMiniManifestNamesTheCheckout: run from an osslbuild checkout with no
// revision stamped (as `go tool mage` runs: mage compiles the magefile
// from a file list, which Go never stamps), a build's manifest names the
// checkout's commit; with a line appended to a tracked .go file, or an
// untracked .go file on the build path, it names <commit>+dirty.<digest>,
// each change its own digest and its own cache entry: a clean checkout is
// never served a modified one's entry, nor the reverse. Back clean, the
// clean entry serves again. The refs are packed, as git gc leaves them.
func TestMiniManifestNamesTheCheckout(t *testing.T) {
	s := miniSettings(t, nil)
	s.Rebuild = false
	dir := t.TempDir()
	rev := testfixture.GitCheckout(t, dir, map[string]string{
		"go.mod":                            "module github.com/osslbuild/osslbuild\n",
		"internal/binary/validate/rules.go": "package validate\n",
	})
	testfixture.Git(t, dir, "pack-refs", "--all")
	t.Chdir(dir)
	var log strings.Builder
	build := func(what string) (osslbuild string, hit bool) {
		t.Helper()
		log.Reset()
		rt := minitest.Runtime(t, &log)
		rt.Revision = "" // pipeline.Version's, as a target's
		res, err := pipeline.Slice(context.Background(), s, rt, "arm64", nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, log.String())
		}
		m, err := artifact.LoadManifest(context.Background(), res.Published.Dir)
		if err != nil || m.Osslbuild != res.Manifest.Osslbuild {
			t.Fatalf("%s: published manifest %v (%v), built %s", what, m, err, res.Manifest.Osslbuild)
		}
		return m.Osslbuild, strings.Contains(log.String(), "cache hit")
	}
	entries := func() int {
		e, _ := filepath.Glob(filepath.Join(s.Fetch.CacheDir, "artifacts", "*"))
		return len(e)
	}
	if got, _ := build("clean"); got != rev {
		t.Fatalf("clean checkout: the manifest says osslbuild %q, want %s", got, rev)
	}
	dirty := regexp.MustCompile(`^` + rev + `\+dirty\.[0-9a-f]{16}$`)
	rules := filepath.Join(dir, "internal/binary/validate/rules.go")
	extra := filepath.Join(dir, "internal/binary/validate/extra.go")
	seen := map[string]bool{rev: true}
	for i, tt := range []struct {
		name         string
		change, undo func() error
	}{
		{"a line appended to rules.go", func() error { return os.WriteFile(rules, []byte("package validate\n// changed\n"), 0o644) },
			func() error { return os.WriteFile(rules, []byte("package validate\n"), 0o644) }},
		{"an untracked extra.go", func() error { return os.WriteFile(extra, []byte("package validate\n"), 0o644) },
			func() error { return os.Remove(extra) }},
	} {
		if err := tt.change(); err != nil {
			t.Fatal(err)
		}
		got, hit := build(tt.name)
		if !dirty.MatchString(got) || seen[got] {
			t.Errorf("%s: the manifest says osslbuild %q, want %s+dirty.<a digest of its own>", tt.name, got, rev)
		}
		seen[got] = true
		if hit || entries() != i+2 {
			t.Errorf("%s: served from the cache (%v), %d cache entries, want a new one:\n%s", tt.name, hit, entries(), log.String())
		}
		if err := tt.undo(); err != nil {
			t.Fatal(err)
		}
	}
	if got, hit := build("clean again"); got != rev || !hit || entries() != 3 {
		t.Errorf("clean again: osslbuild %q, served from the clean entry %v, %d entries", got, hit, entries())
	}
}
