package codeclass

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/x86/x86asm"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// codeTarget is one way the unit tests compile testdata/code/funcs.c.
type codeTarget struct {
	name string // macos-arm64, macos-x86_64, linux-x86_64
	arch string // as inspect.CodeVerdict reports it
	cc   []string
}

func codeTargets(t *testing.T) []codeTarget {
	t.Helper()
	tc := testfixture.NeedToolchain(t)
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testfixture.Missing(t, "gcc not on PATH (apt-get install -y gcc): %v", err)
	}
	return []codeTarget{
		{"macos-arm64", "arm64", []string{tc.Clang, "-target", "arm64-apple-macos11", "-nostdinc"}},
		{"macos-x86_64", "x86_64", []string{tc.Clang, "-target", "x86_64-apple-macos10.12", "-nostdinc"}},
		{"linux-x86_64", "x86_64", []string{gcc, "-nostdinc", "-fPIC"}},
	}
}

// compileFuncs compiles testdata/code/funcs.c for ct at level into dir.
func compileFuncs(t *testing.T, ct codeTarget, level, dir string) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("testdata", "code", "funcs.c"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, ct.name+strings.ReplaceAll(level, "-", "_")+"-funcs.o")
	args := append(append([]string{}, ct.cc[1:]...), level, "-c", "-o", out, src)
	testfixture.RunEnv(t, nil, ct.cc[0], args...)
	return out
}

func codeOf(t *testing.T, path string) *codeObject {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var o *codeObject
	if inspect.Identify(b) == inspect.FormatELF {
		o, err = readELFCode(b, nil)
	} else {
		o, err = readMachOCode(b, nil)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return o
}

// TestCodeDecodersAgree holds the classifier's own decoders against
// golang.org/x/arch's disassemblers on real compiler output: every arm64
// load/store must be recognised with the same base, direction and offset,
// every x86-64 instruction must have the same length and the same frame
// operand.
func TestCodeDecodersAgree(t *testing.T) {
	dir := t.TempDir()
	for _, ct := range codeTargets(t) {
		for _, level := range []string{"-O0", "-O2"} {
			o := codeOf(t, compileFuncs(t, ct, level, dir))
			b, _ := os.ReadFile(filepath.Join(dir, ct.name+strings.ReplaceAll(level, "-", "_")+"-funcs.o"))
			n := 0
			for _, s := range o.sections {
				// The code between data-in-code ranges (jump tables).
				from := s.addr
				for _, d := range append(s.data, [2]uint64{s.addr + uint64(s.size), 0}) {
					code := b[s.offset+int64(from-s.addr) : s.offset+int64(d[0]-s.addr)]
					from = d[1]
					switch ct.arch {
					case "arm64":
						n += agreeARM64(t, ct.name+level, code)
					default:
						n += agreeX86(t, ct.name+level, code)
					}
				}
			}
			if n < 500 {
				t.Errorf("%s %s: only %d instructions compared", ct.name, level, n)
			}
		}
	}
}

func agreeARM64(t *testing.T, what string, code []byte) int {
	n := 0
	for pc := 0; pc+4 <= len(code); pc += 4 {
		ins := uint32(code[pc]) | uint32(code[pc+1])<<8 | uint32(code[pc+2])<<16 | uint32(code[pc+3])<<24
		ref, err := arm64asm.Decode(code[pc : pc+4])
		if err != nil {
			continue
		}
		n++
		m, ok := decodeARM64Mem(ins)
		op := ref.Op.String()
		plain := (strings.HasPrefix(op, "LD") || strings.HasPrefix(op, "ST")) &&
			!strings.ContainsAny(op[2:], "XA") && !strings.HasPrefix(op, "LDADD")
		var base arm64asm.RegSP = 0xff
		var memArg string
		for _, a := range ref.Args {
			switch a := a.(type) {
			case arm64asm.MemImmediate:
				base, memArg = a.Base, a.String()
			case arm64asm.MemExtend:
				base, memArg = a.Base, a.String()
			}
		}
		if !plain || memArg == "" {
			if ok {
				t.Errorf("%s at %#x: %v: matched as a load/store, x/arch says not one", what, pc, ref)
			}
			continue
		}
		if !ok {
			t.Errorf("%s at %#x: %v: load/store not matched", what, pc, ref)
			continue
		}
		if want := strings.HasPrefix(op, "ST"); m.store != want {
			t.Errorf("%s at %#x: %v: store=%v, want %v", what, pc, ref, m.store, want)
		}
		if got := arm64asm.RegSP(arm64asm.X0 + arm64asm.Reg(m.rn)); m.rn != 31 && got != base ||
			m.rn == 31 && base != arm64asm.RegSP(arm64asm.SP) {
			t.Errorf("%s at %#x: %v: base x%d, x/arch says %v", what, pc, ref, m.rn, base)
		}
		// The offset, in the syntax x/arch prints: [x29,#-8], [sp,#16]!, [sp],#16.
		if !m.writeback || strings.HasSuffix(memArg, "!") {
			if m.imm != 0 && !strings.Contains(memArg, "#"+itoa(m.imm)+"]") {
				t.Errorf("%s at %#x: %v: offset %d not in %q", what, pc, ref, m.imm, memArg)
			}
		}
	}
	return n
}

func itoa(v int64) string {
	if v < 0 {
		return "-" + itoa(-v)
	}
	if v < 10 {
		return string(rune('0' + v))
	}
	return itoa(v/10) + string(rune('0'+v%10))
}

func agreeX86(t *testing.T, what string, code []byte) int {
	n := 0
	for pc := 0; pc < len(code); {
		ref, err := x86asm.Decode(code[pc:], 64)
		in, ok := decodeX86(code[pc:])
		if err != nil {
			t.Fatalf("%s at %#x: x/arch cannot decode % x: %v", what, pc, code[pc:min(pc+8, len(code))], err)
		}
		n++
		if !ok || in.len != ref.Len {
			t.Fatalf("%s at %#x: %v: length %d (ok=%v), x/arch says %d", what, pc, ref, in.len, ok, ref.Len)
		}
		refFrame := false
		if ref.Op != x86asm.LEA && ref.Op != x86asm.NOP && !strings.HasPrefix(ref.Op.String(), "PREFETCH") {
			for _, a := range ref.Args {
				if m, isMem := a.(x86asm.Mem); isMem && m.Index == 0 && (m.Base == x86asm.RBP || m.Base == x86asm.RSP) {
					refFrame = true
				}
			}
		}
		if in.frame() != refFrame {
			t.Errorf("%s at %#x: %v: frame operand %v, x/arch says %v", what, pc, ref, in.frame(), refFrame)
		}
		pc += ref.Len
	}
	return n
}

// TestDecodeX86 pins encodings that compiled test code may not contain.
func TestDecodeX86(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hex     []byte
		len     int
		frame   bool
		argStor bool
	}{
		{"mov [rbp-8], rdi", []byte{0x48, 0x89, 0x7d, 0xf8}, 4, true, true},
		{"mov [rsp+0x10], r9", []byte{0x4c, 0x89, 0x4c, 0x24, 0x10}, 5, true, true},
		{"mov [rbp-4], ebx", []byte{0x89, 0x5d, 0xfc}, 3, true, false},
		{"mov [r13-8], rdi (not the frame)", []byte{0x49, 0x89, 0x7d, 0xf8}, 4, false, true},
		{"movsd [rbp-0x10], xmm0", []byte{0xf2, 0x0f, 0x11, 0x45, 0xf0}, 5, true, true},
		{"lea rax, [rbp-8]", []byte{0x48, 0x8d, 0x45, 0xf8}, 4, false, false},
		{"vzeroupper", []byte{0xc5, 0xf8, 0x77}, 3, false, false},
		{"vmovdqu ymm0, [rsp+0x20]", []byte{0xc5, 0xfe, 0x6f, 0x44, 0x24, 0x20}, 6, true, false},
		{"vpshufd xmm1, xmm2, 0x1b (VEX 0F with imm8)", []byte{0xc5, 0xf9, 0x70, 0xca, 0x1b}, 5, false, false},
		{"vpalignr (VEX 0F3A)", []byte{0xc4, 0xe3, 0x69, 0x0f, 0xcb, 0x04}, 6, false, false},
		{"vmovdqu64 zmm0, [rsp+0x40] (EVEX)", []byte{0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x44, 0x24, 0x01}, 8, true, false},
		{"mov rax, imm64", []byte{0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}, 10, false, false},
		{"mov ax, imm16", []byte{0x66, 0xb8, 1, 2}, 4, false, false},
		{"test byte [rbp-1], 1", []byte{0xf6, 0x45, 0xff, 0x01}, 4, true, false},
		{"test dword [rbp-4], imm32", []byte{0xf7, 0x45, 0xfc, 1, 0, 0, 0}, 7, true, false},
		{"not dword [rbp-4] (group 3 without immediate)", []byte{0xf7, 0x55, 0xfc}, 3, true, false},
		{"jmp rel32 with 66 prefix (ignored in 64-bit mode)", []byte{0x66, 0xe9, 0, 0, 0, 0}, 6, false, false},
		{"endbr64", []byte{0xf3, 0x0f, 0x1e, 0xfa}, 4, false, false},
		{"nopw [rax+rax]", []byte{0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}, 6, false, false},
		{"mov eax, [rip+0x10]", []byte{0x8b, 0x05, 0x10, 0, 0, 0}, 6, false, false},
		{"mov eax, [rsp+rbx*4] (indexed: not a frame slot)", []byte{0x8b, 0x04, 0x9c}, 3, false, false},
		{"movabs al, [moffs64]", []byte{0xa0, 1, 2, 3, 4, 5, 6, 7, 8}, 9, false, false},
		{"enter 16, 0", []byte{0xc8, 0x10, 0x00, 0x00}, 4, false, false},
	} {
		in, ok := decodeX86(tc.hex)
		if !ok || in.len != tc.len {
			t.Errorf("%s: len %d ok=%v, want %d", tc.name, in.len, ok, tc.len)
			continue
		}
		if in.frame() != tc.frame {
			t.Errorf("%s: frame %v, want %v", tc.name, in.frame(), tc.frame)
		}
		if _, arg := in.moveStore(); arg != tc.argStor {
			t.Errorf("%s: argument store %v, want %v", tc.name, arg, tc.argStor)
		}
	}
	for _, bad := range [][]byte{{}, {0x48}, {0x0f}, {0x8b}, {0x8b, 0x84}, {0xe8, 0, 0}, {0x06}, {0xc5, 0xf8}, {0x62, 0xf1, 0xfe}} {
		if in, ok := decodeX86(bad); ok {
			t.Errorf("% x: decoded as %d bytes, want a refusal", bad, in.len)
		}
	}
}

// TestCodeEvidenceFormats classifies funcs.c built at -O0 and -O2 in every
// container the classifier reads: a thin object, BSD and GNU archives
// (long member names), a universal archive, a Mach-O dylib (function
// starts from LC_FUNCTION_STARTS), an ELF shared object with and without
// its symbol table (then .eh_frame).
func TestCodeEvidenceFormats(t *testing.T) {
	cts := codeTargets(t)
	tc := testfixture.NeedToolchain(t)
	ld64, ldErr := exec.LookPath("ld64.lld-14")
	strip, stripErr := exec.LookPath("strip")
	gcc := cts[2].cc[0]
	dir := t.TempDir()
	type input struct {
		name, path, bounds string
		arches             []string
	}
	for _, level := range []string{"-O0", "-O2"} {
		want := inspect.CodeOptimised
		if level == "-O0" {
			want = inspect.CodeO0
		}
		lv := strings.TrimPrefix(level, "-")
		var inputs []input
		objs := map[string]string{}
		for _, ct := range cts {
			o := compileFuncs(t, ct, level, dir)
			objs[ct.name] = o
			inputs = append(inputs, input{ct.name + " object", o, "symbols", []string{ct.arch}})
		}
		darwinA := tc.Archive(t, "darwin", false, filepath.Join(dir, lv+"-arm64.a"), objs["macos-arm64"])
		darwinX := tc.Archive(t, "darwin", true, filepath.Join(dir, lv+"-x86_64.a"), objs["macos-x86_64"])
		long := filepath.Join(dir, lv+"-"+testfixture.LongName+".o")
		if err := os.Link(objs["linux-x86_64"], long); err != nil {
			t.Fatal(err)
		}
		gnu := tc.Archive(t, "gnu", false, filepath.Join(dir, lv+"-linux.a"), long)
		fat := tc.LipoCreate(t, filepath.Join(dir, lv+"-universal.a"), darwinA, darwinX)
		inputs = append(inputs,
			input{"BSD archive", darwinA, "symbols", []string{"arm64"}},
			input{"BSD archive, 64-bit symbol table", darwinX, "symbols", []string{"x86_64"}},
			input{"GNU archive, long member name", gnu, "symbols", []string{"x86_64"}},
			input{"universal archive", fat, "symbols", []string{"x86_64", "arm64"}})
		so := filepath.Join(dir, lv+"-funcs.so")
		testfixture.RunEnv(t, nil, gcc, "-shared", "-nostdlib", "-o", so, objs["linux-x86_64"])
		inputs = append(inputs, input{"ELF shared object", so, "symbols", []string{"x86_64"}})
		if stripErr == nil {
			stripped := filepath.Join(dir, lv+"-funcs.stripped.so")
			testfixture.RunEnv(t, nil, strip, "-o", stripped, so)
			inputs = append(inputs, input{"stripped ELF shared object", stripped, ".eh_frame", []string{"x86_64"}})
		}
		if ldErr == nil {
			for _, a := range []struct{ arch, minos, obj string }{{"arm64", "11.0", "macos-arm64"}, {"x86_64", "10.12", "macos-x86_64"}} {
				dylib := filepath.Join(dir, lv+"-"+a.arch+".dylib")
				testfixture.RunEnv(t, nil, ld64, "-arch", a.arch, "-platform_version", "macos", a.minos, a.minos,
					"-dylib", "-undefined", "dynamic_lookup", "-o", dylib, objs[a.obj])
				inputs = append(inputs, input{"Mach-O dylib " + a.arch, dylib, "LC_FUNCTION_STARTS", []string{a.arch}})
			}
		}
		for _, in := range inputs {
			vs, err := EvidenceFile(context.Background(), in.path)
			if err != nil {
				t.Errorf("%s %s: %v", level, in.name, err)
				continue
			}
			var arches []string
			for _, v := range vs {
				arches = append(arches, v.Arch)
				t.Logf("%s %-36s %s", level, in.name, v)
				if v.Class != want || v.Bounds != in.bounds || v.Functions < MinFunctions {
					t.Errorf("%s %s %s: %s from %d functions (bounds %s), want %s from at least %d (bounds %s)",
						level, in.name, v.Arch, v.Class, v.Functions, v.Bounds, want, MinFunctions, in.bounds)
				}
			}
			if strings.Join(arches, ",") != strings.Join(in.arches, ",") {
				t.Errorf("%s %s: slices %v, want %v", level, in.name, arches, in.arches)
			}
		}
	}
	if ldErr != nil || stripErr != nil {
		testfixture.Missing(t, "linked-image cases need ld64.lld-14 (apt-get install -y lld-14) and strip (binutils): %v %v", ldErr, stripErr)
	}
}

// armAsm is hand-written arm64 assembly in the style of OpenSSL's perlasm
// output: it homes its argument registers on the stack, which an -O0
// compiler would do too, so only its missing compiler mark (no
// .subsections_via_symbols) keeps it out of the measurement.
const armAsm = `.text
.globl _asm_a
.p2align 2
_asm_a:
	stp x29, x30, [sp, #-32]!
	add x29, sp, #0
	str x0, [sp, #16]
	ldr x0, [sp, #16]
	b 1f
1:
	ldp x29, x30, [sp], #32
	ret
`

// TestCodeEvidenceAssemblyNotMeasured: Mach-O objects without a
// compiler's mark are counted as assembly and left out, so an archive of
// assembly alone has too little evidence whatever its code looks like.
func TestCodeEvidenceAssemblyNotMeasured(t *testing.T) {
	tc := testfixture.NeedToolchain(t)
	dir := t.TempDir()
	// Two objects of 20 functions each, named as perlasm output is.
	var objs []string
	for _, name := range []string{"sha256-armv8", "armv8-mont"} {
		var src strings.Builder
		for i := range 20 {
			src.WriteString(strings.ReplaceAll(armAsm, "_asm_a", "_"+strings.ReplaceAll(name, "-", "_")+itoa(int64(i))))
		}
		s := filepath.Join(dir, name+".S")
		if err := os.WriteFile(s, []byte(src.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		o := filepath.Join(dir, "libcrypto-lib-"+name+".o")
		testfixture.RunEnv(t, nil, tc.Clang, "-target", "arm64-apple-macos11", "-c", "-o", o, s)
		objs = append(objs, o)
	}
	lib := tc.Archive(t, "darwin", false, filepath.Join(dir, "libasm.a"), objs...)
	vs, err := EvidenceFile(context.Background(), lib)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Class != inspect.CodeTooLittle || vs[0].AsmObjects != 2 || vs[0].Functions != 0 {
		t.Fatalf("got %+v, want too little evidence with 2 assembly objects", vs)
	}
	// Measured as if compiled, the same code would look -O0: the mark is
	// what keeps it out.
	opt := defaultCodeOptions
	opt.measureAsm = true
	f, _ := os.Open(lib)
	defer f.Close()
	st, _ := f.Stat()
	vs, err = codeEvidence(context.Background(), lib, f, st.Size(), opt)
	if err != nil || vs[0].Class != inspect.CodeO0 {
		t.Fatalf("measured whole: %+v, %v; want -O0-like", vs, err)
	}
}

// TestCodeEvidenceBadInput: malformed objects are errors naming the file,
// slice and member; members without machine code are skipped.
func TestCodeEvidenceBadInput(t *testing.T) {
	tc := testfixture.NeedToolchain(t)
	dir := t.TempDir()
	obj := tc.Compile(t, dir, "arm64-apple-macos11", "plain", testfixture.PlainSrc)
	good, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.o")
	if err := os.WriteFile(truncated, good[:40], 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "README.txt")
	if err := os.WriteFile(text, []byte("not an object\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// rcS: no symbol table, which llvm-ar would refuse to build from a
	// truncated object.
	lib := filepath.Join(dir, "lib.a")
	testfixture.RunEnv(t, nil, tc.Ar, "--format=darwin", "rcS", lib, obj, truncated)
	_, err = EvidenceFile(context.Background(), lib)
	var fe *inspect.FormatError
	if !errors.As(err, &fe) || !errors.Is(err, inspect.ErrMalformed) || fe.Member != "truncated.o" || !strings.Contains(err.Error(), lib+"(truncated.o)") {
		t.Errorf("truncated member: got %v, want a FormatError naming %s(truncated.o)", err, lib)
	}
	lib2 := tc.Archive(t, "darwin", false, filepath.Join(dir, "lib2.a"), obj, text)
	vs, err := EvidenceFile(context.Background(), lib2)
	if err != nil || len(vs) != 1 || vs[0].Skipped != 1 || vs[0].Objects != 1 || vs[0].Class != inspect.CodeTooLittle {
		t.Errorf("text member: got %+v, %v; want it skipped and one object measured", vs, err)
	}
	if _, err := EvidenceFile(context.Background(), text); !errors.Is(err, inspect.ErrUnknownFormat) {
		t.Errorf("text file: got %v, want inspect.ErrUnknownFormat", err)
	}
	if _, err := EvidenceFile(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "regular file") {
		t.Errorf("directory: got %v, want a refusal", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := EvidenceFile(ctx, lib2); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v, want context.Canceled", err)
	}
	// Every prefix of a real object either parses or fails cleanly.
	for n := 0; n < len(good); n += 7 {
		_, _ = codeEvidence(context.Background(), "prefix", bytes.NewReader(good[:n]), int64(n), defaultCodeOptions)
	}
}

// TestCodeEvidenceDebian: Debian's OpenSSL, built by gcc at -O2 by someone
// else, scores optimised with the corpus's thresholds: the static archives
// (whose objects lost .comment to strip, so assembly is measured too) and
// the stripped shared objects (functions from .eh_frame).
func TestCodeEvidenceDebian(t *testing.T) {
	testfixture.Declare(t, testfixture.TierGate, "Debian's own OpenSSL libraries", testfixture.LinuxNative)
	for _, path := range []string{
		"/usr/lib/x86_64-linux-gnu/libcrypto.a", "/usr/lib/x86_64-linux-gnu/libssl.a",
		"/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "/usr/lib/x86_64-linux-gnu/libssl.so.3",
	} {
		if _, err := os.Stat(path); err != nil {
			testfixture.Missing(t, "%s (apt-get install -y libssl-dev)", path)
		}
		vs, err := EvidenceFile(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 1 || vs[0].Arch != "x86_64" || vs[0].Class != inspect.CodeOptimised {
			t.Errorf("%s: %v, want one x86_64 slice, optimised", path, vs)
			continue
		}
		t.Logf("%s: %s", path, vs[0])
	}
}

// TestDecodeX86OnDebianLibcrypto holds the x86-64 length decoder against
// x/arch on Debian's libcrypto.so.3, function by function (.eh_frame
// bounds): its perlasm code exercises SSE, AVX2, AVX-512 (EVEX), BMI and
// ADX encodings that compiled test code does not. x/arch itself fails on
// some EVEX forms, does not know endbr64 and gets VZEROUPPER/VZEROALL's
// length wrong (3 bytes); a function is compared up to the first such
// instruction (endbr64 is checked here directly).
func TestDecodeX86OnDebianLibcrypto(t *testing.T) {
	testfixture.Declare(t, testfixture.TierGate, "Debian's own OpenSSL libraries", testfixture.LinuxNative)
	const path = "/usr/lib/x86_64-linux-gnu/libcrypto.so.3"
	b, err := os.ReadFile(path)
	if err != nil {
		testfixture.Missing(t, "%s (apt-get install -y libssl3)", path)
	}
	o, err := readELFCode(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, fns := 0, 0
	for _, s := range o.sections {
		code := b[s.offset : s.offset+s.size]
		for k, start := range s.starts {
			end, _ := s.end(k)
			fn := code[start-s.addr : end-s.addr]
			fns++
			for pc := 0; pc < len(fn); {
				if bytes.HasPrefix(fn[pc:], []byte{0xf3, 0x0f, 0x1e, 0xfa}) { // endbr64; x/arch: "REP Op(0)", 1 byte
					if in, ok := decodeX86(fn[pc:]); !ok || in.len != 4 {
						t.Fatalf("function at %#x, offset %#x: endbr64: length %d (ok=%v), want 4", start, pc, in.len, ok)
					}
					pc += 4
					continue
				}
				ref, err := x86asm.Decode(fn[pc:], 64)
				if err != nil || ref.Op == 0 || ref.Op == x86asm.VZEROUPPER || ref.Op == x86asm.VZEROALL {
					break
				}
				in, ok := decodeX86(fn[pc:])
				if !ok || in.len != ref.Len {
					t.Fatalf("function at %#x, offset %#x: %v: length %d (ok=%v), x/arch says %d", start, pc, ref, in.len, ok, ref.Len)
				}
				n++
				pc += ref.Len
			}
		}
	}
	t.Logf("%d instructions in %d functions agree", n, fns)
	if n < 100000 {
		t.Errorf("only %d instructions compared", n)
	}
}

// TestCodeEvidenceFileShrinks: a mapped file truncated under the
// classifier makes its reads fault; that is an error, not a crash.
func TestCodeEvidenceFileShrinks(t *testing.T) {
	tc := testfixture.NeedToolchain(t)
	dir := t.TempDir()
	obj := compileFuncs(t, codeTarget{"macos-arm64", "arm64", []string{tc.Clang, "-target", "arm64-apple-macos11", "-nostdinc"}}, "-O0", dir)
	f, err := os.OpenFile(obj, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	data, unmap, ok := mapFile(f, st.Size())
	if !ok {
		t.Skip("no memory mapping on this system")
	}
	defer unmap()
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	_, err = codeEvidence(context.Background(), obj, memReaderAt(data), int64(len(data)), defaultCodeOptions)
	if err == nil || !strings.Contains(err.Error(), "did the file change") {
		t.Fatalf("got %v, want an error about the file changing", err)
	}
}
