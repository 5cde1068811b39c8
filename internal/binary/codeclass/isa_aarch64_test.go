package codeclass

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// arm64Features are every extension llvm-objdump-14 must read to name
// the instructions above apple-m1.
const arm64Features = "+bf16,+i8mm,+sve,+sve2,+sve2-sm4,+sve2-sha3,+sve2-aes,+sve2-bitperm,+sme,+mte,+rand,+mops,+ls64,+wfxt,+sm4,+xs,+hbc,+v8.8a,+fp16fml,+fullfp16,+sha3,+sm4,+aes,+sha2,+dotprod,+lse,+rcpc,+fptoint,+sb,+altnzcv,+flagm,+pauth,+bti,+predres,+ssbs"

var (
	sveReg = regexp.MustCompile(`\bz[0-9]+(\.|\b)|\bp[0-9]+(/|\.|\b)|\bza`)
	sveOp  = regexp.MustCompile(`^((sq|uq)?(cnt|inc|dec)[bhwdp]|rdvl|addvl|addpl|setffr|rdffr|wrffr|smstart|smstop|zero)$`)
	// objdump's mnemonics, by extension (the Advanced SIMD forms; an
	// operand naming an SVE register makes it SVE's).
	arm64Mnemonics = map[string]ext{
		"bfcvt": extBF16, "bfcvtn": extBF16, "bfcvtn2": extBF16, "bfdot": extBF16, "bfmlalb": extBF16, "bfmlalt": extBF16, "bfmmla": extBF16,
		"smmla": extI8MM, "ummla": extI8MM, "usmmla": extI8MM, "usdot": extI8MM, "sudot": extI8MM,
		"irg": extMTE, "gmi": extMTE, "subp": extMTE, "subps": extMTE, "cmpp": extMTE, "addg": extMTE, "subg": extMTE,
		"stg": extMTE, "stzg": extMTE, "st2g": extMTE, "stz2g": extMTE, "ldg": extMTE, "stgp": extMTE, "ldgm": extMTE,
		"stgm": extMTE, "stzgm": extMTE,
		"ld64b": extLS64, "st64b": extLS64, "st64bv": extLS64, "st64bv0": extLS64,
		"wfet": extWFxT, "wfit": extWFxT, "smstart": extSME, "smstop": extSME,
		"sm3ss1": extSM4, "sm3tt1a": extSM4, "sm3tt1b": extSM4, "sm3tt2a": extSM4, "sm3tt2b": extSM4, "sm3partw1": extSM4,
		"sm3partw2": extSM4, "sm4e": extSM4, "sm4ekey": extSM4,
	}
)

// objdumpARM64Ext is the extension llvm-objdump-14's reading of one
// instruction names (extSVE for SVE and SME alike: both beyond any Apple
// level).
func objdumpARM64Ext(mn string) ext {
	f := strings.Fields(mn)
	if len(f) == 0 {
		return extNone
	}
	op, args := f[0], strings.Join(f[1:], " ")
	switch {
	case op == "mrs" && strings.Contains(strings.ToUpper(args), "RNDR"):
		return extRNG
	case strings.HasPrefix(op, "cpy") || strings.HasPrefix(op, "set") && len(op) <= 6 && op != "setf8" && op != "setf16" && op != "setffr":
		return extMOPS
	case strings.HasPrefix(op, "bc."):
		return extHBC
	case op == "dsb" && strings.HasSuffix(args, "nxs"):
		return extXS
	case sveReg.MatchString(args) || sveOp.MatchString(op):
		return extSVE
	}
	return arm64Mnemonics[op]
}

// arm64Corpus is assembly with instructions of every extension the pass
// tells apart, and the baseline beside them.
const arm64Corpus = `	.text
	.globl	f
f:
	bfcvt h0, s1
	bfcvtn v0.4h, v1.4s
	bfcvtn2 v0.8h, v1.4s
	bfdot v0.4s, v1.8h, v2.8h
	bfdot v0.2s, v1.4h, v2.2h[1]
	bfmlalb v0.4s, v1.8h, v2.8h
	bfmlalt v0.4s, v1.8h, v2.h[3]
	bfmmla v0.4s, v1.8h, v2.8h
	smmla v0.4s, v1.16b, v2.16b
	ummla v0.4s, v1.16b, v2.16b
	usmmla v0.4s, v1.16b, v2.16b
	usdot v0.4s, v1.16b, v2.16b
	usdot v0.2s, v1.8b, v2.4b[1]
	sudot v0.4s, v1.16b, v2.4b[3]
	add z0.s, z1.s, z2.s
	ld1w {z0.s}, p0/z, [x0]
	ptrue p0.s
	whilelo p0.s, x0, x1
	rdvl x0, #1
	fmla z0.d, p0/m, z1.d, z2.d
	smstart
	smstop
	fmopa za0.s, p0/m, p1/m, z0.s, z1.s
	irg x0, x1
	addg x0, x1, #16, #2
	stg x0, [x1]
	ldg x0, [x1]
	stgp x0, x1, [x2]
	mrs x0, rndr
	mrs x1, rndrrs
	cpyfp [x0]!, [x1]!, x2!
	setp [x0]!, x1!, x2
	ld64b x0, [x1]
	st64b x0, [x1]
	wfet x0
	sm4e v0.4s, v1.4s
	sm3partw1 v0.4s, v1.4s, v2.4s
	bc.eq f
	dsb ishnxs
	// the baseline: apple-m1 has all of these
	add x0, x1, x2
	ldaxr x0, [x1]
	ldaddal x0, x1, [x2]
	casal x0, x1, [x2]
	ldapr x0, [x1]
	eor3 v0.16b, v1.16b, v2.16b, v3.16b
	rax1 v0.2d, v1.2d, v2.2d
	sha512h q0, q1, v2.2d
	aese v0.16b, v1.16b
	pmull2 v0.1q, v1.2d, v2.2d
	sdot v0.4s, v1.16b, v2.16b
	fmlal v0.2s, v1.2h, v2.2h
	fadd v0.8h, v1.8h, v2.8h
	frint32x v0.2s, v1.2s
	fjcvtzs w0, d1
	sb
	axflag
	cfinv
	pacibsp
	autibsp
	bti c
	ldraa x0, [x1]
	xpaclri
	dmb ish
	dsb sy
	mrs x0, tpidr_el0
	setf8 w0
	rmif x0, #1, #2
	stlur w0, [x1]
	ret
`

// TestARM64ExtAgainstObjdump holds the arm64 pass's extension of every
// word to llvm-objdump-14's reading of it (with every extension
// enabled): the assembled corpus above, and C compiled by clang-14 for
// apple-m1 (none above the baseline), for armv8.6-a with BF16 and I8MM
// (their intrinsics), and with SVE (vectorised loops).
func TestARM64ExtAgainstObjdump(t *testing.T) {
	testfixture.Tools(t, "clang-14", "llvm-mc-14", "llvm-objdump-14")
	dir := t.TempDir()
	asm := filepath.Join(dir, "corpus.s")
	if err := os.WriteFile(asm, []byte(arm64Corpus), 0o644); err != nil {
		t.Fatal(err)
	}
	csrc := filepath.Join(dir, "c.c")
	if err := os.WriteFile(csrc, []byte(truthC+arm64C), 0o644); err != nil {
		t.Fatal(err)
	}
	objs := map[string][]string{
		"corpus.o":   {"llvm-mc-14", "-triple=aarch64-linux-gnu", "-mattr=" + arm64Features, "-filetype=obj", asm},
		"m1.o":       {"clang-14", "-target", "arm64-apple-macos11", "-mcpu=apple-m1", "-ffreestanding", "-O3", "-c", csrc},
		"m1-O0.o":    {"clang-14", "-target", "arm64-apple-macos11", "-mcpu=apple-m1", "-ffreestanding", "-O0", "-c", csrc},
		"v86.o":      {"clang-14", "-target", "arm64-apple-macos11", "-march=armv8.6-a+bf16+i8mm", "-DBF16", "-ffreestanding", "-O2", "-c", csrc},
		"sve.o":      {"clang-14", "-target", "aarch64-linux-gnu", "-march=armv8.2-a+sve", "-ffreestanding", "-O3", "-c", csrc},
		"sve2-elf.o": {"clang-14", "-target", "aarch64-linux-gnu", "-march=armv9-a+sve2", "-ffreestanding", "-O3", "-c", csrc},
	}
	want := map[string]bool{"m1.o": false, "m1-O0.o": false, "v86.o": true, "sve.o": true, "corpus.o": true, "sve2-elf.o": true}
	for name, args := range objs {
		out := filepath.Join(dir, name)
		testfixture.Run(t, append(args, "-o", out)...)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		o := codeOf(t, out)
		listing, err := exec.Command("llvm-objdump-14", "-d", "--mattr="+arm64Features, out).Output()
		if err != nil {
			t.Fatalf("llvm-objdump-14 %s: %v", out, err)
		}
		seen, above := 0, 0
		for _, l := range strings.Split(string(listing), "\n") {
			c := strings.IndexByte(l, ':')
			if c < 0 || !strings.HasPrefix(l, " ") {
				continue
			}
			addr, err := strconv.ParseUint(strings.TrimSpace(l[:c]), 16, 64)
			rest := strings.SplitN(l[c+1:], "\t", 2)
			if err != nil || len(rest) != 2 {
				continue
			}
			mn := strings.TrimSpace(rest[1])
			for _, s := range o.sections {
				if addr < s.addr || addr+4 > s.addr+uint64(s.size) {
					continue
				}
				w := binary.LittleEndian.Uint32(b[s.offset+int64(addr-s.addr):])
				got, truth := arm64Ext(w), objdumpARM64Ext(mn)
				if got == extSME {
					got = extSVE
				}
				if strings.HasPrefix(mn, "<unknown>") {
					if got != extNone && got != extCSSC {
						t.Errorf("%s 0x%x: %08x counts as %s; llvm-objdump-14 cannot read it", name, addr, w, extNames[got])
					}
					continue
				}
				seen++
				if got != extNone {
					above++
				}
				if got != truth {
					t.Errorf("%s 0x%x: %08x %q: the pass says %q, llvm-objdump-14's reading %q", name, addr, w, mn, extNames[got], extNames[truth])
				}
			}
		}
		if seen < 20 || (above > 0) != want[name] {
			t.Errorf("%s: %d instructions, %d above apple-m1; want some above: %v", name, seen, above, want[name])
		}
	}
}

// arm64C is C whose code uses BF16 and I8MM through their intrinsics
// (with -DBF16), and loops a compiler vectorises (with SVE when allowed).
const arm64C = `
#ifdef BF16
#include <arm_neon.h>
float32x4_t bf_dot(float32x4_t a, bfloat16x8_t b, bfloat16x8_t c) { return vbfdotq_f32(a, b, c); }
float32x4_t bf_mm(float32x4_t a, bfloat16x8_t b, bfloat16x8_t c) { return vbfmmlaq_f32(a, b, c); }
int32x4_t i8_mm(int32x4_t a, int8x16_t b, int8x16_t c) { return vmmlaq_s32(a, b, c); }
int32x4_t i8_usdot(int32x4_t a, uint8x16_t b, int8x16_t c) { return vusdotq_s32(a, b, c); }
#endif
void add_ints(int *restrict d, const int *restrict a, const int *restrict b, int n) { for (int i = 0; i < n; i++) d[i] = a[i] + b[i]; }
void fma_floats(float *restrict d, const float *restrict a, const float *restrict b, int n) { for (int i = 0; i < n; i++) d[i] += a[i] * b[i]; }
long dot(const short *a, const short *b, int n) { long s = 0; for (int i = 0; i < n; i++) s += a[i] * b[i]; return s; }
`

// truthCARM64 is truthC for arm64 with BF16, I8MM and SVE instructions
// behind its jump tables (inline assembly, so -O0 has them too).
const truthCARM64 = `
extern void die(int) __attribute__((noreturn));
int plain_switch(int x, int y) {
	switch (x) {
	case 0: return y; case 1: return y * 3; case 2: return y ^ 7; case 3: return y + 11;
	case 4: return y - 5; case 5: return y << 2; case 6: return y / 3; case 7: return y % 7;
	default: return 0;
	}
}
int noreturn_switch(int x, int y) {
	switch (x) {
	case 0: return y + 1; case 1: return y * 5; case 2: return y ^ 9; case 3: return y - 13;
	case 4: return y >> 3; case 5: return y * y; case 6: return y / 7;
	default: die(x);
	}
}
int m2_switch(int k, int y) {
	switch (k) {
	case 0: __asm__ volatile("bfmmla v0.4s, v1.8h, v2.8h" ::: "v0"); return 1;
	case 1: return y * 2;
	case 2: __asm__ volatile("smmla v3.4s, v4.16b, v5.16b" ::: "v3"); return y * 3;
	case 3: return y + 11;
	case 4: return y - 5;
	case 5: return y << 2;
	case 6: return y / 3;
	case 7: return y % 7;
	}
	return 0;
}
int sve_switch(int k, int y) {
	switch (k) {
	case 0: return y + 7;
	case 1: return y * 9;
	case 2: return y ^ 5;
	case 3: __asm__ volatile("add z0.s, z1.s, z2.s" ::: "v0"); return y - 1;
	case 4: return y >> 1;
	case 5: return y * y;
	case 6: return y / 5;
	}
	return 0;
}
`

// truthAsmARM64 is arm64 assembly as perlasm writes it: a constant pool
// in the text section after a function (words that read as SVE, BF16 and
// I8MM instructions, and a literal pool), real I8MM reached only by a
// branch, and an unreferenced string.
const truthAsmARM64 = `	.text
	.globl {G}asm_pool_user
	{T}asm_pool_user
	.p2align 4
{G}asm_pool_user:
	adr x1, {L}K
	ldr q0, [x1]
	ldr x2, {L}lit
	cbnz w0, {L}mm
	ret
{L}mm:
	smmla v0.4s, v1.16b, v2.16b
	ret
	.p2align 4
{D}
{L}K:
	.long 0x04a20020, 0x6e42ec20, 0x4e82a420, 0xa540a000
	.long 0x0e40fc20, 0xd503477f, 0x9ac01020, 0xd53b2400
{L}lit:
	.quad 0x6e42ec206e42ec20
{E}
	.p2align 4
	.globl {G}asm_tail
	{T}asm_tail
{G}asm_tail:
	mov w0, #0
	ret
{D}
	.byte 67,82,89,80,84,79,71,65,77,83,32,98,121,32,60,97,112,112,114,111,64,111,112,101,110,115,115,108,46,111,114,103,62,0
{E}
	.p2align 4
	.globl {G}asm_last
	{T}asm_last
{G}asm_last:
	ret
`

// TestISAGroundTruthARM64 is TestISAGroundTruthX86 for arm64: jump
// tables (in __const and .rodata) with BF16, I8MM and SVE behind them,
// at -O0 and -O3, and perlasm-style constant pools. 5392f1f's pass read
// no arm64 code at all.
func TestISAGroundTruthARM64(t *testing.T) {
	testfixture.Tools(t, "clang-14", "ld64.lld-14", "ld.lld-14")
	flags := "-march=armv8.6-a+bf16+i8mm+sve"
	runTruth(t, t.TempDir(), []truthCase{
		{name: "c-O0", arch: "arm64", src: truthCARM64, flags: []string{"-O0", flags}},
		{name: "c-O3", arch: "arm64", src: truthCARM64, flags: []string{"-O3", flags}},
		{name: "asm", arch: "arm64", asm: true, src: truthAsmARM64, flags: []string{flags}},
	})
}
