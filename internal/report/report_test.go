package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
	Warning(&b, Annotation{File: "f", Line: 3, Msg: "m"})
	want := "::error file=dist/a%2Cb.whl,title=check%3A arm64::built without optimisation (-O0)%0Asecond line 50%25\n" +
		"::warning::no properties\n" +
		"::warning file=f,line=3::m\n"
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
	if err := Table(&b, rows, 0); err != nil {
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

// TestTableFits: at a width, a group's rows sit under one heading naming
// the archive and the folder they share, every line fits, the compiler
// line is left out when it does not fit, and a line names the columns
// left out.
func TestTableFits(t *testing.T) {
	rows := []Row{
		{Group: "dist/cryptography-46.0.0-cp311-abi3-macosx_10_9_universal2.whl", Artifact: "cryptography/hazmat/bindings/_rust.abi3.so", Arch: "x86_64", Version: "3.5.7", MinOS: "10.12",
			Opt: "-O3", Code: "optimised 0.02/2674", ISA: "x86-64-v3 (12 dispatched)", Status: "ok", Advisories: "36 (high), fix 3.5.9", Compiler: "cc -fPIC -arch x86_64 -O3"},
		{Group: "dist/cryptography-46.0.0-cp311-abi3-macosx_10_9_universal2.whl", Artifact: "cryptography/hazmat/bindings/_openssl.abi3.so", Arch: "arm64", Version: "3.5.7", MinOS: "11.0",
			Opt: "-O3", Code: "optimised 0.02/2674", ISA: "apple-m1", Status: "ok", Advisories: "36 (high), fix 3.5.9", Compiler: "cc -fPIC -arch arm64 -O3"},
		{Artifact: "a/very/long/directory/name/that/goes/on/libcrypto.a", Arch: "arm64", Version: "3.5.7", Opt: "-O3", Status: "FAIL (optimisation)"},
	}
	for _, width := range []int{100, 80} {
		var b bytes.Buffer
		if err := Table(&b, rows, width); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("width %d: a line of %d runes: %q", width, n, l)
			}
		}
		heading := "dist/cryptography-46.0.0-cp311-abi3-macosx_10_9_universal2.whl(cryptography/hazmat/bindings/)"
		if width == 80 { // the archive's folder goes, then the middle of the one inside
			heading = "cryptography-46.0.0-cp311-abi3-macosx_10_9_universal2.whl(cryptography/hazmat…/)"
		}
		if len(lines) != 6 || lines[1] != heading || !strings.HasPrefix(lines[2], "  _rust.abi3.so ") || !strings.HasPrefix(lines[3], "  _openssl.abi3.so ") ||
			!strings.HasPrefix(lines[4], "a/very/long/dire") || !strings.Contains(lines[4], "…/libcrypto.a ") {
			t.Errorf("width %d:\n%s", width, out)
		}
		if strings.Contains(lines[0], "COMPILER") || !strings.HasPrefix(lines[5], "(not shown in ") {
			t.Errorf("width %d: the compiler line shown, or no line names what is left out:\n%s", width, out)
		}
	}
}

// TestFitDropsAndRestores: columns are left out lowest drop first while
// cutting the path is not enough, and one left out early comes back when
// it fits beside the rest.
func TestFitDropsAndRestores(t *testing.T) {
	path := &column{head: "P", nat: 30, floor: 24, path: true}
	a, b, c := &column{head: "A", nat: 10, drop: 1}, &column{head: "B", nat: 5, drop: 2}, &column{head: "C", nat: 40, drop: 3}
	cols := []*column{path, a, b, c}
	if got := fit(cols, 60); !slices.Equal(got, []string{"C"}) || a.gone || b.gone || !c.gone || lineWidth(cols) > 60 || path.cur != 30 {
		t.Errorf("dropped %v; gone A %v B %v C %v; width %d, path %d", got, a.gone, b.gone, c.gone, lineWidth(cols), path.cur)
	}
}
