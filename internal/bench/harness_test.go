package bench_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/bench"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
)

// stub writes a stand-in for the harness: a shell script printing head,
// then answering every request with answer (with none, it exits, as the
// harness does when a check fails).
func stub(t *testing.T, head, answer string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "osslbench")
	script := "#!/bin/sh\nprintf '" + head + "'\n"
	if answer != "" {
		script += "while read -r req; do printf '" + answer + "'; done\n"
	}
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServe reads a harness's identification and its answers, and
// refuses a harness whose checks failed or whose answers are not one.
func TestServe(t *testing.T) {
	const head = "version\\tOpenSSL 4.0.2 25 Aug 2026\\ncompiler\\tcompiler: cc -O3\\nplatform\\tplatform: linux-x86_64\\n"
	s, err := bench.Serve(context.Background(), stub(t, head+"check\\tok\\n", "slice\\tEd25519 sign\\t0.029\\t32\\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != "OpenSSL 4.0.2 25 Aug 2026" || s.Compiler != "compiler: cc -O3" || s.Platform != "platform: linux-x86_64" {
		t.Errorf("identification: %q %q %q", s.Version, s.Compiler, s.Platform)
	}
	if ms, err := s.Slice("Ed25519 sign", 32); err != nil || ms != 0.029 {
		t.Errorf("slice: %v, %v", ms, err)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
	for name, tt := range map[string]struct{ head, answer string }{
		"failed check": {head + "check\\tfailed\\n", ""},
		"no version":   {"check\\tok\\n", ""},
		"wrong op":     {head + "check\\tok\\n", "slice\\tML-DSA-65 sign\\t0.029\\t32\\n"},
		"wrong calls":  {head + "check\\tok\\n", "slice\\tEd25519 sign\\t0.029\\t64\\n"},
		"bad median":   {head + "check\\tok\\n", "slice\\tEd25519 sign\\tfast\\t32\\n"},
		"NaN median":   {head + "check\\tok\\n", "slice\\tEd25519 sign\\tNaN\\t32\\n"},
		"negative":     {head + "check\\tok\\n", "slice\\tEd25519 sign\\t-1\\t32\\n"},
	} {
		s, err := bench.Serve(context.Background(), stub(t, tt.head, tt.answer))
		if err == nil {
			_, err = s.Slice("Ed25519 sign", 32)
			s.Close()
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := append([]float64(nil), c.in...)
		if got := bench.Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Errorf("Median reordered its input")
			}
		}
	}
}

func TestMarkdown(t *testing.T) {
	tb := &bench.Table{Rows: []bench.Row{
		{Op: "ML-DSA-65 sign", Path: bench.Paths["ML-DSA-65 sign"], OsslbuildMS: 0.4125, PycaWayMS: 3.8, Ratio: 9.21,
			Paired: &bench.Paired{Ratios: make([]float64, 15), Lo: 9.0, Hi: 9.4, Narrow: true}},
		{Op: "SHA3-256 64 KiB", Path: bench.Paths["SHA3-256 64 KiB"], OsslbuildMS: 0.18, PycaWayMS: 0.181, Ratio: 1.004,
			Paired: &bench.Paired{Ratios: make([]float64, 400), Lo: 0.9, Hi: 1.1}},
	}}
	want := "| Operation | OpenSSL path | osslbuild (CPU ms) | pyca way (CPU ms) | pyca way / osslbuild | 95% interval | pairs |\n" +
		"|---|---|---:|---:|---:|---:|---:|\n" +
		"| ML-DSA-65 sign | C | 0.4125 | 3.800 | 9.21x | 9.00-9.40 | 15 |\n" +
		"| SHA3-256 64 KiB | assembly | 0.1800 | 0.1810 | 1.00x (too noisy) | 0.90-1.10 | 400 |\n"
	if got := tb.Markdown(); got != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", got, want)
	}
	if n := tb.Noisy(); len(n) != 1 || n[0] != "SHA3-256 64 KiB" {
		t.Errorf("Noisy() = %v", n)
	}
	for _, op := range bench.Ops {
		if p := bench.Paths[op]; p.Kind != "C" && p.Kind != "assembly" {
			t.Errorf("%s: path %q", op, p.Kind)
		}
	}
}

// harness compiles bench/osslbench.c against artifact.
func harness(t *testing.T, artifact string) string {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no cc")
	}
	exe := filepath.Join(t.TempDir(), "osslbench")
	if err := bench.Compile(context.Background(), "", e2e.BenchOptions(t).Harness, artifact, exe); err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestHarnessChecks runs the harness (and its built-in correctness checks:
// KEM round trip, signatures verify and tampered messages do not, SHA3-256
// known answer) against osslbuild's linux-x86_64 artifact, and one slice
// of each operation. No timing is asserted.
func TestHarnessChecks(t *testing.T) {
	art := e2e.LinuxX8664(t)
	s, err := bench.Serve(context.Background(), harness(t, art))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Version, "OpenSSL "+e2e.Version+" ") {
		t.Errorf("harness linked %q, want OpenSSL %s", s.Version, e2e.Version)
	}
	if cl := inspect.ParseCompilerLine(s.Compiler); cl.Opt != inspect.O3 {
		t.Errorf("the library the harness ran says %q, want -O3", s.Compiler)
	}
	for _, op := range bench.Ops {
		if _, err := s.Slice(op, 32); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

// TestHarnessRejectsBadFlag: usage errors are not results.
func TestHarnessRejectsBadFlag(t *testing.T) {
	exe := harness(t, e2e.LinuxX8664(t))
	if out, err := exec.Command(exe, "-n", "0").CombinedOutput(); err == nil {
		t.Errorf("-n 0 accepted: %s", out)
	}
}

// TestAssemblyPathsAreLinked backs the "assembly" rows of Paths with the
// artifact itself: its libcrypto.a holds the perlasm objects for Keccak and
// P-256, and no assembly object for ML-KEM or ML-DSA.
func TestAssemblyPathsAreLinked(t *testing.T) {
	f, err := inspect.Inspect(filepath.Join(e2e.LinuxX8664(t), "lib", "libcrypto.a"))
	if err != nil {
		t.Fatal(err)
	}
	members := map[string]bool{}
	for _, s := range f.Slices {
		for _, o := range s.Objects {
			members[o.Member] = true
			if (strings.Contains(o.Member, "ml_kem") || strings.Contains(o.Member, "ml_dsa")) && strings.Contains(o.Member, "x86_64") {
				t.Errorf("assembly for a path listed as C: %s", o.Member)
			}
		}
	}
	for _, m := range []string{"libcrypto-lib-keccak1600-x86_64.o", "libcrypto-lib-ecp_nistz256-x86_64.o", "libcrypto-lib-ecp_nistz256.o", "libcrypto-lib-ml_kem.o", "libcrypto-lib-curve25519.o"} {
		if !members[m] {
			t.Errorf("libcrypto.a has no %s", m)
		}
	}
}

// TestLibrary runs the whole comparison with few calls: both builds (from
// the fixtures' caches), both harnesses, the table. No timing is asserted.
// With -library.report=<file> it is also how the recorded result was made.
func TestLibrary(t *testing.T) {
	e2e.LinuxX8664(t) // build under the fixture locks first
	e2e.PycaLinuxX8664(t)
	o := e2e.BenchOptions(t)
	o.SliceMS, o.MinPairs, o.MaxPairs = 2, 5, 5
	if *report != "" {
		// The recorded result is of the embedded recipe as it is, not the
		// fixtures' cut-down features (built here, not taken from them).
		o.Settings.Options = nil
		o.SliceMS, o.MinPairs, o.MaxPairs = *sliceMS, 0, *maxPairs
	}
	tb, err := bench.Library(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Rows) != len(bench.Ops) {
		t.Fatalf("%d rows, want %d", len(tb.Rows), len(bench.Ops))
	}
	for _, r := range tb.Rows {
		p := r.Paired
		if p == nil || len(p.A) != len(p.B) || len(p.Ratios) < 5 || len(p.Ratios) > o.MaxPairs || p.Calls < 1 || r.Ratio <= 0 || p.Lo > r.Ratio || p.Hi < r.Ratio || p.Stopped == "" {
			t.Errorf("%s: %+v %+v", r.Op, r, p)
		}
	}
	if tb.Osslbuild.Opt != "-O3" || tb.PycaWay.Opt != "-O0" {
		t.Errorf("builds measured: osslbuild %s (%s), pyca way %s (%s)", tb.Osslbuild.Opt, tb.Osslbuild.Compiler, tb.PycaWay.Opt, tb.PycaWay.Compiler)
	}
	md := tb.Report("go test ./internal/bench -run TestLibrary")
	t.Log("\n" + md)
	if *report != "" {
		writeReport(t, tb)
	}
}

// TestWriteLibraryReport exercises the magefile's entry point (few calls,
// one round) and the report's shape.
func TestWriteLibraryReport(t *testing.T) {
	e2e.LinuxX8664(t)
	e2e.PycaLinuxX8664(t)
	o := e2e.BenchOptions(t)
	o.SliceMS, o.MinPairs, o.MaxPairs = 1, 5, 5
	dir := t.TempDir()
	path, err := bench.WriteLibraryReport(context.Background(), o, dir, "go tool mage bench:library")
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := filepath.Match(filepath.Join(dir, "library-????-??-??.md"), path); !ok {
		t.Errorf("report written to %s", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- Command: `go tool mage bench:library`", "| Operation | OpenSSL path |", "| SHA3-256 64 KiB | assembly |", "95% interval", "How each operation was sampled", "effective -O0", "effective -O3", "- Machine: "} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q:\n%s", want, b)
		}
	}
}
