package validate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/codeclass"
	"github.com/osslbuild/osslbuild/internal/platform"
)

// Code above the level only behind a switch's jump table, which the
// instruction-set pass must reach: x86_64 AVX2 (with -mavx2), arm64 BF16
// and SVE (inline assembly in a case).
const (
	isaSwitchX86 = `
typedef int v8si __attribute__((vector_size(32)));
int avx2_switch(int k, v8si *d, const v8si *a, int y) {
	switch (k) {
	case 0: *d = *d + *a; return 1; case 1: return y * 2; case 2: *d = *d ^ *a; return y * 3; case 3: return y + 11;
	case 4: *d = *d - *a; return y - 5; case 5: return y << 2; case 6: return y / 3; case 7: return y % 7;
	}
	return 0;
}
`
	isaSwitchARM64 = `
int m2_switch(int k, int y) {
	switch (k) {
	case 0: return y + 3; case 1: return y * 2; case 2: return y ^ 5; case 3: return y + 11;
	case 4: __asm__ volatile("bfmmla v0.4s, v1.8h, v2.8h" ::: "v0"); return y - 5;
	case 5: return y << 2; case 6: return y / 3; case 7: return y % 7;
	}
	return 0;
}
int sve_switch(int k, int y) {
	switch (k) {
	case 0: return y + 7; case 1: return y * 9; case 2: return y ^ 5; case 4: return y >> 1; case 5: return y * y;
	case 3: __asm__ volatile("add z0.s, z1.s, z2.s" ::: "v0"); return y - 1;
	case 6: return y / 5;
	}
	return 0;
}
`
)

// TestISABehindJumpTable: the build's rule holds compiled code to the
// slice's level through its jump tables, at -O0 and -O3: AVX2 in a case
// fails an x86_64 slice built for core2; on arm64, BF16 in a case fails
// apple-m1 (the default) and passes -mcpu=apple-m2, and SVE fails both.
// 5392f1f's rule caught the AVX2 and read no arm64 code.
func TestISABehindJumpTable(t *testing.T) {
	tc := needToolchain(t)
	dir := t.TempDir()
	x86 := platform.Slice{Name: "x86_64", Configure: "darwin64-x86_64-cc", OS: "macos", Arch: "x86_64", MinOS: "10.12",
		Flags: []string{"-mmacosx-version-min=10.12", "-march=core2"}}
	arm := platform.Slice{Name: "arm64", Configure: "darwin64-arm64-cc", OS: "macos", Arch: "arm64", MinOS: "11.0",
		Flags: []string{"-mmacosx-version-min=11.0"}}
	armM2 := arm
	armM2.Flags = append(append([]string(nil), arm.Flags...), "-mcpu=apple-m2")
	for _, tt := range []struct {
		name   string
		slice  platform.Slice
		target string
		src    string
		flags  []string
		want   []string // "function uses EXT" in the instruction-set violations
	}{
		{"x86_64 AVX2 behind a table, -O0", x86, "x86_64-apple-macos10.12", isaSwitchX86, []string{"-O0", "-mavx2"}, []string{"avx2_switch uses AVX"}},
		{"x86_64 AVX2 behind a table, -O3", x86, "x86_64-apple-macos10.12", isaSwitchX86, []string{"-O3", "-mavx2"}, []string{"avx2_switch uses AVX"}},
		{"arm64 BF16 and SVE at apple-m1, -O0", arm, "arm64-apple-macos11", isaSwitchARM64, []string{"-O0", "-march=armv8.6-a+bf16+sve"}, []string{"m2_switch uses BF16", "sve_switch uses SVE"}},
		{"arm64 BF16 and SVE at apple-m1, -O3", arm, "arm64-apple-macos11", isaSwitchARM64, []string{"-O3", "-march=armv8.6-a+bf16+sve"}, []string{"m2_switch uses BF16", "sve_switch uses SVE"}},
		{"arm64 at -mcpu=apple-m2: SVE only", armM2, "arm64-apple-macos11", isaSwitchARM64, []string{"-O3", "-march=armv8.6-a+bf16+sve"}, []string{"sve_switch uses SVE"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sub := filepath.Join(dir, strings.NewReplacer(" ", "_", ",", "", ":", "").Replace(tt.name))
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			c := filepath.Join(sub, "switch.c")
			if err := os.WriteFile(c, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			o := filepath.Join(sub, "switch.o")
			run(t, tc.clang, append([]string{"-target", tt.target, "-nostdinc", "-c", c, "-o", o}, tt.flags...)...)
			raw, err := os.ReadFile(o)
			if err != nil {
				t.Fatal(err)
			}
			lib := tc.lib(t, sub, "libcrypto.a", obj{name: "libcrypto-lib-switch", raw: raw})
			f, err := codeclass.Inspect(context.Background(), lib)
			if err != nil {
				t.Fatal(err)
			}
			exp := Built(tt.slice, "libcrypto.a")
			if exp.ISA == nil {
				t.Fatalf("Built(%v) holds no level", tt.slice.Flags)
			}
			rep, err := Validate(f, exp)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range rep.Violations {
				if v.Rule == RuleISA {
					got = append(got, v.Detail)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("instruction-set violations %q, want %d: %q (level %+v)", got, len(tt.want), tt.want, f.Slices[0].Code.ISA)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) || !strings.Contains(got[i], "above "+exp.ISA.Limit) {
					t.Errorf("violation %q, want %q above %s", got[i], w, exp.ISA.Limit)
				}
			}
		})
	}
}
