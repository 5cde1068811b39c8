package buildinfo

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

var (
	commitRe = regexp.MustCompile(`^[0-9a-f]{40}$`)
	dirtyRe  = regexp.MustCompile(`^[0-9a-f]{40}\+dirty\.[0-9a-f]{16}$`)
)

// osslbuildTree is a checkout's files: osslbuild's go.mod, a Go package on
// the build path, and what .gitignore keeps out.
var osslbuildTree = map[string]string{
	"go.mod":                            "module " + Module + "\n\ngo 1.26\n",
	".gitignore":                        "/build/\n/dist/\n",
	"internal/binary/validate/rules.go": "package validate\n",
	"recipes/openssl.toml":              "schema = 1\n",
	"README.md":                         "osslbuild\n",
}

// TestCheckout: a clean checkout is its commit; a modified tracked file,
// a staged change, a removed file or an untracked file on the build path
// makes it <commit>+dirty.<digest>, the digest following what differs
// (two changes, two digests; undoing the change, clean again); what
// .gitignore names never counts.
func TestCheckout(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rev := testfixture.GitCheckout(t, dir, osslbuildTree)
	check := func(what string) string {
		t.Helper()
		got, err := Checkout(ctx, dir)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return got
	}
	if got := check("clean"); got != rev || !commitRe.MatchString(got) {
		t.Fatalf("clean checkout: %q, want %s", got, rev)
	}
	rules := filepath.Join(dir, "internal/binary/validate/rules.go")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]string{}
	for _, tt := range []struct {
		name   string
		change func()
		undo   func()
	}{
		{"a line appended to a tracked .go file", func() { write(rules, "package validate\n// one\n") }, func() { write(rules, "package validate\n") }},
		{"another line appended", func() { write(rules, "package validate\n// two\n") }, func() { write(rules, "package validate\n") }},
		{"a staged change", func() {
			write(rules, "package validate\n// staged\n")
			testfixture.Git(t, dir, "add", "-A")
		}, func() {
			testfixture.Git(t, dir, "reset", "-q")
			write(rules, "package validate\n")
		}},
		{"a tracked file removed", func() { os.Remove(rules) }, func() { write(rules, "package validate\n") }},
		{"a tracked file made executable", func() { os.Chmod(rules, 0o755) }, func() { os.Chmod(rules, 0o644) }},
		{"an untracked .go file on the build path", func() { write(filepath.Join(dir, "internal/binary/validate/extra.go"), "package validate\n") },
			func() { os.Remove(filepath.Join(dir, "internal/binary/validate/extra.go")) }},
		{"an untracked recipe", func() { write(filepath.Join(dir, "recipes/other.toml"), "schema = 1\n") },
			func() { os.Remove(filepath.Join(dir, "recipes/other.toml")) }},
	} {
		tt.change()
		got := check(tt.name)
		if !dirtyRe.MatchString(got) || !strings.HasPrefix(got, rev+"+dirty.") {
			t.Errorf("%s: %q, want %s+dirty.<digest>", tt.name, got, rev)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%s and %s give one revision, %s", other, tt.name, got)
		}
		seen[got] = tt.name
		if again := check(tt.name + ", again"); again != got {
			t.Errorf("%s: %s, then %s", tt.name, got, again)
		}
		tt.undo()
		if got := check(tt.name + " undone"); got != rev {
			t.Errorf("%s undone: %q, want %s", tt.name, got, rev)
		}
	}
	// What .gitignore names (a build's work and output) is no change.
	write(filepath.Join(dir, "build/work/x.o"), "object")
	write(filepath.Join(dir, "dist/a.tar.gz"), "tarball")
	if got := check("ignored files"); got != rev {
		t.Errorf("ignored files: %q, want %s", got, rev)
	}
}

// TestCheckoutRefs: packed refs, a detached HEAD and a git worktree (whose
// .git is a file) are git's to resolve; a worktree's changes are its own.
func TestCheckoutRefs(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "main")
	rev := testfixture.GitCheckout(t, dir, osslbuildTree)
	testfixture.Git(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(dir, ".git/refs/heads/main")); !os.IsNotExist(err) {
		t.Fatalf("pack-refs left refs/heads/main: %v", err)
	}
	if got, err := Checkout(ctx, dir); err != nil || got != rev {
		t.Errorf("packed refs: %q, %v; want %s", got, err, rev)
	}
	wt := filepath.Join(filepath.Dir(dir), "wt")
	testfixture.Git(t, dir, "worktree", "add", "-q", "--detach", wt, "HEAD")
	if got, err := Checkout(ctx, filepath.Join(wt, "internal")); err != nil || got != rev {
		t.Errorf("worktree: %q, %v; want %s", got, err, rev)
	}
	if err := os.WriteFile(filepath.Join(wt, "README.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Checkout(ctx, wt); err != nil || !dirtyRe.MatchString(got) {
		t.Errorf("modified worktree: %q, %v", got, err)
	}
	if got, err := Checkout(ctx, dir); err != nil || got != rev {
		t.Errorf("the main checkout beside a modified worktree: %q, %v; want %s", got, err, rev)
	}
}

// TestCheckoutOnlyOsslbuild: a directory in no checkout, or in a checkout
// of another module, has no osslbuild revision.
func TestCheckoutOnlyOsslbuild(t *testing.T) {
	ctx := context.Background()
	testfixture.Tool(t, "git")
	if got, err := Checkout(ctx, t.TempDir()); err == nil {
		t.Errorf("no checkout: %q", got)
	}
	other := t.TempDir()
	testfixture.GitCheckout(t, other, map[string]string{"go.mod": "module example.org/consumer\n"})
	if got, err := Checkout(ctx, other); err == nil || !strings.Contains(err.Error(), "is not a checkout of "+Module) {
		t.Errorf("another module's checkout: %q, %v", got, err)
	}
}
