package codeclass

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// The ground truth of where the instruction-set pass may decode: C with
// switch tables and assembly with constant pools, for x86_64 (and arm64,
// isa_aarch64_test.go), Mach-O and ELF, at -O0 and -O3. The truth of which
// bytes are code is the assembler's: clang-14 -S marks each x86_64
// Mach-O jump table with .data_region (LC_DATA_IN_CODE in the object),
// ELF and arm64 tables go to data sections, and the assembly is written
// here twice, once with .data_region around its data (the truth) and once
// without, as perlasm writes it. The truth object decoded instruction by
// instruction with its marks skipped gives each function's extensions;
// the pass must find exactly those (no false one, no missed one) in every
// linked image made of the unmarked code: a dylib, the same dylib with
// its LC_DATA_IN_CODE emptied (as an -O0 libssl.3.dylib on npm has it),
// a shared object.

// truthC: jump tables in baseline code, AVX2 behind a jump table, a
// switch whose default does not return (the table follows a call, as
// after ___stack_chk_fail), and floating point (SSE2, the baseline).
const truthC = `
typedef int v8si __attribute__((vector_size(32)));
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
__attribute__((target("avx2")))
int avx2_switch(int k, v8si *d, const v8si *a, int y) {
	switch (k) {
	case 0: *d = *d + *a; return 1;
	case 1: *d = *d * *a; return y * 2;
	case 2: *d = *d ^ *a; return y * 3;
	case 3: return y + 11;
	case 4: *d = *d - *a; return y - 5;
	case 5: return y << 2;
	case 6: *d = *a; return y / 3;
	case 7: return y % 7;
	}
	return 0;
}
double fp_switch(int x, double y) {
	switch (x) {
	case 0: return y * 1.5; case 1: return y + 2.25; case 2: return y - 0.125; case 3: return y / 3.0;
	case 4: return -y; case 5: return y * y; case 6: return y + y + 1.0;
	}
	return 0;
}
`

// truthAsmX86 is x86-64 assembly as perlasm writes it: a constant table
// and a copyright string ("by <appro@openssl.org>", which reads as an
// AVX-512 instruction) in the text section after a function (the table
// holds bytes that read as AVX-512, AVX2 and SSE4.1 instructions, and a
// jump table's entries), real AVX2 reached only by a branch, and a jump
// table of its own with AVX behind it. {G} is the platform's prefix of
// global names, {L} of local labels; {D} and {E} open and close a data
// region in the truth variant and are empty in the other; {T} and {S}
// give ELF its symbol types (and no sizes: old perlasm gave none).
const truthAsmX86 = `	.text
	.globl {G}asm_table_user
	{T}asm_table_user
	.p2align 4
{G}asm_table_user:
	leaq {L}K(%rip), %rax
	movdqa (%rax), %xmm0
	paddd %xmm0, %xmm1
	testl %edi, %edi
	jnz {L}avx_path
	ret
{L}avx_path:
	vpaddd %ymm0, %ymm1, %ymm2
	vzeroupper
	ret
	.p2align 6
{D}
{L}K:
	.byte 0x62,0xf1,0x7d,0x28,0xef,0xc0
	.byte 0xc5,0xfd,0xfe,0xc1
	.byte 0xc4,0xe2,0x7d,0x58,0xc0
	.byte 0x66,0x0f,0x38,0x17,0xc0
	.long 0xfffffcc5, 0xfffffcc5, 0xfffffd11, 0xffffff26
{E}
	.p2align 4
	.globl {G}asm_jump
	{T}asm_jump
{G}asm_jump:
	leaq {L}jt(%rip), %rcx
	movslq (%rcx,%rdi,4), %rax
	addq %rcx, %rax
	jmpq *%rax
{L}c0:
	vaddps %ymm0, %ymm1, %ymm2
	vzeroupper
	ret
{L}c1:
	addl $1, %eax
	ret
{L}c2:
	pshufb %xmm1, %xmm0
	ret
	.p2align 2
{D}
{L}jt:
	.long {L}c0-{L}jt, {L}c1-{L}jt, {L}c2-{L}jt
{E}
	.p2align 4
	.globl {G}asm_tail
	{T}asm_tail
{G}asm_tail:
	xorl %eax, %eax
	ret
{D}
	.byte 98,121,32,60,97,112,112,114,111,64,111,112,101,110,115,115,108,46,111,114,103,62,0
{E}
	.p2align 4
	.globl {G}asm_last
	{T}asm_last
{G}asm_last:
	ret
`

// asmFor fills in an assembly template for a format, as the truth
// (data marked) or as perlasm would write it.
func asmFor(tmpl string, elf, truth bool) string {
	g, l, typ := "_", "L", ""
	if elf {
		g, l, typ = "", ".L", ".type"
	}
	d, e := "", ""
	if truth {
		d, e = "\t.data_region", "\t.end_data_region"
	}
	r := strings.NewReplacer("{G}", g, "{L}", l, "{D}", d, "{E}", e, "{S}", "")
	out := r.Replace(tmpl)
	lines := strings.Split(out, "\n")
	for i, ln := range lines {
		if strings.HasPrefix(ln, "\t{T}") {
			lines[i] = ""
			if typ != "" {
				lines[i] = "\t.type " + strings.TrimPrefix(ln, "\t{T}") + ",%function"
			}
		}
	}
	return strings.Join(lines, "\n")
}

// funcExts are the extensions each function uses, by name.
type funcExts map[string][]string

func (f funcExts) String() string {
	var names []string
	for n := range f {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n + ":" + strings.Join(f[n], ",") + " ")
	}
	return b.String()
}

// passExts runs the pass over one object or image and returns, per
// function, its top extension (what the uses report) and, where the pass
// traces them, every extension.
func passExts(t *testing.T, path string) (top, all funcExts) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	o := codeOf(t, path)
	var st isaStats
	all = funcExts{}
	names := symbolNames(b, nil)
	var starts []uint64
	for a := range names {
		starts = append(starts, a)
	}
	slices.Sort(starts)
	traceAll(&st, func(addr uint64, e ext) {
		i := sort.Search(len(starts), func(i int) bool { return starts[i] > addr }) - 1
		if i < 0 {
			t.Fatalf("%s: 0x%x before any function", path, addr)
		}
		n := names[starts[i]]
		if !slices.Contains(all[n], extNames[e]) {
			all[n] = append(all[n], extNames[e])
		}
	})
	isaObject(b, o, &st)
	top = funcExts{}
	for _, u := range st.uses {
		top[u.Function] = []string{u.Extension}
	}
	for n := range all {
		slices.Sort(all[n])
	}
	return top, all
}

// zeroDataInCode writes a copy of the Mach-O image at path whose
// LC_DATA_IN_CODE is empty.
func zeroDataInCode(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := macho.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	off := 32 // mach_header_64
	found := false
	for _, l := range f.Loads {
		raw := l.Raw()
		if binary.LittleEndian.Uint32(raw) == 0x29 { // LC_DATA_IN_CODE
			binary.LittleEndian.PutUint32(b[off+12:], 0)
			found = true
		}
		off += len(raw)
	}
	if !found {
		t.Fatalf("%s: no LC_DATA_IN_CODE", path)
	}
	out := strings.TrimSuffix(path, ".dylib") + "-nodic.dylib"
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// dataInCode counts an object's LC_DATA_IN_CODE entries.
func dataInCode(t *testing.T, path string) int {
	t.Helper()
	o := codeOf(t, path)
	n := 0
	for _, s := range o.sections {
		n += len(s.data)
	}
	return n
}

// truthCase is one source, built one way.
type truthCase struct {
	name    string
	arch    string // x86_64, arm64
	asm     bool
	src     string // C, or an assembly template
	flags   []string
	linkELF bool
}

// truthBuild compiles (or assembles) c for Mach-O and ELF and links each:
// the truth object, and the linked images the pass reads.
func truthBuild(t *testing.T, dir string, c truthCase) (truth map[string]string, images map[string][]string) {
	t.Helper()
	triples := map[string][2]string{
		"x86_64": {"x86_64-apple-macos10.12", "x86_64-linux-gnu"},
		"arm64":  {"arm64-apple-macos11", "aarch64-linux-gnu"},
	}[c.arch]
	truth, images = map[string]string{}, map[string][]string{}
	for i, format := range []string{"Mach-O", "ELF"} {
		elf := format == "ELF"
		base := filepath.Join(dir, c.name+"-"+strings.ToLower(strings.ReplaceAll(format, "-", "")))
		obj, truthObj := base+".o", base+"-truth.o"
		if c.asm {
			src, tsrc := base+".s", base+"-truth.s"
			if err := os.WriteFile(src, []byte(asmFor(c.src, elf, false)), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(tsrc, []byte(asmFor(c.src, false, true)), 0o644); err != nil {
				t.Fatal(err)
			}
			testfixture.Run(t, append([]string{"clang-14", "-target", triples[i], "-c", src, "-o", obj}, c.flags...)...)
			// The truth of the assembly is its Mach-O build, data marked:
			// the same bytes in either format.
			testfixture.Run(t, append([]string{"clang-14", "-target", triples[0], "-c", tsrc, "-o", truthObj}, c.flags...)...)
		} else {
			src := base + ".c"
			if err := os.WriteFile(src, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"clang-14", "-target", triples[i], "-ffreestanding", "-fPIC", "-c", src, "-o", obj}, c.flags...)
			testfixture.Run(t, args...)
			truthObj = obj // clang marks its data: LC_DATA_IN_CODE in Mach-O, none in ELF text
		}
		truth[format] = truthObj
		if !elf {
			dylib := base + ".dylib"
			archFlag := c.arch
			testfixture.Run(t, "ld64.lld-14", "-arch", archFlag, "-platform_version", "macos", "11.0", "11.0", "-dylib",
				"-undefined", "dynamic_lookup", obj, "-o", dylib)
			images[format] = append(images[format], dylib)
			if dataInCode(t, dylib) > 0 {
				images[format] = append(images[format], zeroDataInCode(t, dylib))
			}
		} else {
			so := base + ".so"
			testfixture.Run(t, "ld.lld-14", "-shared", obj, "-o", so)
			images[format] = append(images[format], so)
		}
	}
	return truth, images
}

// TestISAGroundTruthX86 holds the pass to the truth on x86_64: the same
// extensions per function as the marked truth in every linked image.
// 5392f1f's pass counted the constant table (AVX-512 in asm_table_user)
// and jump tables in a dylib without LC_DATA_IN_CODE.
func TestISAGroundTruthX86(t *testing.T) {
	testfixture.Tools(t, "clang-14", "ld64.lld-14", "ld.lld-14")
	dir := t.TempDir()
	cases := []truthCase{
		{name: "c-O0", arch: "x86_64", src: truthC, flags: []string{"-O0", "-march=core2"}},
		{name: "c-O3", arch: "x86_64", src: truthC, flags: []string{"-O3", "-march=core2"}},
		{name: "asm", arch: "x86_64", asm: true, src: truthAsmX86},
	}
	runTruth(t, dir, cases)
}

// runTruth builds each case and compares the pass with the truth.
func runTruth(t *testing.T, dir string, cases []truthCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			truth, images := truthBuild(t, dir, c)
			if !c.asm && c.arch == "x86_64" && dataInCode(t, truth["Mach-O"]) == 0 {
				t.Fatalf("%s: clang-14 marked no jump table: the corpus tests nothing", truth["Mach-O"])
			}
			for _, format := range []string{"Mach-O", "ELF"} {
				wantTop, wantAll := passExts(t, truth[format])
				behind := map[string]string{"x86_64": "avx2_switch", "arm64": "m2_switch"}[c.arch]
				if c.asm && len(wantTop) == 0 || !c.asm && len(wantTop[behind]) == 0 {
					t.Fatalf("%s: the truth shows no extension: %v", truth[format], wantTop)
				}
				for _, img := range images[format] {
					gotTop, gotAll := passExts(t, img)
					if gotTop.String() != wantTop.String() {
						t.Errorf("%s: functions' top extensions\n got %v\nwant %v (the truth, %s)", filepath.Base(img), gotTop, wantTop, filepath.Base(truth[format]))
					}
					if gotAll.String() != wantAll.String() {
						t.Errorf("%s: extensions\n got %v\nwant %v", filepath.Base(img), gotAll, wantAll)
					}
				}
			}
		})
	}
}
