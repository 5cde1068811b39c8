package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/rebuild"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
)

// The tests below rebuild mini artifacts with verify:rebuild's code
// (internal/rebuild) through the real pipeline: they live here for the
// mini tree's mirror, recipe and consumer.

var (
	revA = strings.Repeat("a1", 20) // the "commit" the artifact was built by
	revB = strings.Repeat("b2", 20)
)

// rebuildable builds the mini arm64 artifact as revision revA and returns
// the settings, runtime and the published artifact.
func rebuildable(t *testing.T) (pipeline.Settings, pipeline.Runtime, *artifact.Published) {
	t.Helper()
	s := miniSettings(t, nil)
	rt := minitest.Runtime(t, &strings.Builder{})
	rt.Revision = revA
	res, err := pipeline.Slice(context.Background(), s, rt, "arm64", nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, rt, res.Published
}

// runRebuild rebuilds path as a checkout at revision ours, returning the
// result, the error, the report and the build log.
func runRebuild(t *testing.T, s pipeline.Settings, rt pipeline.Runtime, path, ours string) (*rebuild.Result, error, string, string) {
	t.Helper()
	var report, log strings.Builder
	rt.Log, rt.Revision = &log, ours
	res, err := rebuild.Run(context.Background(), rebuild.Options{Artifact: path, Settings: s, Runtime: rt, Report: &report,
		Recipe: recipe.LoadOptions{Unsigned: true}})
	t.Logf("report:\n%s", report.String())
	return res, err, report.String(), log.String()
}

// copyTree copies the artifact directory src to a fresh directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if out, err := exec.Command("cp", "-R", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	return dst
}

// resealWith rewrites dir's manifest after edit, with every file's digest.
func resealWith(t *testing.T, dir string, edit func(*artifact.Manifest)) {
	t.Helper()
	m, err := artifact.LoadManifest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	if err := artifact.WriteManifest(context.Background(), dir, m); err != nil {
		t.Fatal(err)
	}
}

// TestRebuildMiniPasses: a mini artifact, as a directory and as its
// tarball, rebuilt from its manifest alone (the recipe from the bytes it
// records), passes file by file.
func TestRebuildMiniPasses(t *testing.T) {
	t.Parallel()
	s, rt, pub := rebuildable(t)
	for _, path := range []string{pub.Dir, pub.Tarball} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			res, err, report, _ := runRebuild(t, s, rt, path, revA)
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]bool{}
			for _, l := range res.Lines {
				if l.Status != "PASS" {
					t.Errorf("%s", l)
				}
				files[l.File] = true
			}
			for _, f := range []string{"lib/libcrypto.a", "lib/libssl.a", artifact.ManifestName, artifact.SBOMName} {
				if !files[f] {
					t.Errorf("no line for %s", f)
				}
			}
			if !strings.Contains(report, "PASS lib/libcrypto.a\n") || !strings.Contains(res.Verdict, ": PASS: all ") {
				t.Errorf("report without the PASS lines and verdict:\n%s", report)
			}
		})
	}
}

// TestRebuildChangedLibraryFails: one byte of a member of libcrypto.a
// changed and the manifest resealed: the artifact verifies, and the
// rebuild fails naming the file, the member and the byte offset in it.
func TestRebuildChangedLibraryFails(t *testing.T) {
	t.Parallel()
	s, rt, pub := rebuildable(t)
	dir := copyTree(t, pub.Dir)
	lib := filepath.Join(dir, "lib", "libcrypto.a")
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(b, []byte("-Wall"))
	if at < 0 {
		t.Fatal("libcrypto.a holds no -Wall")
	}
	b[at+2] = 'x'
	if err := os.WriteFile(lib, b, 0o644); err != nil {
		t.Fatal(err)
	}
	resealWith(t, dir, nil)
	f, err := inspect.InspectReader("libcrypto.a", bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var member string
	var offset int64
	for _, o := range f.Slices[0].Objects {
		if int64(at+2) >= o.Offset && int64(at+2) < o.Offset+o.Size {
			member, offset = o.Member, int64(at+2)-o.Offset
		}
	}
	if member == "" {
		t.Fatal("the changed byte is in no member")
	}
	res, err, _, _ := runRebuild(t, s, rt, dir, revA)
	if !errors.Is(err, rebuild.ErrDiffers) {
		t.Fatalf("want ErrDiffers, got %v", err)
	}
	var found bool
	for _, l := range res.Lines {
		if l.File == "lib/libcrypto.a" {
			found = true
			want := "member " + member + " differs at byte " + strconv.FormatInt(offset, 10) + " of the member"
			if l.Status != "FAIL" || !strings.Contains(l.Detail, want) {
				t.Errorf("got %q, want FAIL with %q", l, want)
			}
		}
		if l.File == "lib/libssl.a" && l.Status != "PASS" {
			t.Errorf("an unchanged library: %s", l)
		}
	}
	if !found || !strings.Contains(res.Verdict, "FAIL: 2 of ") { // libcrypto.a and the manifest listing its digest
		t.Errorf("verdict %q (line for libcrypto.a: %v)", res.Verdict, found)
	}
}

// TestRebuildRefusesBeforeBuilding: an artifact of another revision, of a
// revision no rebuild can be the same as, or of another toolchain is
// refused with the reason and what to do, and nothing is built.
func TestRebuildRefusesBeforeBuilding(t *testing.T) {
	t.Parallel()
	s, rt, pub := rebuildable(t)
	for _, tt := range []struct {
		name string
		ours string
		edit func(*artifact.Manifest)
		want []string
	}{
		{"another revision", revB, nil, []string{"built by osslbuild " + revA + ", this checkout is " + revB, "check out revision " + revA}},
		{"this checkout dirty", revA + "+dirty.0123456789abcdef", nil, []string{"uncommitted changes", "check out revision " + revA + ", clean"}},
		{"unknown", revA, func(m *artifact.Manifest) { m.Osslbuild = "unknown" }, []string{`"unknown"`, "cannot be rebuilt"}},
		{"dirty", revA, func(m *artifact.Manifest) { m.Osslbuild = revA + "+dirty.0123456789abcdef" }, []string{"uncommitted changes", "cannot be rebuilt"}},
		{"dirty, as manifests said before the digest", revA, func(m *artifact.Manifest) { m.Osslbuild = revA + "+dirty" }, []string{"uncommitted changes", "cannot be rebuilt"}},
		{"test", revA, func(m *artifact.Manifest) { m.Osslbuild = "test-0123" }, []string{"a test build", "cannot be rebuilt"}},
		{"headers", revA, func(m *artifact.Manifest) { m.Toolchain.SDKDigest = strings.Repeat("0", 64) }, []string{
			"the toolchain differs (SDK digest", "use the cross toolchain with", "headers digest " + strings.Repeat("0", 64)}},
		{"compiler", revA, func(m *artifact.Manifest) {
			m.Toolchain.Compiler = "Apple clang version 16.0.0"
			m.Toolchain.Kind = "macos"
			m.Toolchain.SDKPath = "/Applications/Xcode_16.app/sdk"
		}, []string{
			`compiler `, `"Apple clang version 16.0.0" recorded`, "run on a Mac whose Xcode has Apple clang version 16.0.0 and the SDK"}},
		{"recipe", revA, func(m *artifact.Manifest) { m.Recipe.Content += "# edited\n" }, []string{"do not have its recorded sha256"}},
		{"link program", revA, func(m *artifact.Manifest) { m.LinkChecks[0].ProgramSHA256 = strings.Repeat("e", 64) }, []string{
			"it was linked with testdata/mini-openssl/consumer.c (sha256 " + strings.Repeat("e", 64) + "), this checkout links testdata/mini-openssl/consumer.c (sha256 ", "check out revision " + revA}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := pub.Dir
			if tt.edit != nil {
				dir = copyTree(t, pub.Dir)
				resealWith(t, dir, tt.edit)
			}
			res, err, report, log := runRebuild(t, s, rt, dir, tt.ours)
			if !errors.Is(err, rebuild.ErrRefused) {
				t.Fatalf("want ErrRefused, got %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) || !strings.Contains(report, w) {
					t.Errorf("the refusal does not say %q:\n%v", w, err)
				}
			}
			if len(res.Lines) > 0 || strings.Contains(log, "compiling") || strings.Contains(log, "validated") {
				t.Errorf("it built before refusing:\n%s", log)
			}
		})
	}
}

// TestRebuildOldManifest: a manifest as 5392f1f wrote it (no recipe bytes,
// no signature digest, no headers digest) still verifies, and is reported
// as not rebuildable, saying what it lacks.
func TestRebuildOldManifest(t *testing.T) {
	t.Parallel()
	s, rt, pub := rebuildable(t)
	dir := copyTree(t, pub.Dir)
	path := filepath.Join(dir, artifact.ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range [][2]string{{"recipe", "content"}, {"openssl", "signature_sha256"}, {"toolchain", "sdk_digest"}} {
		delete(m[f[0]].(map[string]any), f[1])
	}
	old, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(path, append(old, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Verify(context.Background(), dir); err != nil {
		t.Fatalf("an old manifest no longer verifies: %v", err)
	}
	_, err, _, _ = runRebuild(t, s, rt, dir, revA)
	if !errors.Is(err, rebuild.ErrRefused) {
		t.Fatalf("want ErrRefused, got %v", err)
	}
	for _, w := range []string{"the manifest does not hold its bytes", "records no digest of the headers"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the refusal does not say %q: %v", w, err)
		}
	}
}

// TestRebuildMiniUniversal2Whole: a mini universal2 built by
// build:universal2 is rebuilt whole (both slices and the merge: every
// file, the merged manifest and SBOM too, PASS), though each merged
// slice's records are claims; with one slice claiming another osslbuild it
// is rebuilt slice by slice and the verdict says which slice was not.
func TestRebuildMiniUniversal2Whole(t *testing.T) {
	t.Parallel()
	s := miniSettings(t, nil)
	rt := minitest.Runtime(t, &strings.Builder{})
	rt.Revision = revA
	res, err := pipeline.Universal2(context.Background(), s, rt)
	if err != nil {
		t.Fatal(err)
	}
	got, err, report, _ := runRebuild(t, s, rt, res.Published.Tarball, revA)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, l := range got.Lines {
		if l.Status != "PASS" {
			t.Errorf("%s", l)
		}
		files[l.File] = true
	}
	for _, f := range []string{"lib/libcrypto.a", artifact.ManifestName, artifact.SBOMName} {
		if !files[f] {
			t.Errorf("no line for %s:\n%s", f, report)
		}
	}
	if len(got.Skipped) > 0 || !strings.Contains(got.Verdict, ": PASS: all ") {
		t.Errorf("verdict %q, skipped %q", got.Verdict, got.Skipped)
	}

	// As the macOS workflow makes it: slices built by other jobs (here,
	// into other directories), merged by build:merge. Rebuilt whole too.
	var slices []string
	for _, arch := range []string{"arm64", "x86_64"} {
		sl := s
		sl.Out = filepath.Join(t.TempDir(), "out")
		r, err := pipeline.Slice(context.Background(), sl, rt, arch, nil)
		if err != nil {
			t.Fatal(err)
		}
		slices = append(slices, r.Published.Tarball)
	}
	ms := s
	ms.Out = filepath.Join(t.TempDir(), "merged")
	merged, err := pipeline.Merge(context.Background(), ms, rt, slices[0], slices[1])
	if err != nil {
		t.Fatal(err)
	}
	got, err, report, _ = runRebuild(t, s, rt, merged.Published.Tarball, revA)
	if err != nil || len(got.Skipped) > 0 || !strings.Contains(got.Verdict, ": PASS: all ") {
		t.Errorf("build:merge's universal2: %v, verdict %q, skipped %q:\n%s", err, got.Verdict, got.Skipped, report)
	}

	other := copyTree(t, res.Published.Dir)
	resealWith(t, other, func(m *artifact.Manifest) { m.Slices[1].Claims.Osslbuild = revB })
	got, err, report, _ = runRebuild(t, s, rt, other, revA)
	if err != nil {
		t.Fatal(err)
	}
	arch := got.Skipped
	if !strings.Contains(got.Verdict, ": PARTIAL: ") || len(arch) == 0 || !strings.Contains(strings.Join(arch, "; "), "slice: it was built by osslbuild "+revB) {
		t.Errorf("verdict %q, skipped %q:\n%s", got.Verdict, got.Skipped, report)
	}
}
