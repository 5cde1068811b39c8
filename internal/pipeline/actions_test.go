package pipeline_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/report"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
)

// TestActionsOutput runs build:merge with GITHUB_ACTIONS=true and a step
// summary file, on the real slices, then on a pair whose arm64 libcrypto
// was swapped for an -O0 one: the summary gets a row per slice, and every
// validation failure an ::error:: annotation naming the file and slice.
func TestActionsOutput(t *testing.T) {
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

	// An -O0 arm64 libcrypto: refused, annotated.
	bad := filepath.Join(t.TempDir(), "openssl-macos-arm64")
	if err := os.CopyFS(bad, os.DirFS(filepath.Join(dist, "openssl-macos-arm64"))); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "cversion.c")
	os.WriteFile(src, []byte(`const char *c = "compiler: cc -fPIC -arch arm64 -mmacosx-version-min=11.0 -DL_ENDIAN"; const char *p = "platform: darwin64-arm64-cc";`), 0o644)
	obj := filepath.Join(t.TempDir(), "libcrypto-lib-cversion.o")
	for _, args := range [][]string{
		{"clang-14", "-target", "arm64-apple-macos11", "-c", "-o", obj, src},
		{"llvm-ar-14", "r", filepath.Join(bad, "lib", "libcrypto.a"), obj},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
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
