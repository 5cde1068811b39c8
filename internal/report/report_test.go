package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/platform"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, data, prop string }{
		{"plain", "plain", "plain"},
		{"100%", "100%25", "100%25"},
		{"a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
		{"x:y,z", "x:y,z", "x%3Ay%2Cz"},
		{"%0A", "%250A", "%250A"}, // an escape sequence in data stays literal
	} {
		if got := EscapeData(tc.in); got != tc.data {
			t.Errorf("EscapeData(%q) = %q, want %q", tc.in, got, tc.data)
		}
		if got := EscapeProperty(tc.in); got != tc.prop {
			t.Errorf("EscapeProperty(%q) = %q, want %q", tc.in, got, tc.prop)
		}
	}
}

func TestAnnotations(t *testing.T) {
	var b bytes.Buffer
	Error(&b, Annotation{File: "dist/a,b.whl", Title: "check: arm64", Msg: "built without optimisation (-O0)\nsecond line 50%"})
	Warning(&b, Annotation{Msg: "no properties"})
	Notice(&b, Annotation{File: "f", Line: 3, Msg: "m"})
	want := "::error file=dist/a%2Cb.whl,title=check%3A arm64::built without optimisation (-O0)%0Asecond line 50%25\n" +
		"::warning::no properties\n" +
		"::notice file=f,line=3::m\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestGroup(t *testing.T) {
	fail := errors.New("boom")
	var b bytes.Buffer
	actions := func(k string) string { return map[string]string{"GITHUB_ACTIONS": "true"}[k] }
	err := Group(&b, actions, "build arm64", func() error { b.WriteString("inside\n"); return fail })
	if err != fail || b.String() != "::group::build arm64\ninside\n::endgroup::\n" {
		t.Errorf("%v %q", err, b.String())
	}
	b.Reset()
	Group(&b, func(string) string { return "" }, "build arm64", func() error { return nil })
	if b.String() != "== build arm64 ==\n" {
		t.Errorf("%q", b.String())
	}
}

var rows = []Row{
	{Artifact: "dist/x.whl(pkg/_rust.abi3.so)", Arch: "arm64", Version: "4.0.2", MinOS: "11.0", Opt: "-O0 (no -O)", Code: "-O0-like 0.91/412",
		Compiler: "cc -fPIC -arch arm64 -mmacosx-version-min=11.0 -DL_ENDIAN -DOPENSSL_PIC -D_REENTRANT -DNDEBUG -DEXTRA", Status: "FAIL (optimisation)", Digest: "ab12"},
	{Artifact: "lib|odd\x1b[31m", Arch: "x86_64", Opt: "-O3", Compiler: "a `b` | c", Status: "ok"},
}

func TestTable(t *testing.T) {
	var b bytes.Buffer
	if err := Table(&b, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	col := strings.Index(lines[0], "ARCH")
	if !strings.HasPrefix(lines[1][col:], "arm64 ") || !strings.HasPrefix(lines[2][col:], "x86_64 ") {
		t.Errorf("ARCH column not aligned:\n%s", b.String())
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Error("control character reached the terminal")
	}
	if !strings.HasSuffix(lines[1], "…") || strings.Contains(lines[1], "-DEXTRA") {
		t.Errorf("long compiler line not cut: %q", lines[1])
	}
	if !strings.Contains(lines[2], " - ") { // empty cells show "-"
		t.Errorf("empty cell: %q", lines[2])
	}
}

func TestMarkdownAndSummary(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "summary.md")
	env := func(k string) string { return map[string]string{"GITHUB_STEP_SUMMARY": p}[k] }
	if err := AppendSummary(env, "check *x*", rows); err != nil {
		t.Fatal(err)
	}
	if err := AppendSummary(env, "again", rows[:1]); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	want := "### check \\*x\\*\n\n" +
		"| artifact | arch | version | minos | opt | code | isa | status | compiler | sha256 |\n" +
		"|---|---|---|---|---|---|---|---|---|---|\n" +
		"| dist/x.whl(pkg/\\_rust.abi3.so) | arm64 | 4.0.2 | 11.0 | -O0 (no -O) | -O0-like 0.91/412 | - | FAIL (optimisation) | ` cc -fPIC -arch arm64 -mmacosx-version-min=11.0 -DL_ENDIAN -DOPENSSL_PIC -D_REENTRANT -DNDEBUG -DEXTRA ` | ` ab12 ` |\n" +
		"| lib\\|odd?\\[31m | x86\\_64 | - | - | -O3 | - | - | ok | `` a `b` \\| c `` | - |\n\n" +
		"### again\n\n"
	if !strings.HasPrefix(string(b), want) {
		t.Errorf("got\n%s\nwant prefix\n%s", b, want)
	}
	// Unset: nothing written, no error.
	if err := AppendSummary(func(string) string { return "" }, "x", rows); err != nil {
		t.Error(err)
	}
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	JSON(&b, map[string]string{"a": "<b>"})
	if b.String() != "{\n  \"a\": \"<b>\"\n}\n" {
		t.Errorf("%q", b.String())
	}
}

func TestSafeText(t *testing.T) {
	actions := func(k string) string { return map[string]string{"GITHUB_ACTIONS": "true"}[k] }
	none := func(string) string { return "" }
	for _, tc := range []struct{ in, plain, gha string }{
		{"lib/libcrypto.a: ok", "lib/libcrypto.a: ok", "lib/libcrypto.a: ok"},
		{"a\n::warning::x", "a?::warning::x", "a%0A::warning::x"},
		{"::error::x", "::error::x", "%3A:error::x"},
		{" \t::error::x", " \t::error::x", " \t%3A:error::x"},
		{"x ##[error]y", "x ##[error]y", "x ##%5Berror]y"},
		{"r\r\x1b[31m", "r??[31m", "r%0D?[31m"},
	} {
		if got := SafeText(none, tc.in); got != tc.plain {
			t.Errorf("SafeText(%q) = %q, want %q", tc.in, got, tc.plain)
		}
		if got := SafeText(actions, tc.in); got != tc.gha {
			t.Errorf("SafeText(%q) in Actions = %q, want %q", tc.in, got, tc.gha)
		}
	}
	out := "ARTIFACT\n::error::x  arm64\nFAIL ##[error]\n"
	if got := string(SafeOutput(actions, []byte(out), false)); got != "ARTIFACT\n%3A:error::x  arm64\nFAIL ##%5Berror]\n" {
		t.Errorf("SafeOutput text: %q", got)
	}
	if got := string(SafeOutput(none, []byte(out), false)); got != out {
		t.Errorf("SafeOutput outside Actions changed the output: %q", got)
	}
	js := "{\n  \"path\": \"##[error]x\"\n}\n"
	got := SafeOutput(actions, []byte(js), true)
	var v map[string]string
	if err := json.Unmarshal(got, &v); err != nil || v["path"] != "##[error]x" || bytes.Contains(got, []byte("##[")) {
		t.Errorf("SafeOutput JSON: %s (%v)", got, err)
	}
}

// A published artifact's summary has a row per compiler line, with the
// code's verdict beside it, and a row for a library known by its code
// alone (libssl.a records no line).
func TestSummaryRowsCode(t *testing.T) {
	m := &artifact.Manifest{Name: "openssl-macos-arm64", OpenSSL: artifact.Source{Version: "4.0.2"},
		Target:        platform.Slice{Arch: "arm64", MinOS: "11.0"},
		CompilerLines: []artifact.CompilerLine{{Arch: "arm64", Library: "libcrypto.a", Line: "compiler: cc -O3", Opt: "-O3"}},
		CodeEvidence: []artifact.CodeEvidence{
			{Arch: "arm64", Library: "libcrypto.a", Class: "optimised", Score: 0.018, Functions: 2674},
			{Arch: "arm64", Library: "libssl.a", Class: "optimised", Score: 0.031, Functions: 812},
		}}
	pub := &artifact.Published{Tarball: "dist/openssl-macos-arm64.tar.gz"}
	got := SummaryRows(m, pub, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	want := []Row{
		{Artifact: "openssl-macos-arm64.tar.gz(libcrypto.a)", Arch: "arm64", Version: "4.0.2", MinOS: "11.0", Opt: "-O3", Code: "optimised 0.02/2674", Compiler: "cc -O3", Status: "ok"},
		{Artifact: "openssl-macos-arm64.tar.gz(libssl.a)", Arch: "arm64", Version: "4.0.2", MinOS: "11.0", Code: "optimised 0.03/812", Status: "ok"},
	}
	if len(got) != len(want) {
		t.Fatalf("rows:\n got %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// A build of a release with a known high or critical advisory says so
// under Actions, naming the release that fixes it; one without none.
func TestPublishedAdvisories(t *testing.T) {
	for _, tt := range []struct {
		version string
		warning []string // in the annotation; none when empty
	}{
		{"3.5.7", []string{"::warning title=openssl-macos-arm64%3A known advisories::OpenSSL 3.5.7: ", "CVE-2026-84782 (high, 2026-09-29)", "fixed in 3.5."}},
		{"1.1.1w", []string{"CVE-2026-84782 (high, 2026-09-29)", "no public fix ("}},
		{"4.0.3", nil},
	} {
		t.Run(tt.version, func(t *testing.T) {
			var out bytes.Buffer
			env := func(k string) string { return map[string]string{"GITHUB_ACTIONS": "true"}[k] }
			b := &Builds{W: &out, Env: env, Now: func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }}
			m := &artifact.Manifest{Name: "openssl-macos-arm64", OpenSSL: artifact.Source{Version: tt.version},
				Target:        platform.Slice{Arch: "arm64", MinOS: "11.0"},
				CompilerLines: []artifact.CompilerLine{{Arch: "arm64", Library: "libcrypto.a", Line: "compiler: cc -O3", Opt: "-O3"}}}
			b.Published(m, &artifact.Published{Tarball: "dist/openssl-macos-arm64.tar.gz"})
			if tt.warning == nil && strings.Contains(out.String(), "known advisories::") {
				t.Errorf("warned: %s", out.String())
			}
			for _, w := range tt.warning {
				if !strings.Contains(out.String(), w) {
					t.Errorf("log lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// A build of a release whose series has ended says so in the step summary
// (the version cell) and, under Actions, as a warning annotation with the
// date; a supported release gets neither.
func TestPublishedEndOfLife(t *testing.T) {
	day := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		version, cell, warning string
	}{
		{"3.0.22", "3.0.22 (end of life 2026-09-07)", "::warning title=openssl-macos-arm64%3A end of life::OpenSSL 3.0.22: the 3.0 series (LTS) reached its end of life on 2026-09-07"},
		{"3.6.3", "3.6.3 (end of life 2026-11-01)", "reached its end of life on 2026-11-01"},
		{"3.5.7", "3.5.7", ""},
	} {
		t.Run(tt.version, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "summary.md")
			env := func(k string) string {
				return map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": p}[k]
			}
			var out bytes.Buffer
			b := &Builds{W: &out, Env: env, Now: func() time.Time { return day }}
			m := &artifact.Manifest{Name: "openssl-macos-arm64", OpenSSL: artifact.Source{Version: tt.version},
				Target:        platform.Slice{Arch: "arm64", MinOS: "11.0"},
				CompilerLines: []artifact.CompilerLine{{Arch: "arm64", Library: "libcrypto.a", Line: "compiler: cc -O3", Opt: "-O3"}}}
			b.Published(m, &artifact.Published{Tarball: "dist/openssl-macos-arm64.tar.gz"})
			sum, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(sum), "| "+tt.cell+" |") {
				t.Errorf("summary lacks version cell %q:\n%s", tt.cell, sum)
			}
			if tt.warning == "" {
				if strings.Contains(out.String(), "end of life::") {
					t.Errorf("a supported release warned: %s", out.String())
				}
			} else if !strings.Contains(out.String(), tt.warning) {
				t.Errorf("log lacks %q:\n%s", tt.warning, out.String())
			}
		})
	}
}
