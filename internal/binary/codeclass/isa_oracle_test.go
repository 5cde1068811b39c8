package codeclass

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// oracleRank is the level of an instruction as x86asm decodes it: the
// full decoder's mnemonic, independent of the length decoder's tables.
func oracleRank(raw []byte, in x86asm.Inst) int {
	op := in.Op.String()
	i := 0
	for i < len(raw) && (raw[i] == 0x66 || raw[i] == 0xf2 || raw[i] == 0xf3 || raw[i] == 0x67 || raw[i] == 0x2e || raw[i] == 0x3e || raw[i] == 0x26 || raw[i] == 0x36 || raw[i] == 0x64 || raw[i] == 0x65 || raw[i] == 0xf0) {
		i++
	}
	switch {
	case i < len(raw) && raw[i] == 0x62:
		return 4 // EVEX
	case strings.HasPrefix(op, "VAES"), strings.HasPrefix(op, "VPCLMUL"):
		return 5
	case strings.HasPrefix(op, "V"):
		return 3
	}
	for rank, ops := range map[int][]string{
		1: {"MOVDDUP", "MOVSLDUP", "MOVSHDUP", "HADDPS", "HADDPD", "HSUBPS", "HSUBPD", "ADDSUBPS", "ADDSUBPD", "LDDQU",
			"PSHUFB", "PALIGNR", "PHADDW", "PHADDD", "PHADDSW", "PHSUBW", "PHSUBD", "PHSUBSW", "PMADDUBSW", "PMULHRSW", "PSIGNB", "PSIGNW", "PSIGND", "PABSB", "PABSW", "PABSD", "CMPXCHG16B"},
		2: {"PMINSB", "PMINSD", "PMINUW", "PMINUD", "PMAXSB", "PMAXSD", "PMAXUW", "PMAXUD", "PTEST", "PBLENDW", "PBLENDVB", "BLENDPS", "BLENDPD", "BLENDVPS", "BLENDVPD",
			"ROUNDSS", "ROUNDSD", "ROUNDPS", "ROUNDPD", "PEXTRB", "PEXTRD", "PEXTRQ", "PINSRB", "PINSRD", "PINSRQ", "EXTRACTPS", "INSERTPS", "PMULLD", "PMULDQ",
			"PCMPEQQ", "PACKUSDW", "DPPS", "DPPD", "MPSADBW", "PHMINPOSUW", "MOVNTDQA", "PCMPGTQ", "CRC32", "PCMPESTRI", "PCMPESTRM", "PCMPISTRI", "PCMPISTRM", "POPCNT"},
		3: {"LZCNT", "TZCNT", "ANDN", "BLSR", "BLSI", "BLSMSK", "BEXTR", "BZHI", "PDEP", "PEXT", "MULX", "RORX", "SARX", "SHLX", "SHRX", "MOVBE"},
		5: {"AESENC", "AESENCLAST", "AESDEC", "AESDECLAST", "AESIMC", "AESKEYGENASSIST", "PCLMULQDQ", "SHA1RNDS4", "SHA1NEXTE", "SHA1MSG1", "SHA1MSG2", "SHA256RNDS2", "SHA256MSG1", "SHA256MSG2", "ADCX", "ADOX", "RDRAND", "RDSEED"},
	} {
		for _, o := range ops {
			if op == o || strings.HasPrefix(op, "PMOVSX") && rank == 2 || strings.HasPrefix(op, "PMOVZX") && rank == 2 {
				return rank
			}
		}
	}
	return 0
}

// TestISAAgainstX86asm decodes a corpus of compiled code, for every -march
// and extension flag the instruction-set rule distinguishes, with both the
// project's decoder and x86asm, and holds every instruction to the same
// length and level. x86asm failing on an instruction (an error, or an Op of
// 0 with none, which is x86asm's failure, not an instruction) is counted
// and left out; it must stay rare.
func TestISAAgainstX86asm(t *testing.T) {
	testfixture.Tools(t, "clang-14", "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "corpus.c")
	corpus := `
typedef char v16 __attribute__((vector_size(16)));
void add_ints(int *restrict d, const int *restrict a, const int *restrict b, int n) { for (int i = 0; i < n; i++) d[i] = a[i] + b[i]; }
void min_ints(int *restrict d, const int *restrict a, const int *restrict b, int n) { for (int i = 0; i < n; i++) d[i] = a[i] < b[i] ? a[i] : b[i]; }
void mul_longs(long *restrict d, const long *restrict a, int n) { for (int i = 0; i < n; i++) d[i] = a[i] * 3 + (a[i] >> 7); }
void fma_floats(float *restrict d, const float *restrict a, const float *restrict b, int n) { for (int i = 0; i < n; i++) d[i] = d[i] + a[i] * b[i]; }
double dot(const double *a, const double *b, int n) { double s = 0; for (int i = 0; i < n; i++) s += a[i] * b[i]; return s; }
unsigned long shift(unsigned long x, unsigned n) { return x << (n & 63); }
unsigned long rot(unsigned long x) { return x >> 13 | x << 51; }
int bits(unsigned long x) { return __builtin_popcountl(x); }
int low(unsigned x) { return __builtin_ctz(x); }
int high(unsigned long x) { return __builtin_clzl(x); }
unsigned bswap(unsigned x) { return __builtin_bswap32(x); }
int count(const char *s, char c, int n) { int k = 0; for (int i = 0; i < n; i++) k += s[i] == c; return k; }
void rev(unsigned char *restrict d, const unsigned char *restrict s, int n) { for (int i = 0; i < n; i++) d[i] = s[n - 1 - i]; }
int sw(int x, int y) { switch (x) { case 0: return y; case 1: return y * 3; case 2: return y ^ 7; case 3: return y + 11; case 4: return y - 5; case 5: return y << 2; default: return 0; } }
`
	if err := os.WriteFile(src, []byte(corpus), 0o644); err != nil {
		t.Fatal(err)
	}
	var objs []string
	for i, flags := range [][]string{
		{"-march=x86-64"}, {"-march=core2"}, {"-march=core2", "-msse4.1"}, {"-march=core2", "-msse4.2", "-mpopcnt"},
		{"-march=core2", "-mbmi", "-mlzcnt"}, {"-march=haswell"}, {"-march=haswell", "-O3"}, {"-march=skylake-avx512", "-O3"},
		{"-march=x86-64-v3", "-mbmi2", "-mmovbe"}, {"-march=icelake-server", "-O3"},
	} {
		for _, cc := range []string{"clang", "gcc"} {
			out := filepath.Join(dir, cc+string(rune('a'+i))+".o")
			args := append([]string{"-O2", "-c", src, "-o", out}, flags...)
			if cc == "clang" {
				args = append([]string{"clang-14", "-target", "x86_64-apple-macos10.12", "-ffreestanding"}, args...)
			} else {
				args = append([]string{"gcc"}, args...)
			}
			testfixture.RunIn(t, dir, args...)
			objs = append(objs, out)
		}
	}
	compared, failed, byRank := 0, 0, map[int]int{}
	for _, p := range objs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var o *codeObject
		if strings.Contains(filepath.Base(p), "clang") {
			o, err = readMachOCode(b, nil)
		} else {
			o, err = readELFCode(b, nil)
		}
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, s := range o.sections {
			code := b[s.offset : s.offset+s.size]
			for pos := 0; pos < len(code); {
				if end := inData(s.data, s.addr+uint64(pos)); end > 0 { // a jump table (LC_DATA_IN_CODE)
					pos = int(end - s.addr)
					continue
				}
				in, ok := decodeX86(code[pos:])
				if !ok {
					t.Errorf("%s: offset %d: the decoder cannot read % x", filepath.Base(p), pos, code[pos:min(pos+8, len(code))])
					pos++
					continue
				}
				raw := code[pos : pos+in.len]
				d, err := x86asm.Decode(code[pos:], 64)
				// x86asm v0.33 takes VZEROUPPER (c5 f8 77) for 4 bytes; it is
				// 3 (Intel SDM vol. 2C): its failure, like an Op of 0.
				if err != nil || d.Op == 0 || d.Op == x86asm.VZEROUPPER && d.Len != 3 {
					failed++
					pos += in.len
					continue
				}
				compared++
				if d.Len != in.len {
					t.Errorf("%s: offset %d: length %d, x86asm %d (%s: % x)", filepath.Base(p), pos, in.len, d.Len, d.Op, raw)
				}
				e := x86Ext(&in)
				ours, want := extLevel[e], oracleRank(raw, d)
				byRank[ours]++
				if ours != want {
					t.Errorf("%s: offset %d: %s (% x): level %s (%s), x86asm's %s says %s", filepath.Base(p), pos, x86asm.IntelSyntax(d, 0, nil), raw, levelName(false, ours), extNames[e], d.Op, levelName(false, want))
				}
				pos += in.len
			}
		}
	}
	t.Logf("%d instructions compared, %d x86asm could not decode; by level: %v", compared, failed, byRank)
	if compared < 2000 || byRank[1] == 0 || byRank[2] == 0 || byRank[3] == 0 || byRank[4] == 0 {
		t.Errorf("corpus too thin: %d instructions, by level %v", compared, byRank)
	}
	if failed*100 > compared {
		t.Errorf("x86asm failed on %d of %d instructions", failed, compared)
	}
}
