package check

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// manyFuncs is C with n functions that take arguments and keep locals: at
// -O0 each spills and reloads them, optimised none does.
func manyFuncs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "int f%d(int a, int b, const int *p) { int s = 0; for (int i = 0; i < a; i++) s += p[i] * b + %d; return s ^ a; }\n", i, i)
	}
	return b.String()
}

// TestCodeEvidenceAgainstLine: a libcrypto.a whose compiler line says one
// thing and whose machine code another is refused, naming both; where they
// agree, or the code has too little evidence, the line decides. Real
// objects, compiled here for macOS arm64 and x86_64 (clang-14) and for
// linux-x86_64 (gcc) at the levels named.
func TestCodeEvidenceAgainstLine(t *testing.T) {
	k := newKit(t)
	compile := func(name, target, src string, opt string) string {
		t.Helper()
		c := k.source(src)
		out := k.path(name)
		if target == "" {
			testfixture.RunIn(t, k.dir, "gcc", opt, "-c", c, "-o", out)
		} else {
			testfixture.RunIn(t, k.dir, "clang-14", "-target", target, "-ffreestanding", opt, "-c", c, "-o", out)
		}
		return out
	}
	for _, p := range []struct {
		name, target, platform, lineO3, lineNoO string
	}{
		{"arm64", "arm64-apple-macos11", "darwin64-arm64-cc", lineArmO3, lineArmO0},
		{"x86_64", "x86_64-apple-macos10.12", "darwin64-x86_64-cc", lineX86O3, "cc -fPIC -arch x86_64 -mmacosx-version-min=10.12 -march=core2 -DL_ENDIAN"},
		{"linux-x86_64", "", "linux-x86_64", "gcc -fPIC -pthread -m64 -Wall -O3 -DOPENSSL_PIC", "gcc -fPIC -pthread -m64 -Wall -DOPENSSL_PIC"},
	} {
		for _, tc := range []struct {
			name    string
			line    string
			codeOpt string
			funcs   int
			minopt  string
			ok      bool
			want    string // in the failures when not ok
			code    string // the slice's code class
		}{
			{"line -O3, code -O0: refused", p.lineO3, "-O0", 60, "3", false,
				"compiler line says -O3 but the machine code looks -O0 (score ", "-O0-like"},
			{"no -O in the line, code optimised: refused even at -minopt=0", p.lineNoO, "-O2", 60, "0", false,
				"compiler line has no -O flag (-O0) but the machine code looks optimised (score ", "optimised"},
			{"line -O3, code optimised: passes", p.lineO3, "-O2", 60, "3", true, "", "optimised"},
			{"no -O in the line, code -O0: the line fails alone", p.lineNoO, "-O0", 60, "3", false,
				"compiler line has no -O flag (built without optimisation (-O0)), expected at least -O3", "-O0-like"},
			{"line -O3, too little code at -O0: reported, not failed", p.lineO3, "-O0", 5, "3", true, "", "too little evidence"},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				darwin := p.target != ""
				name := strings.NewReplacer(" ", "_", ",", "", ":", "").Replace(p.name + tc.name)
				objs := []string{
					compile(name+"-cversion.o", p.target, cversion(tc.line, p.platform), "-O0"),
					compile(name+"-funcs.o", p.target, manyFuncs(tc.funcs), tc.codeOpt),
				}
				lib := k.ar(name+".a", darwin, objs...)
				res, err := Check(context.Background(), Options{Path: lib, MinOpt: tc.minopt})
				if err != nil {
					t.Fatal(err)
				}
				s := res.Binaries[0].Slices[0]
				t.Logf("opt %q (%s), code %+v; failures %q", s.Opt, s.OptSource, s.Code, res.Failures)
				if s.Code == nil || s.Code.Class != tc.code {
					t.Errorf("code %+v, want %s", s.Code, tc.code)
				}
				if res.OK != tc.ok {
					t.Errorf("ok %v, want %v: %q", res.OK, tc.ok, res.Failures)
				}
				all := strings.Join(res.Failures, "\n")
				if tc.want != "" && !strings.Contains(all, tc.want) {
					t.Errorf("failures lack %q: %q", tc.want, res.Failures)
				}
				if tc.ok && s.OptSource != "compiler-line" {
					t.Errorf("verdict rests on %q, want the compiler line", s.OptSource)
				}
			})
		}
	}
}
