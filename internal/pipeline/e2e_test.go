package pipeline_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/report"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/universal"
)

// TestUniversal2EndToEnd checks build:universal2's output, then merges the
// two slice tarballs it published, as a last CI job would, and requires a
// byte-identical universal2 tarball.
func TestUniversal2EndToEnd(t *testing.T) {
	t.Parallel()
	dist := filepath.Join(e2e.Universal2(t), "dist")
	dir := filepath.Join(dist, universal.Name)
	for _, lib := range artifact.Libraries {
		path := filepath.Join(dir, "lib", lib)
		out, err := exec.Command("llvm-lipo-14", "-info", path).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "are: x86_64 arm64") {
			t.Errorf("llvm-lipo -info %s: %s %v", lib, out, err)
		}
		var exps []validate.Expect
		for _, target := range []string{"x86_64", "arm64"} {
			exps = append(exps, pipeline.Expect(plan(t, target), lib))
		}
		if _, err := validate.UniversalContext(context.Background(), path, exps); err != nil {
			t.Errorf("universal %s: %v", lib, err)
		}
	}
	m, err := artifact.LoadManifest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range m.CompilerLines {
		got[l.Arch] = l.Line
	}
	for arch, want := range wantCompiler {
		if got[arch] != want {
			t.Errorf("%s compiler line in universal2 manifest = %q, want %q", arch, got[arch], want)
		}
	}
	if len(m.Slices) != 2 || len(m.HeaderDispatch) != 0 {
		t.Errorf("manifest: %d slices, dispatch %v (pyca's option set gives identical headers)", len(m.Slices), m.HeaderDispatch)
	}
	// The merged libraries were linked for both architectures.
	var linked []string
	for _, c := range m.LinkChecks {
		linked = append(linked, c.Arch+" "+c.Platform)
	}
	if strings.Join(linked, ", ") != "x86_64 macos 10.12, arm64 macos 11.0" {
		t.Errorf("universal2 link checks: %v", linked)
	}
	if _, err := os.Stat(filepath.Join(dir, artifact.SBOMName)); err != nil {
		t.Error("universal2 artifact has no SBOM")
	}

	// build:merge of the slice tarballs from the same run.
	o, rt := e2e.Settings(t, t.TempDir()), e2e.Runtime(t)
	res, err := pipeline.Merge(context.Background(), o, rt,
		filepath.Join(dist, "openssl-macos-arm64.tar.gz"), filepath.Join(dist, "openssl-macos-x86-64.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(dist, universal.Name+".tar.gz.sha256"))
	if !strings.HasPrefix(string(want), res.Published.Digests.SHA256) {
		t.Errorf("build:merge gave %s, build:universal2 gave %s", res.Published.Digests.SHA256, want)
	}

	// A corrupted slice tarball is refused before merging.
	bad := filepath.Join(t.TempDir(), "openssl-macos-arm64.tar.gz")
	b, _ := os.ReadFile(filepath.Join(dist, "openssl-macos-arm64.tar.gz"))
	b[len(b)/2] ^= 1
	os.WriteFile(bad, b, 0o644)
	os.WriteFile(bad+".sha256", mustRead(t, filepath.Join(dist, "openssl-macos-arm64.tar.gz.sha256")), 0o644)
	if _, err := pipeline.Merge(context.Background(), o, rt, bad, filepath.Join(dist, "openssl-macos-x86-64.tar.gz")); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("corrupted slice tarball: %v", err)
	}
	// The same slice twice is refused.
	if _, err := pipeline.Merge(context.Background(), o, rt, filepath.Join(dist, "openssl-macos-arm64"), filepath.Join(dist, "openssl-macos-arm64")); err == nil || !strings.Contains(err.Error(), "both slices are arm64") {
		t.Errorf("same slice twice: %v", err)
	}
}

// TestActionsOutput runs build:merge with GITHUB_ACTIONS=true and a step
// summary file, on the real slices, then on a pair whose arm64 libcrypto
// was swapped for an -O0 one: the summary gets a row per slice, and every
// validation failure an ::error:: annotation naming the file and slice.
func TestActionsOutput(t *testing.T) {
	t.Parallel()
	dist := filepath.Join(e2e.Universal2(t), "dist")
	summary := filepath.Join(t.TempDir(), "summary.md")
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary}
	var log bytes.Buffer
	o := e2e.Settings(t, t.TempDir())
	rt := e2e.Runtime(t)
	rt.Log = &log
	rt.Observer = &report.Builds{W: &log, Env: func(k string) string { return env[k] }}

	if _, err := pipeline.Merge(context.Background(), o, rt, filepath.Join(dist, "openssl-macos-arm64"), filepath.Join(dist, "openssl-macos-x86-64")); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"osslbuild: openssl-macos-universal2", "| arm64 |", `| x86\_64 |`, "4.0.2", "11.0", "10.12", "-O3", "-march=core2", "(libssl.a)", "| optimised 0."} {
		if !strings.Contains(string(md), want) {
			t.Errorf("step summary lacks %q:\n%s", want, md)
		}
	}

	// An -O0 arm64 libcrypto: refused, annotated. The stand-in cversion.o
	// defines what the genuine one exports, so the release's lists hold
	// and the refusal is the optimisation rule's.
	bad := testfixture.CopyTree(t, filepath.Join(dist, "openssl-macos-arm64"), filepath.Join(t.TempDir(), "openssl-macos-arm64"))
	obj := compile(t, "arm64-apple-macos11", `const char *c = "compiler: cc -fPIC -arch arm64 -mmacosx-version-min=11.0 -DL_ENDIAN"; const char *p = "platform: darwin64-arm64-cc"; unsigned OPENSSL_version_major(void) { return 4; } unsigned OPENSSL_version_minor(void) { return 0; } unsigned OPENSSL_version_patch(void) { return 2; } const char *OPENSSL_version_pre_release(void) { return ""; } const char *OPENSSL_version_build_metadata(void) { return ""; } unsigned long OpenSSL_version_num(void) { return 0; } const char *OpenSSL_version(int t) { return c; }`, "libcrypto-lib-cversion.o")
	testfixture.Run(t, "llvm-ar-14", "r", filepath.Join(bad, "lib", "libcrypto.a"), obj)
	// Sealed into the manifest, so it is the library, not a digest, that
	// merge refuses.
	reseal(t, bad, "lib/libcrypto.a")
	log.Reset()
	if _, err := pipeline.Merge(context.Background(), o, rt, bad, filepath.Join(dist, "openssl-macos-x86-64")); err == nil {
		t.Fatal("merge accepted an -O0 slice")
	}
	out := log.String()
	if !strings.Contains(out, "::error file=") || !strings.Contains(out, "title=openssl-macos-universal2 arm64%3A optimisation::") ||
		!strings.Contains(out, "libcrypto.a(libcrypto-lib-cversion.o) arm64: compiler line has no -O flag (built without optimisation (-O0))") {
		t.Errorf("annotations:\n%s", out)
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
