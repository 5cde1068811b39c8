package diff_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/diff"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
)

// The tests below compare real artifacts the real pipeline built from
// the mini tree (internal/testsupport/minitest) with the cross toolchain.

// builds are the mini artifacts the tests share (a mini build takes a
// while on a busy machine), under a directory removed when they end.
var (
	buildsMu sync.Mutex
	builds   = map[string]*artifact.Published{}
	root     string
)

func TestMain(m *testing.M) {
	var err error
	if root, err = os.MkdirTemp("", "diff-test-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(root)
	os.Exit(code)
}

// build is the mini artifact called name, built once.
func build(t *testing.T, name, target string, o minitest.Options) *artifact.Published {
	t.Helper()
	buildsMu.Lock()
	defer buildsMu.Unlock()
	if p, ok := builds[name]; ok {
		return p
	}
	o.Root = filepath.Join(root, name)
	p := minitest.Build(t, target, o)
	builds[name] = p
	return p
}

func plainArm64(t *testing.T) *artifact.Published {
	return build(t, "arm64", "arm64", minitest.Options{})
}

func compare(t *testing.T, a, b string) *diff.Report {
	t.Helper()
	r, err := diff.Compare(context.Background(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func section(r *diff.Report, title string) *diff.Section {
	for i := range r.Sections {
		if r.Sections[i].Title == title {
			return &r.Sections[i]
		}
	}
	return nil
}

func change(t *testing.T, r *diff.Report, title, key string) diff.Change {
	t.Helper()
	if s := section(r, title); s != nil {
		for _, c := range s.Changed {
			if c.Key == key {
				return c
			}
		}
	}
	t.Fatalf("no change of %q in section %q:\n%s", key, title, diff.Text(r))
	return diff.Change{}
}

// TestIdentical: an artifact and itself, its own tarball, a copy and its
// own manifest.json are identical, in every format.
func TestIdentical(t *testing.T) {
	pub := plainArm64(t)
	cp := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(cp, os.DirFS(pub.Dir)); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{pub.Dir, pub.Tarball, cp, filepath.Join(pub.Dir, artifact.ManifestName)} {
		for _, pair := range [][2]string{{pub.Dir, b}, {b, pub.Dir}} {
			r := compare(t, pair[0], pair[1])
			if !r.Identical || len(r.Sections) != 0 {
				t.Errorf("%s vs %s: not identical:\n%s", pair[0], pair[1], diff.Text(r))
			}
			if got := diff.Text(r); !strings.Contains(got, "are identical") {
				t.Errorf("text of %s vs %s does not say identical:\n%s", pair[0], pair[1], got)
			}
			if got := diff.Markdown(r); !strings.Contains(got, "**identical**") {
				t.Errorf("markdown of %s vs %s does not say identical:\n%s", pair[0], pair[1], got)
			}
			var back diff.Report
			if err := json.Unmarshal([]byte(diff.JSON(r)), &back); err != nil || !back.Identical {
				t.Errorf("json of %s vs %s: %v, identical %v", pair[0], pair[1], err, back.Identical)
			}
		}
	}
	// A manifest alone records no sizes or symbols: the report says so.
	r := compare(t, pub.Dir, filepath.Join(pub.Dir, artifact.ManifestName))
	if len(r.Notes) == 0 || !strings.Contains(diff.Text(r), "a manifest alone") {
		t.Errorf("a manifest alone compared without a note:\n%s", diff.Text(r))
	}
}

// TestTargets: the arm64 and x86_64 artifacts differ in their targets,
// deployment targets, -march and compiler lines, and every library file.
func TestTargets(t *testing.T) {
	arm := plainArm64(t)
	x86 := build(t, "x86_64", "x86_64", minitest.Options{})
	r := compare(t, arm.Dir, x86.Tarball)
	if r.Identical {
		t.Fatalf("arm64 and x86_64 identical:\n%s", diff.Text(r))
	}
	if c := change(t, r, "target", "arch"); c.A != "arm64" || c.B != "x86_64" {
		t.Errorf("arch: %+v", c)
	}
	if c := change(t, r, "deployment targets", "min_os"); c.A != "11.0" || c.B != "10.12" {
		t.Errorf("min_os: %+v", c)
	}
	if c := change(t, r, "target", "flags"); strings.Contains(c.A, "-march") || !strings.Contains(c.B, "-march=core2") {
		t.Errorf("flags: %+v", c)
	}
	if s := section(r, "compiler lines"); s == nil || !slices.ContainsFunc(s.Added, func(l string) bool { return strings.Contains(l, "-march=core2") }) {
		t.Errorf("no compiler line with -march=core2 added:\n%s", diff.Text(r))
	}
	if c := change(t, r, "libraries", "lib/libcrypto.a members"); !strings.Contains(c.A, "arm64") || !strings.Contains(c.B, "x86_64") {
		t.Errorf("members: %+v", c)
	}
	files := section(r, "files")
	if files == nil || !slices.ContainsFunc(files.Changed, func(c diff.Change) bool { return c.Key == "lib/libcrypto.a" && len(c.Detail) > 0 }) {
		t.Errorf("lib/libcrypto.a not listed as changed, explained:\n%s", diff.Text(r))
	}
	md := diff.Markdown(r)
	for _, want := range []string{"#### target", "| arch | arm64 | x86_64 |", "#### deployment targets", "-march=core2"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestReleases: two releases of one series, the newer with an option
// more and a function more, show the release, the option and the symbol.
func TestReleases(t *testing.T) {
	old := plainArm64(t)
	cur := build(t, "9.9.10", "arm64", minitest.Options{
		Version: "9.9.10",
		Options: []string{"no-shared", "no-idea"},
		Edits:   map[string][2]string{"crypto/mem.c": {"#include <stddef.h>\n", "#include <stddef.h>\n\nint CRYPTO_new_in_this_release(void) { return 1; }\n"}},
	})
	r := compare(t, old.Tarball, cur.Dir)
	if c := change(t, r, "release", "OpenSSL"); c.A != "9.9.9" || c.B != "9.9.10" {
		t.Errorf("OpenSSL: %+v", c)
	}
	if s := section(r, "options"); s == nil || !slices.Contains(s.Added, "no-idea") || len(s.Removed) != 0 {
		t.Errorf("options: %+v", s)
	}
	if s := section(r, "Configure argv"); s == nil || !slices.Contains(s.Added, "no-idea") {
		t.Errorf("Configure argv: %+v", s)
	}
	if s := section(r, "exported symbols of lib/libcrypto.a"); s == nil || !slices.ContainsFunc(s.Added, func(x string) bool { return strings.HasSuffix(x, "CRYPTO_new_in_this_release") }) || len(s.Removed) != 0 {
		t.Errorf("symbols: %+v\n%s", s, diff.Text(r))
	}
	if !strings.Contains(diff.Markdown(r), "+ _CRYPTO_new_in_this_release") {
		t.Errorf("markdown lacks the added symbol:\n%s", diff.Markdown(r))
	}
}

// TestRefusesMismatch: an artifact whose files do not match its manifest
// is refused on either side, naming the file.
func TestRefusesMismatch(t *testing.T) {
	pub := plainArm64(t)
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.CopyFS(bad, os.DirFS(pub.Dir)); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(bad, "lib", "libcrypto.a")
	if err := os.Chmod(lib, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(lib, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("tampered")
	f.Close()
	for _, pair := range [][2]string{{pub.Dir, bad}, {bad, pub.Dir}, {pub.Tarball, bad}} {
		_, err := diff.Compare(context.Background(), pair[0], pair[1])
		if !errors.Is(err, artifact.ErrMismatch) || !strings.Contains(fmtErr(err), "lib/libcrypto.a") {
			t.Errorf("%s vs %s: %v, want a mismatch naming lib/libcrypto.a", pair[0], pair[1], err)
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
