package check

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// staticFuncs is n static functions and one global caller that keeps
// them all (unused statics are not emitted, even at -O0; noinline keeps
// them functions at -O2).
func staticFuncs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "__attribute__((noinline)) static int s%d(int a, int b, const int *p) { int s = 0; for (int i = 0; i < a; i++) s += p[i] * b + %d; return s ^ a; }\n", i, i)
	}
	b.WriteString("int all(int a, int b, const int *p) { int s = 0;\n")
	for i := range n {
		fmt.Fprintf(&b, "s += s%d(a, b, p);\n", i)
	}
	b.WriteString("return s; }\n")
	return b.String()
}

// TestStrippedFunctions: an object stripped of its local symbols
// (llvm-strip -x) names one function, its global caller, though it holds
// 301; its __compact_unwind entries still point at each. -O0 code under
// an -O3 line is measured over all of them and refused, as it is before
// the strip; -O2 code passes. Before check read __compact_unwind, the
// stripped -O0 object was "too little evidence" over two functions and
// passed even -strict.
func TestStrippedFunctions(t *testing.T) {
	k := newKit(t)
	testfixture.Tools(t, "llvm-strip-14")
	const n = 300
	for _, p := range []struct{ name, target, platform, line string }{
		{"arm64", "arm64-apple-macos11", "darwin64-arm64-cc", lineArmO3},
		{"x86_64", "x86_64-apple-macos10.12", "darwin64-x86_64-cc", lineX86O3},
	} {
		for _, tc := range []struct {
			opt   string
			strip bool
			ok    bool
		}{
			{"-O0", false, false},
			{"-O0", true, false},
			{"-O2", true, true},
		} {
			name := fmt.Sprintf("%s/%s", p.name, tc.opt)
			if tc.strip {
				name += " stripped -x"
			}
			t.Run(name, func(t *testing.T) {
				tag := strings.NewReplacer("/", "-", " ", "-").Replace(name)
				// One compile per architecture and level: the stripped
				// case strips a copy of the unstripped case's object.
				compiled := k.path(p.name + tc.opt + "-funcs.o")
				if _, err := os.Stat(compiled); err != nil {
					// Not -ffreestanding (the kit's default, which drops
					// unwind tables): a real build's objects have
					// __compact_unwind.
					testfixture.RunIn(t, k.dir, "clang-14", "-target", p.target, tc.opt, "-c", k.source(staticFuncs(n)), "-o", compiled)
				}
				funcs := k.path(tag + "-funcs.o")
				testfixture.CopyFile(t, compiled, funcs)
				if tc.strip {
					testfixture.RunIn(t, k.dir, "llvm-strip-14", "-x", funcs)
				}
				lib := k.ar(tag+".a", true, k.macho(tag+"-cversion.o", p.target, cversion(p.line, p.platform)), funcs)
				res, err := Check(context.Background(), Options{Path: lib, MinOpt: "3", Strict: true})
				if err != nil {
					t.Fatal(err)
				}
				s := res.Binaries[0].Slices[0]
				if s.Code == nil {
					t.Fatalf("no code evidence: %+v", s)
				}
				t.Logf("code %+v; failures %q", *s.Code, res.Failures)
				// The caller and the 300 statics (and the build-info
				// object's function, if it has one).
				if s.Code.Functions < n+1 {
					t.Errorf("measured %d functions, want at least %d", s.Code.Functions, n+1)
				}
				if res.OK != tc.ok {
					t.Errorf("OK %v, want %v: failures %q", res.OK, tc.ok, res.Failures)
				}
				if !tc.ok && !strings.Contains(strings.Join(res.Failures, "\n"), "compiler line says -O3 but the machine code looks -O0") {
					t.Errorf("failures do not say the code is -O0 under the -O3 line: %q", res.Failures)
				}
			})
		}
	}
}
