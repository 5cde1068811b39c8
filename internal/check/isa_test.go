package check

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/codeclass"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/dispatch"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// C that compilers turn into the extensions its flags allow.
const (
	// vectorised integer and float loops, a variable shift, a multiply-add.
	isaLoops = `
void add_ints(int *restrict d, const int *restrict a, const int *restrict b, int n) { for (int i = 0; i < n; i++) d[i] = a[i] + b[i]; }
void min_ints(int *restrict d, const int *restrict a, const int *restrict b, int n) { for (int i = 0; i < n; i++) d[i] = a[i] < b[i] ? a[i] : b[i]; }
void fma_floats(float *restrict d, const float *restrict a, const float *restrict b, int n) { for (int i = 0; i < n; i++) d[i] = d[i] + a[i] * b[i]; }
unsigned long shift(unsigned long x, unsigned n) { return x << (n & 63); }
`
	isaPopcount = "int bits(unsigned long x) { return __builtin_popcountl(x); }\n"
	isaCtz      = "int low(unsigned x) { return __builtin_ctz(x); }\n"
	// A function compiled for AVX2 on purpose, as OpenSSL's base64
	// encoder is, in a file otherwise built for core2.
	isaTargeted = `
__attribute__((target("avx2")))
void wide_add(int *restrict d, const int *restrict a, const int *restrict b, int n)
{
    for (int i = 0; i < n; i++)
        d[i] = a[i] + b[i];
}

int plain_sum(const int *a, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += a[i];
    return s;
}
`
	// SSSE3's byte shuffle, which -march=core2 has and the baseline lacks.
	isaShuffle = "typedef char v16 __attribute__((vector_size(16)));\nv16 shuffle(v16 a, v16 b) { return __builtin_ia32_pshufb128(a, b); }\n"
	// Hand-written assembly using AVX2, as perlasm writes it (no
	// .subsections_via_symbols).
	isaAsm = `	.text
	.globl _sha256_block_avx2
_sha256_block_avx2:
	vpaddd %ymm0, %ymm1, %ymm2
	vpshufb %ymm3, %ymm2, %ymm2
	vzeroupper
	ret
`
)

// isaLib compiles sources for x86_64 macOS with extra flags into an
// archive holding the cversion of an OpenSSL line that claims -march=core2.
func (k *kit) isaLib(name string, flags []string, srcs ...string) string {
	k.t.Helper()
	objs := []string{k.macho(name+"-cversion.o", "x86_64-apple-macos10.12", cversion(lineX86O3, "darwin64-x86_64-cc"))}
	for i, src := range srcs {
		c := k.source(src)
		out := k.path(name + "-" + string(rune('a'+i)) + ".o")
		testfixture.RunIn(k.t, k.dir, append(append([]string{"clang-14", "-target", "x86_64-apple-macos10.12", "-ffreestanding", "-O2", "-fno-unroll-loops"}, flags...), "-c", c, "-o", out)...)
		objs = append(objs, out)
	}
	return k.ar(name+".a", true, objs...)
}

// asmObject assembles x86-64 assembly for macOS.
func (k *kit) asmObject(name, src string) string {
	k.t.Helper()
	p := k.path(name + ".s")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		k.t.Fatal(err)
	}
	out := k.path(name + ".o")
	testfixture.RunIn(k.t, k.dir, "clang-14", "-target", "x86_64-apple-macos10.12", "-c", p, "-o", out)
	return out
}

// TestISAOfCompiledCode: check reports each slice's level and the
// functions above it, and -isa fails compiled code above the level,
// naming member, function and instruction; assembly does not count.
func TestISAOfCompiledCode(t *testing.T) {
	k := newKit(t)
	haswell := k.isaLib("haswell", []string{"-march=haswell"}, isaLoops)
	sse41 := k.isaLib("sse41", []string{"-march=core2", "-msse4.1"}, isaLoops)
	popcnt := k.isaLib("popcnt", []string{"-march=core2", "-mpopcnt"}, isaPopcount)
	bmi := k.isaLib("bmi", []string{"-march=core2", "-mbmi"}, isaCtz)
	core2 := k.isaLib("core2", []string{"-march=core2"}, isaLoops, isaPopcount, isaCtz, isaShuffle)
	asm := k.ar("asm.a", true, k.macho("asm-cversion.o", "x86_64-apple-macos10.12", cversion(lineX86O3, "darwin64-x86_64-cc")), k.asmObject("sha256-avx2", isaAsm))

	for _, tc := range []struct {
		name, path, isa string
		ok              bool
		level           string
		exts            []string // among the extensions reported
		above           string   // function named in a failure, "" for none
		ext             string   // its extension
	}{
		{"-march=haswell: AVX2, FMA, BMI2 above core2", haswell, "core2", false, "x86-64-v3", []string{"AVX2", "FMA", "BMI2"}, "add_ints", "AVX2"},
		{"-march=haswell passes -isa=x86-64-v3", haswell, "x86-64-v3", true, "x86-64-v3", nil, "", ""},
		{"-msse4.1 alone: SSE4.1, no VEX", sse41, "core2", false, "x86-64-v2", []string{"SSE4.1"}, "min_ints", "SSE4.1"},
		{"-mpopcnt alone", popcnt, "core2", false, "x86-64-v2", []string{"POPCNT"}, "bits", "POPCNT"},
		{"-mbmi: TZCNT, which older CPUs run as BSF", bmi, "x86-64-v2", false, "x86-64-v3", []string{"BMI1"}, "low", "BMI1"},
		{"core2 code passes -isa=core2", core2, "core2", true, "core2", nil, "", ""},
		{"core2 code fails -isa=x86-64", core2, "x86-64", false, "core2", []string{"SSSE3"}, "shuffle", "SSSE3"},
		{"AVX2 assembly does not count", asm, "x86-64", true, "x86-64", nil, "", ""},
		{"no -isa: reported, not failed", haswell, "", true, "x86-64-v3", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Check(context.Background(), Options{Path: tc.path, ISA: tc.isa, Now: dec1})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Binaries[0].Slices[0]
			if s.ISA == nil {
				t.Fatalf("no instruction-set evidence: %+v", s)
			}
			if res.OK != tc.ok || s.ISA.Level != tc.level {
				t.Fatalf("OK %v, level %q; want %v, %q; failures %q; isa %+v", res.OK, s.ISA.Level, tc.ok, tc.level, res.Failures, s.ISA)
			}
			for _, e := range tc.exts {
				if !slices.Contains(s.ISA.Extensions, e) {
					t.Errorf("extensions %v lack %s", s.ISA.Extensions, e)
				}
			}
			fails := strings.Join(res.Failures, "\n")
			if !tc.ok && (!strings.Contains(fails, "instruction-set") && !strings.Contains(fails, "uses "+tc.ext) || !strings.Contains(fails, tc.above)) {
				t.Errorf("failures %q lack %s using %s", res.Failures, tc.above, tc.ext)
			}
			if !tc.ok {
				// member, function and instruction are named
				for _, f := range res.Failures {
					if strings.Contains(f, "uses "+tc.ext) && !strings.Contains(f, ".o)") {
						t.Errorf("failure names no member: %s", f)
					}
				}
			}
			if strings.Contains(tc.name, "assembly") && s.ISA.AsmObjects != 1 {
				t.Errorf("asm objects %d, want 1", s.ISA.AsmObjects)
			}
		})
	}
}

// TestISADispatchInBuild: the build's rule exempts exactly the functions
// the sources compile for a higher target on purpose, as scanned from the
// source tree; the same function not in the list fails.
func TestISADispatchInBuild(t *testing.T) {
	k := newKit(t)
	lib := k.isaLib("targeted", []string{"-march=core2"}, isaTargeted)
	tree := filepath.Join(k.dir, "tree", "crypto")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "wide.c"), []byte(isaTargeted), 0o644); err != nil {
		t.Fatal(err)
	}
	listed, err := dispatch.Scan(os.DirFS(filepath.Dir(tree)))
	if err != nil || len(listed) != 1 || listed[0].Name != "wide_add" || listed[0].File != "crypto/wide.c" {
		t.Fatalf("Scan = %+v, %v", listed, err)
	}
	slice := platform.Slice{Name: "x86_64", Configure: "darwin64-x86_64-cc", OS: "macos", Arch: "x86_64", MinOS: "10.12",
		Flags: []string{"-mmacosx-version-min=10.12", "-march=core2"}}
	for _, tc := range []struct {
		name string
		list dispatch.List
		ok   bool
	}{
		{"named in the source tree's list", dispatch.List{Name: "the source tree", Funcs: listed}, true},
		{"not named", dispatch.List{Name: "none"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp := validate.Built(slice, "libcrypto.a")
			if exp.ISA == nil || exp.ISA.Limit != "core2" {
				t.Fatalf("Built gives ISA %+v, want core2 from -march=core2", exp.ISA)
			}
			exp.ISA.Dispatch = tc.list
			f, err := codeclass.Inspect(context.Background(), lib)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := validate.Validate(f, exp)
			if err != nil {
				t.Fatal(err)
			}
			var isa []validate.Violation
			for _, v := range rep.Violations {
				if v.Rule == validate.RuleISA {
					isa = append(isa, v)
				}
			}
			if (len(isa) == 0) != tc.ok {
				t.Fatalf("instruction-set violations %v, want ok %v", isa, tc.ok)
			}
			if !tc.ok && (isa[0].Member != "targeted-a.o" || !strings.Contains(isa[0].Detail, "wide_add uses AVX2") || !strings.Contains(isa[0].Detail, "(c")) {
				t.Errorf("violation %+v: want member, function and instruction", isa[0])
			}
			v := rep.Slices[0].ISA
			if tc.ok && (v == nil || len(v.Dispatched) == 0 || v.Dispatched[0].File != "crypto/wide.c") {
				t.Errorf("dispatched %+v, want wide_add from crypto/wide.c", v)
			}
		})
	}
}

// TestISAOwnLibcrypto: osslbuild's own x86_64 libcrypto.a (4.0.2, built
// for -march=core2) passes -isa=core2 with the base64 encoder reported as
// dispatched, and its manifest records the level and the functions.
func TestISAOwnLibcrypto(t *testing.T) {
	dir := filepath.Join(e2e.Universal2(t), "dist", "openssl-macos-x86-64")
	res, err := Check(context.Background(), Options{Path: filepath.Join(dir, "lib", "libcrypto.a"), ISA: "core2", Now: dec1})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Binaries[0].Slices[0]
	if !res.OK || s.ISA == nil || s.ISA.Level != "x86-64-v3" || !slices.Contains(s.ISA.Dispatched, "encode_base64_avx2") ||
		s.ISA.List != "OpenSSL 4.0 (known)" || len(s.ISA.Above) != 0 || s.ISA.AsmObjects == 0 {
		t.Fatalf("OK %v, failures %q, isa %+v", res.OK, res.Failures, s.ISA)
	}
	// The artifact, checked with its manifest: the build's own record.
	res, err = Check(context.Background(), Options{Path: dir, Now: dec1})
	if err != nil || !res.OK {
		t.Fatalf("artifact: %v %q", err, res.Failures)
	}
	for _, b := range res.Binaries {
		if strings.HasSuffix(b.Path, "libcrypto.a") {
			is := b.Slices[0].ISA
			if is == nil || is.Limit != "core2" || !strings.HasPrefix(is.List, "the source tree of OpenSSL 4.0.2") || !slices.Contains(is.Dispatched, "encode_base64_avx2") {
				t.Errorf("artifact libcrypto.a isa %+v", is)
			}
		}
	}
}

// arm64 C whose intrinsics compile to BF16's BFDOT and I8MM's SMMLA (the
// M2's Armv8.6-A), beside a plain vector add every arm64 Mac runs.
const (
	isaM2 = `#include <arm_neon.h>
float32x4_t dot_bf16(float32x4_t acc, bfloat16x8_t a, bfloat16x8_t b) { return vbfdotq_f32(acc, a, b); }
int32x4_t mm_i8(int32x4_t acc, int8x16_t a, int8x16_t b) { return vmmlaq_s32(acc, a, b); }
`
	isaM1 = `#include <arm_neon.h>
int32x4_t plain_add(int32x4_t a, int32x4_t b) { return vaddq_s32(a, b); }
uint32x4_t dot_u8(uint32x4_t acc, uint8x16_t a, uint8x16_t b) { return vdotq_u32(acc, a, b); }
`
)

// armObject compiles arm64 C for macOS 11 with extra flags, and checks
// with llvm-objdump that it holds (or lacks) the instructions named.
func (k *kit) armObject(name, src string, flags []string, want ...string) string {
	k.t.Helper()
	out := k.path(name)
	testfixture.RunIn(k.t, k.dir, append(append([]string{"clang-14", "-target", "arm64-apple-macos11", "-ffreestanding", "-O2"}, flags...), "-c", k.source(src), "-o", out)...)
	b, err := exec.Command("llvm-objdump-14", "-d", "--mattr=+bf16,+i8mm,+dotprod", out).CombinedOutput()
	if err != nil {
		k.t.Fatalf("llvm-objdump-14 %s: %v\n%s", out, err, b)
	}
	dis := string(b)
	for _, w := range want {
		if neg, ok := strings.CutPrefix(w, "!"); ok {
			if strings.Contains(dis, neg) {
				k.t.Fatalf("%s holds %s:\n%s", name, neg, dis)
			}
		} else if !strings.Contains(dis, w) {
			k.t.Fatalf("%s lacks %s:\n%s", name, w, dis)
		}
	}
	return out
}

// TestISAArm64: an arm64 slice for macOS 11 using BF16 and I8MM (M2 and
// later) fails -isa=apple-m1 and, since every arm64 Mac starts at the M1,
// -strict, naming the function; it passes -isa=apple-m2 and, without
// either, is reported only. Code every M1 runs passes both.
func TestISAArm64(t *testing.T) {
	k := newKit(t)
	testfixture.Tools(t, "llvm-objdump-14")
	cv := k.macho("arm-cversion.o", "arm64-apple-macos11", cversion(lineArmO3, "darwin64-arm64-cc"))
	m2 := k.ar("m2.a", true, cv, k.armObject("m2.o", isaM2, []string{"-march=armv8.6-a+bf16+i8mm"}, "bfdot", "smmla"))
	m1 := k.ar("m1.a", true, cv, k.armObject("m1.o", isaM1, []string{"-mcpu=apple-m1"}, "udot", "!bfdot", "!smmla"))
	for _, tc := range []struct {
		name, path, isa string
		strict          bool
		ok              bool
	}{
		{"BF16 and I8MM fail -isa=apple-m1", m2, "apple-m1", false, false},
		{"BF16 and I8MM fail -strict: every arm64 Mac runs apple-m1", m2, "", true, false},
		{"an x86-64 -isa leaves -strict's apple-m1 to arm64", m2, "core2", true, false},
		{"BF16 and I8MM pass -isa=apple-m2", m2, "apple-m2", false, true},
		{"no -isa, no -strict: reported only", m2, "", false, true},
		{"M1 code passes -isa=apple-m1", m1, "apple-m1", false, true},
		{"M1 code passes -strict", m1, "", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Check(context.Background(), Options{Path: tc.path, ISA: tc.isa, Strict: tc.strict, Now: dec1})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Binaries[0].Slices[0]
			if s.ISA == nil {
				t.Fatalf("no instruction-set evidence: %+v", s)
			}
			want := "apple-m1"
			if tc.path == m2 {
				want = "apple-m2"
			}
			if res.OK != tc.ok || s.ISA.Level != want {
				t.Fatalf("OK %v, level %q; want %v, %q; failures %q; isa %+v", res.OK, s.ISA.Level, tc.ok, want, res.Failures, s.ISA)
			}
			if tc.ok {
				return
			}
			fails := strings.Join(res.Failures, "\n")
			for _, w := range []string{"m2.a(m2.o) arm64: dot_bf16 uses BF16 (apple-m2), above apple-m1", "mm_i8 uses I8MM (apple-m2), above apple-m1"} {
				if !strings.Contains(fails, w) {
					t.Errorf("failures lack %q:\n%s", w, fails)
				}
			}
			if s.ISA.Limit != "apple-m1" || len(s.ISA.Above) != 2 {
				t.Errorf("isa limit %q, above %+v; want apple-m1 and both functions", s.ISA.Limit, s.ISA.Above)
			}
		})
	}
}

// TestISAArtifactPerArch: -isa names one architecture's level and
// replaces an artifact's own level in that architecture's slices only:
// under -isa=core2 an arm64 artifact's BF16 code is still held to its
// manifest's apple-m1.
func TestISAArtifactPerArch(t *testing.T) {
	a := newArtifactKit(t)
	testfixture.Tools(t, "llvm-objdump-14")
	cv := a.k.macho("arm-m2-cv.o", "arm64-apple-macos11", cversion(lineArmO3, "darwin64-arm64-cc"))
	a.armCrypto = a.k.ar("arm-m2-libcrypto.a", true, cv, a.k.armObject("m2.o", isaM2, []string{"-march=armv8.6-a+bf16+i8mm"}, "bfdot"))
	d := a.dir(t, false)
	for _, tc := range []struct {
		isa string
		ok  bool
	}{{"", false}, {"core2", false}, {"apple-m1", false}, {"apple-m2", true}} {
		res, err := Check(context.Background(), Options{Path: d, ISA: tc.isa, Now: dec1})
		if err != nil {
			t.Fatal(err)
		}
		fails := strings.Join(res.Failures, "\n")
		if res.OK != tc.ok || !tc.ok && !strings.Contains(fails, "dot_bf16 uses BF16 (apple-m2), above apple-m1") {
			t.Errorf("-isa=%q: OK %v, want %v; failures:\n%s", tc.isa, res.OK, tc.ok, fails)
		}
	}
}

// TestISAOwnArm64Dylib: osslbuild's own arm64 libcrypto.3.dylib under
// -isa=apple-m1 lists exactly OpenSSL's guarded paths above it (the SVE
// ChaCha20, the SVE, SVE2, SM3, SM4 and RNDR probes, RNDR's reads),
// not failed (a linked image), and nothing from data: the arm64 pass
// counts code only (#58).
func TestISAOwnArm64Dylib(t *testing.T) {
	lib := filepath.Join(e2e.SharedArm64(t), "dist", "shared-openssl-aarch64-apple-darwin", "lib", "libcrypto.3.dylib")
	res, err := Check(context.Background(), Options{Path: lib, ISA: "apple-m1", Now: dec1})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Binaries[0].Slices[0]
	if s.ISA == nil {
		t.Fatalf("no instruction-set evidence: %+v", s)
	}
	var got []string
	for _, u := range s.ISA.Above {
		got = append(got, u.Function+" "+u.Extension)
	}
	slices.Sort(got)
	want := []string{"ChaCha20_ctr32_sve SVE", "OPENSSL_rndr_asm RNG", "OPENSSL_rndrrs_asm RNG", "_armv8_rng_probe RNG",
		"_armv8_sm3_probe SM3/SM4", "_armv8_sm4_probe SM3/SM4", "_armv8_sve2_probe SVE", "_armv8_sve_probe SVE"}
	if !slices.Equal(got, want) || s.ISA.Unjudged == "" || !res.OK {
		t.Errorf("OK %v %q; above apple-m1 %q (unjudged %q), want %q", res.OK, res.Failures, got, s.ISA.Unjudged, want)
	}
}
