package validate

import (
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/codeclass"
	"github.com/osslbuild/osslbuild/internal/platform"
)

// TestRefusedFlagBackstop: a libcrypto.a whose member clang-14 compiled
// with a compiler line (as OpenSSL embeds it) showing a flag that loads
// code, reads a file into the compile or changes code generation behind
// -O3 fails validation, naming the member and the flag, though the line
// still says -O3 and every flag the plan expects. 5392f1f's validation
// passed each of these.
func TestRefusedFlagBackstop(t *testing.T) {
	tc := needToolchain(t)
	for _, tt := range []struct {
		name, extra, flag, kind string
		also                    string // a second flag of the line reported
	}{
		{"clean", "", "", "", ""},
		{"sanitiser", " -fsanitize=address", "-fsanitize=address", "changes code generation behind -O3", ""},
		{"plugin", " -fplugin=/tmp/evil.so", "-fplugin=/tmp/evil.so", "loads code into the compiler", ""},
		{"pass plugin", " -fpass-plugin=/tmp/evil.so", "-fpass-plugin=/tmp/evil.so", "loads code into the compiler", ""},
		{"-Xclang -load", " -Xclang -load -Xclang /tmp/evil.so", "-Xclang", "loads code into the compiler", "-load"},
		{"-B", " -B/tmp/bin", "-B/tmp/bin", "loads code into the compiler", ""},
		{"no inlining", " -fno-inline", "-fno-inline", "changes code generation behind -O3", ""},
		{"profiling", " -fprofile-instr-generate", "-fprofile-instr-generate", "changes code generation behind -O3", ""},
		{"-U__OPTIMIZE__", " -U__OPTIMIZE__", "-U__OPTIMIZE__", "changes code generation behind -O3", ""},
		{"forced include", " -include/tmp/optimize-off.h", "-include/tmp/optimize-off.h", "reads a file into the compile", ""},
		{"response file", " @/tmp/flags.rsp", "@/tmp/flags.rsp", "reads a file into the compile", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lib := tc.lib(t, t.TempDir(), "libcrypto.a", cv(armTarget, armGood+tt.extra, "darwin64-arm64-cc"), plain("libcrypto-lib-aes", armTarget))
			rep, err := StaticLibrary(lib, expArm)
			var wants []want
			if tt.flag != "" {
				wants = []want{{RuleRefusedFlag, "libcrypto-lib-cversion.o", "compiler line has " + tt.flag + ", which " + tt.kind}}
			}
			if tt.also != "" {
				wants = append(wants, want{RuleRefusedFlag, "libcrypto-lib-cversion.o", "compiler line has " + tt.also + ", which " + tt.kind})
			}
			checkViolations(t, rep, err, "libcrypto.a", "arm64", wants)
		})
	}
}

// TestPlatformCPUsProvable: every CPU value the platform table lets a
// recipe give is a level validation proves code stays within, or, where
// no level is checked, the one baseline.
func TestPlatformCPUsProvable(t *testing.T) {
	for _, p := range platform.All() {
		if p.ISA == "" {
			if len(p.CPUs) > 1 {
				t.Errorf("%s %s: no level is checked, yet the table allows CPUs %q (at most the baseline)", p.OS, p.Arch, p.CPUs)
			}
			continue
		}
		for _, c := range p.CPUs {
			if _, ok := codeclass.LevelRankFor(p.Arch, c); !ok || LevelOf([]string{p.CPUFlags[0] + c}, p.ISA) != c {
				t.Errorf("%s %s: CPU %q is not a level validation proves (%s; %s)", p.OS, p.Arch, c, strings.Join(codeclass.ISALevels, ", "), strings.Join(codeclass.ARM64Levels, ", "))
			}
		}
		if _, ok := codeclass.LevelRankFor(p.Arch, p.ISA); !ok {
			t.Errorf("%s %s: baseline %q is no level of %s", p.OS, p.Arch, p.ISA, p.Arch)
		}
	}
}
