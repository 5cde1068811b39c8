package check

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestLittleO0Evidence: a stripped static library built at -O0 whose
// compiler line claims -O3 leaves the classifier only a few functions
// (fewer than a verdict needs), and those look -O0. That is all the
// evidence there is against the line: -strict fails it (rule
// optimisation, naming score and count), without -strict a note says so.
// Optimised code with as little evidence stays quiet, and so does -O0
// code in fewer than 10 functions (a build-info object alone is one). Real objects:
// clang-14 for macOS arm64 and x86_64, gcc for Linux, stripped with
// llvm-strip-14.
func TestLittleO0Evidence(t *testing.T) {
	k := newKit(t)
	testfixture.Tools(t, "llvm-strip-14")
	for _, p := range []struct {
		name, target, platform, line string
	}{
		{"arm64", "arm64-apple-macos11", "darwin64-arm64-cc", lineArmO3},
		{"x86_64", "x86_64-apple-macos10.12", "darwin64-x86_64-cc", lineX86O3},
		{"linux-x86_64", "", "linux-x86_64", "gcc -fPIC -pthread -m64 -Wall -O3 -DOPENSSL_PIC"},
	} {
		// lib is the stripped archive: cversion.o and sixteen members of
		// a few functions each, compiled at opt in one compiler run;
		// stripped, each member's code is one function to the classifier.
		libs := map[string]string{}
		lib := func(opt string, members int) string {
			t.Helper()
			prefix := fmt.Sprintf("%s%s-%d-", p.name, opt, members)
			if l, ok := libs[prefix]; ok {
				return l
			}
			srcs := []string{k.path(prefix + "cversion.c")}
			os.WriteFile(srcs[0], []byte(cversion(p.line, p.platform)), 0o644)
			for i := range members {
				srcs = append(srcs, k.path(fmt.Sprintf("%sm%d.c", prefix, i)))
				os.WriteFile(srcs[i+1], []byte(strings.ReplaceAll(manyFuncs(4), "int f", fmt.Sprintf("int m%d_f", i))), 0o644)
			}
			cc := []string{"gcc", opt, "-c"}
			if p.target != "" {
				cc = []string{"clang-14", "-target", p.target, "-ffreestanding", opt, "-c"}
			}
			testfixture.RunIn(t, k.dir, append(cc, srcs...)...)
			var objs []string
			for _, c := range srcs {
				objs = append(objs, strings.TrimSuffix(c, ".c")+".o")
			}
			l := k.ar(prefix+"libcrypto.a", p.target != "", objs...)
			testfixture.RunIn(t, k.dir, "llvm-strip-14", l)
			libs[prefix] = l
			return l
		}
		for _, tc := range []struct {
			name    string
			codeOpt string
			strict  bool
			ok      bool
			failure string // in the failures
			note    string // in the notes
			members int
		}{
			{"-O0 code, -strict", "-O0", true, false, " over 16 functions, fewer than the 30 a verdict needs): -strict fails it", "", 16},
			{"-O0 code", "-O0", false, true, "", " over 16 functions, fewer than the 30 a verdict needs) (reported, not failed; -strict fails it)", 16},
			{"-O2 code, -strict", "-O2", true, true, "", "", 16},
			{"-O0 code in 9 members, -strict: too few to weigh", "-O0", true, true, "", "", 9},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				lib := lib(tc.codeOpt, tc.members)
				res, err := Check(context.Background(), Options{Path: lib, MinOpt: "3", Strict: tc.strict})
				if err != nil {
					t.Fatal(err)
				}
				s := res.Binaries[0].Slices[0]
				t.Logf("opt %q, code %+v; failures %q; notes %q", s.Opt, s.Code, res.Failures, res.Notes)
				if s.Code == nil || s.Code.Class != "too little evidence" || s.Opt != "-O3" {
					t.Fatalf("code %+v, opt %q: want too little evidence under an -O3 line", s.Code, s.Opt)
				}
				if res.OK != tc.ok {
					t.Errorf("ok %v, want %v: %q", res.OK, tc.ok, res.Failures)
				}
				if fs := strings.Join(res.Failures, "\n"); tc.failure != "" && (!strings.Contains(fs, "compiler line says -O3 but the little machine code there is looks -O0 (score ") || !strings.Contains(fs, tc.failure)) {
					t.Errorf("failures lack %q: %q", tc.failure, res.Failures)
				}
				if tc.failure != "" && (len(s.Problems) == 0 || s.Problems[0].Rule != "optimisation") {
					t.Errorf("problems %+v: want rule optimisation", s.Problems)
				}
				notes := strings.Join(res.Notes, "\n")
				if tc.note != "" && !strings.Contains(notes, tc.note) {
					t.Errorf("notes lack %q: %q", tc.note, res.Notes)
				}
				if tc.note == "" && strings.Contains(notes, "little machine code") {
					t.Errorf("notes %q", res.Notes)
				}
			})
		}
	}
}
