package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// v8Decoy is what V8's WebAssembly code printer compiles into every
// program that embeds V8 (Node.js, Electron, Deno, workerd): a string that
// starts "compiler: " and is no OpenSSL build information.
const v8Decoy = "Liftoff\x00TurboFan\x00compiler: \x00Body (size = "

// optimisedProgram is a program's own code, compiled -O2 so that the
// classifier calls it optimised, with extra C appended.
func (k *kit) optimisedProgram(name, target, extra string) string {
	k.t.Helper()
	c := k.source(manyFuncs(80) + extra)
	out := k.path(name)
	testfixture.RunIn(k.t, k.dir, "clang-14", "-target", target, "-ffreestanding", "-O2", "-c", c, "-o", out)
	return out
}

// cBytes is a C initializer holding b exactly, NULs included.
func cBytes(name, b string) string {
	var s strings.Builder
	s.WriteString("__attribute__((used)) const char " + name + "[] = {")
	for _, c := range []byte(b) {
		s.WriteString(strconv.Itoa(int(c)) + ",")
	}
	s.WriteString("0};\n")
	return s.String()
}

// appended copies src and appends b to it, as a tool that concatenates
// data to a binary does.
func appended(t *testing.T, src, dst string, b string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, append(data, b...), 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

var dec1 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// TestDecoyIsNoEvidence: a lone "compiler: " string (V8's) does not make a
// binary OpenSSL, nor its machine code OpenSSL's; OpenSSL's real layout
// beside such a string is still the one chosen.
func TestDecoyIsNoEvidence(t *testing.T) {
	k := newKit(t)
	const execute, dylib = 2, 6
	arm := "arm64-apple-macos11"
	noOpenSSL := k.retype("v8-program", k.optimisedProgram("v8.o", arm, cBytes("wasm_printer", v8Decoy)), execute)
	noOpenSSLLib := k.retype("libz.dylib", k.optimisedProgram("z.o", arm, cBytes("z_strings", "inflate 1.3.1\x00"+v8Decoy)), dylib)
	trueBin := appended(t, "/usr/bin/true", k.path("true-with-decoy"), "\x00"+v8Decoy+"\x00")
	// OpenSSL's layout, -O0 line far from the rest, with the decoy too.
	realO0 := k.retype("node-like-O0", k.macho("n0.o", arm, program(ver357, "darwin64-arm64-cc", lineNoO, true, "-")+cBytes("wasm_printer", v8Decoy)), execute)
	realO3 := k.retype("node-like-O3", k.macho("n3.o", arm, program(ver357, "darwin64-arm64-cc", line35O3, true, "-")+cBytes("wasm_printer", v8Decoy)), execute)

	for _, tc := range []struct {
		name     string
		path     string
		ok       bool
		compiler string // the chosen line, "" for none
		failure  string // in the failures when not ok
	}{
		{"a program without OpenSSL", noOpenSSL, false, "", "no OpenSSL build information"},
		{"a library without OpenSSL", noOpenSSLLib, false, "", "no OpenSSL build information"},
		{"/usr/bin/true with the decoy appended", trueBin, false, "", "no OpenSSL build information"},
		{"OpenSSL at -O0 beside the decoy", realO0, false, lineNoO, "compiler line has no -O flag"},
		{"OpenSSL at -O3 beside the decoy", realO3, true, line35O3, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Check(context.Background(), Options{Path: tc.path, Now: dec1})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Binaries[0].Slices[0]
			if res.OK != tc.ok || s.Compiler != tc.compiler {
				t.Fatalf("OK %v compiler %q, want %v %q; failures %q", res.OK, s.Compiler, tc.ok, tc.compiler, res.Failures)
			}
			if tc.failure != "" && !strings.Contains(strings.Join(res.Failures, "\n"), tc.failure) {
				t.Errorf("failures %q lack %q", res.Failures, tc.failure)
			}
			// The decoy is never chosen; without OpenSSL's strings beside
			// it, it is no evidence at all.
			for _, c := range s.Candidates {
				if c.Line == "" && (c.Chosen || tc.compiler == "" && c.Attested) {
					t.Errorf("the decoy counted: %+v", c)
				}
			}
			if tc.compiler == "" && (s.Status != StatusNotJudged || res.NotJudged != 1) {
				t.Errorf("status %q, %d not judged; want %q, 1", s.Status, res.NotJudged, StatusNotJudged)
			}
		})
	}
}

// TestBazelBoringSSL: BoringSSL built as a Bazel module records its
// sources as "external/boringssl+/crypto/..." (Bazel 8) or
// "external/boringssl~/..." (Bazel 7): named, and judged by its code.
func TestBazelBoringSSL(t *testing.T) {
	k := newKit(t)
	for _, tc := range []struct{ name, path string }{
		{"Bazel 8", "external/boringssl+/crypto/asn1/a_int.cc"},
		{"Bazel 7", "external/boringssl~/src/ssl/ssl_lib.cc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := k.optimisedProgram(strings.ReplaceAll(tc.name, " ", "")+".o", "arm64-apple-macos11",
				"const char *err_file(void) { return \""+tc.path+"\"; }\n")
			bin := k.retype(strings.ReplaceAll(tc.name, " ", "")+"-workerd", obj, 2)
			res, err := Check(context.Background(), Options{Path: bin, Now: dec1})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Binaries[0].Slices[0]
			if !res.OK || s.Family != "BoringSSL" || s.Opt != "optimised" || s.Status != StatusOK {
				t.Errorf("OK %v, family %q, opt %q, status %q; failures %q", res.OK, s.Family, s.Opt, s.Status, res.Failures)
			}
		})
	}
}

// TestO0LineInOptimisedProgram: OpenSSL's -O0 line in a program whose own
// code is optimised fails: the line is OpenSSL's, the rest of the code is
// not, and one kind of evidence never rescues another.
func TestO0LineInOptimisedProgram(t *testing.T) {
	k := newKit(t)
	arm := "arm64-apple-macos11"
	openssl := k.macho("cv.o", arm, program(ver357, "darwin64-arm64-cc", lineNoO, true, "-"))
	own := k.optimisedProgram("own.o", arm, "")
	lib := k.ar("libapp.a", true, openssl, own)
	res, err := Check(context.Background(), Options{Path: lib, Now: dec1})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || !strings.Contains(strings.Join(res.Failures, "\n"), "compiler line has no -O flag") {
		t.Errorf("OK %v, failures %q", res.OK, res.Failures)
	}
}

// TestEndOfLife: a library whose OpenSSL series is past its end of life is
// named with the date in the table, the JSON, the step summary and a note;
// only -strict fails it. A fork's "OpenSSL 1.1.1 (compatible; ...)" is no
// 1.1.1 release.
func TestEndOfLife(t *testing.T) {
	k := newKit(t)
	arm := "arm64-apple-macos11"
	lib111 := k.retype("libcrypto.1.1.dylib", k.macho("e1.o", arm, program("OpenSSL 1.1.1w  11 Sep 2023", "darwin64-arm64-cc", line35O3, false, "-")), 6)
	lib30 := k.retype("libcrypto.3.0.dylib", k.macho("e3.o", arm, program("OpenSSL 3.0.19 27 Jan 2026", "darwin64-arm64-cc", line35O3, false, "-")), 6)
	lib35 := k.retype("libcrypto.3.5.dylib", k.macho("e5.o", arm, program(ver357, "darwin64-arm64-cc", line35O3, false, "-")), 6)
	boring := k.retype("boring.node", k.macho("eb.o", arm, fork("OpenSSL 1.1.1 (compatible; BoringSSL)", "OpenSSL 1.1.1 (compatible; BoringSSL)", "n/a")), 8)
	before := time.Date(2026, 9, 7, 23, 0, 0, 0, time.UTC)

	for _, tc := range []struct {
		name   string
		path   string
		now    time.Time
		strict bool
		ok     bool
		series string // "" for none
		ended  string // the end-of-life date shown, "" when not ended
	}{
		{"1.1.1 reported", lib111, dec1, false, true, "1.1.1", "2023-09-11"},
		{"1.1.1 fails with -strict", lib111, dec1, true, false, "1.1.1", "2023-09-11"},
		{"3.0 after its last day", lib30, dec1, false, true, "3.0", "2026-09-07"},
		{"3.0 fails with -strict", lib30, dec1, true, false, "3.0", "2026-09-07"},
		{"3.0 on its last day is supported", lib30, before, true, true, "3.0", ""},
		{"3.5 is supported", lib35, dec1, true, true, "3.5", ""},
		{"BoringSSL is no 1.1.1", boring, dec1, false, true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			summary := filepath.Join(t.TempDir(), "summary.md")
			env := func(k string) string { return map[string]string{"GITHUB_STEP_SUMMARY": summary}[k] }
			var text, js bytes.Buffer
			err := Run(context.Background(), Options{Path: tc.path, Strict: tc.strict, Now: tc.now, Stdout: &text, Env: env})
			if tc.ok != (err == nil) || err != nil && !errors.Is(err, ErrFailed) {
				t.Fatalf("err = %v, want ok %v\n%s", err, tc.ok, text.String())
			}
			_ = Run(context.Background(), Options{Path: tc.path, Strict: tc.strict, Now: tc.now, JSON: true, Stdout: &js, Env: noEnv})
			var res Result
			if err := json.Unmarshal(js.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
			s := res.Binaries[0].Slices[0]
			switch {
			case tc.series == "" && s.Series != nil:
				t.Errorf("series %+v, want none", s.Series)
			case tc.series != "" && (s.Series == nil || s.Series.Name != tc.series || s.Series.Ended != (tc.ended != "")):
				t.Errorf("series %+v, want %s ended %v", s.Series, tc.series, tc.ended != "")
			}
			md, _ := os.ReadFile(summary)
			notes := strings.Join(res.Notes, "\n")
			fails := strings.Join(res.Failures, "\n")
			if tc.ended == "" {
				if strings.Contains(text.String(), "(end of life") || res.Ended != 0 {
					t.Errorf("end of life reported for a supported series:\n%s", text.String())
				}
				return
			}
			cell := "(end of life " + tc.ended + ")"
			for where, got := range map[string]string{"table": text.String(), "step summary": string(md)} {
				if !strings.Contains(got, cell) || !strings.Contains(got, "1 past end of life") {
					t.Errorf("%s lacks %q and the count:\n%s", where, cell, got)
				}
			}
			said := "reached its end of life on " + tc.ended
			if tc.strict {
				if !strings.Contains(fails, said) || !strings.Contains(text.String(), "FAIL (end-of-life)") {
					t.Errorf("failures %q, table:\n%s", fails, text.String())
				}
			} else if !strings.Contains(notes, said) || !strings.Contains(notes, "-strict fails it") {
				t.Errorf("notes %q lack %q", notes, said)
			}
		})
	}
}

// TestNotJudged: slices check does not judge (a libz beside libcrypto, a
// file without OpenSSL) say so in the table, the JSON, the summary line and
// the step summary, and never read "ok".
func TestNotJudged(t *testing.T) {
	k := newKit(t)
	arm := "arm64-apple-macos11"
	dir := filepath.Join(k.dir, "bundle")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	k.retype(filepath.Join("bundle", "libcrypto.3.dylib"), k.macho("nj1.o", arm, program(ver357, "darwin64-arm64-cc", line35O3, false, "-")), 6)
	k.retype(filepath.Join("bundle", "libz.1.dylib"), k.optimisedProgram("nj2.o", arm, ""), 6)
	summary := filepath.Join(k.dir, "summary.md")
	env := func(k string) string { return map[string]string{"GITHUB_STEP_SUMMARY": summary}[k] }
	var text bytes.Buffer
	if err := Run(context.Background(), Options{Path: dir, Now: dec1, Stdout: &text, Env: env}); err != nil {
		t.Fatalf("%v\n%s", err, text.String())
	}
	res, err := Check(context.Background(), Options{Path: dir, Now: dec1})
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, b := range res.Binaries {
		status[filepath.Base(b.Path)] = b.Slices[0].Status
	}
	if status["libcrypto.3.dylib"] != StatusOK || status["libz.1.dylib"] != StatusNotJudged || res.NotJudged != 1 || res.Slices != 2 {
		t.Errorf("statuses %v, %d of %d not judged", status, res.NotJudged, res.Slices)
	}
	md, _ := os.ReadFile(summary)
	for where, got := range map[string]string{"table": text.String(), "step summary": string(md)} {
		if !strings.Contains(got, "1 not judged (no OpenSSL code)") {
			t.Errorf("%s lacks the not-judged count:\n%s", where, got)
		}
	}
	for _, l := range strings.Split(text.String(), "\n") {
		if strings.HasPrefix(l, "libz.1.dylib") && !strings.Contains(l, "not judged") {
			t.Errorf("libz's row: %q", l)
		}
	}
	if !strings.Contains(string(md), "| not judged |") {
		t.Errorf("step summary lacks the status:\n%s", md)
	}
}
