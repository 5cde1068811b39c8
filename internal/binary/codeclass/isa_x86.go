package codeclass

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/x86/x86asm"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// Instruction-set evidence: which x86-64 extensions compiled code uses.
//
// A slice's -march (core2 for osslbuild's x86_64) is a claim like its -O3.
// A per-file flag, a patched Makefile or -march=native puts SSE4, AVX or
// BMI instructions into compiled C, and the library dies with SIGILL on
// older CPUs (or, for TZCNT and LZCNT, which older CPUs run as BSF and
// BSR, computes wrong results). Every instruction of every compiled
// function is decoded (not a sample, unlike the -O classifier), data in
// code skipped; hand-written assembly, which uses AVX2 and AVX-512 behind
// run-time CPU detection, is left out where the container tells (a
// static library's members, as for the -O evidence). Linked images mix
// both: their uses are reported, attributed by symbol, and the caller
// says what it can conclude.

// ext is one instruction-set extension.
type ext uint8

const (
	extNone ext = iota
	extSSE3
	extSSSE3
	extCX16
	extSSE41
	extSSE42
	extPOPCNT
	extAVX
	extAVX2
	extFMA
	extF16C
	extBMI1
	extBMI2
	extLZCNT
	extMOVBE
	extAVX512
	// In no psABI level: CPUs of every level may lack them.
	extAES
	extPCLMUL
	extSHA
	extADX
	extRDRAND
	extRDSEED
	extXOP     // AMD's (Bulldozer): OpenSSL's perlasm has XOP paths
	extAVXIFMA // VEX-encoded VPMADD52 (2023 CPUs), apart from AVX-512's
	extAVXVNNI
	extAMX
	numX86Ext
)

// extNames are every extension's name, x86-64's and arm64's.
var extNames = [numExt]string{"", "SSE3", "SSSE3", "CMPXCHG16B", "SSE4.1", "SSE4.2", "POPCNT", "AVX", "AVX2", "FMA", "F16C",
	"BMI1", "BMI2", "LZCNT", "MOVBE", "AVX-512", "AES-NI", "PCLMULQDQ", "SHA", "ADX", "RDRAND", "RDSEED",
	"XOP", "AVX-IFMA", "AVX-VNNI", "AMX",
	extBF16: "BF16", "I8MM", "SVE", "SME", "MTE", "RNG", "MOPS", "LS64", "WFxT", "SM3/SM4", "CSSC", "HBC", "XS"}

// ISALevels are the x86-64 levels -isa takes, lowest first: the psABI's
// baseline and levels 2 to 4, with core2 (SSSE3, CMPXCHG16B: the oldest
// Intel Mac) between the baseline and v2. Each holds the ones before it.
var ISALevels = []string{"x86-64", "core2", "x86-64-v2", "x86-64-v3", "x86-64-v4"}

// BeyondLevels names what an extension of no level (AES-NI, SHA ...)
// needs: a CPU of any level may lack it.
const BeyondLevels = "beyond x86-64-v4"

// extLevel is the index in ISALevels of the lowest level holding e;
// len(ISALevels) for the extensions of none.
var extLevel = [numExt]int{
	extNone: 0, extSSE3: 1, extSSSE3: 1, extCX16: 1,
	extSSE41: 2, extSSE42: 2, extPOPCNT: 2,
	extAVX: 3, extAVX2: 3, extFMA: 3, extF16C: 3, extBMI1: 3, extBMI2: 3, extLZCNT: 3, extMOVBE: 3,
	extAVX512: 4,
	extAES:    5, extPCLMUL: 5, extSHA: 5, extADX: 5, extRDRAND: 5, extRDSEED: 5,
	extXOP: 5, extAVXIFMA: 5, extAVXVNNI: 5, extAMX: 5,
	// arm64, in ARM64Levels: apple-m2 holds BF16 and I8MM, no level
	// the others.
	extBF16: 1, extI8MM: 1, extSVE: 2, extSME: 2, extMTE: 2, extRNG: 2, extMOPS: 2, extLS64: 2, extWFxT: 2,
	extSM4: 2, extCSSC: 2, extHBC: 2, extXS: 2,
}

// rankIn is the index of an -isa level in levels (ISALevels: a -march
// name among them too), false when it is none.
func rankIn(levels []string, level string) (int, bool) {
	i := slices.Index(levels, level)
	return max(i, 0), i >= 0
}

// LevelRankFor returns the index of an -isa level for a slice's
// architecture: in ISALevels (a -march name among them) for x86_64, in
// ARM64Levels (a -mcpu name among them) for arm64; false for a level of
// neither, or of the other architecture.
func LevelRankFor(arch, level string) (int, bool) {
	switch arch {
	case "arm64", "arm64e", "aarch64":
		return rankIn(ARM64Levels, level)
	case "x86_64", "x86_64h":
		return rankIn(ISALevels, level)
	}
	return 0, false
}

// levelName is the name of a rank, among arm64's levels or x86-64's.
func levelName(arm bool, rank int) string {
	switch {
	case arm && rank < len(ARM64Levels):
		return ARM64Levels[rank]
	case arm:
		return BeyondARM64
	case rank < len(ISALevels):
		return ISALevels[rank]
	}
	return BeyondLevels
}

// x86Ext is the extension an instruction needs beyond the x86-64 baseline
// (SSE2), extNone for baseline instructions.
func x86Ext(in *x86Inst) ext {
	if in.xop {
		return extXOP
	}
	if in.evex {
		return extAVX512
	}
	if in.vex {
		return vexExt(in)
	}
	switch in.opmap {
	case 1:
		op := in.op
		switch {
		case op == 0x12 && (in.pF2 || in.pF3), op == 0x16 && in.pF3: // movddup, movsldup; movshdup
			return extSSE3
		case (op == 0x7c || op == 0x7d || op == 0xd0) && (in.p66 || in.pF2): // haddp*, hsubp*, addsubp*
			return extSSE3
		case op == 0xf0 && in.pF2: // lddqu
			return extSSE3
		case op == 0xb8 && in.pF3:
			return extPOPCNT
		case op == 0xbc && in.pF3: // tzcnt; bsf without the prefix
			return extBMI1
		case op == 0xbd && in.pF3: // lzcnt; bsr without the prefix
			return extLZCNT
		case op == 0xc7 && in.reg&7 == 1 && in.rexW && in.hasMem:
			return extCX16
		case op == 0xc7 && in.reg&7 == 6 && !in.hasMem && !in.pF3:
			return extRDRAND
		case op == 0xc7 && in.reg&7 == 7 && !in.hasMem && !in.pF3:
			return extRDSEED
		}
	case 2:
		op := in.op
		switch {
		case op <= 0x0b || op >= 0x1c && op <= 0x1e:
			return extSSSE3
		case op == 0xf0 || op == 0xf1:
			if in.pF2 {
				return extSSE42 // crc32
			}
			return extMOVBE
		case op == 0xf6 && (in.p66 || in.pF3):
			return extADX
		case op >= 0xc8 && op <= 0xcd && !in.p66:
			return extSHA
		case !in.p66:
		case op == 0x37:
			return extSSE42
		case op >= 0xdb && op <= 0xdf:
			return extAES
		case op == 0x10 || op == 0x14 || op == 0x15 || op == 0x17 || op >= 0x20 && op <= 0x25 ||
			op >= 0x28 && op <= 0x2b || op >= 0x30 && op <= 0x35 || op >= 0x38 && op <= 0x41:
			return extSSE41
		}
	case 3:
		op := in.op
		switch {
		case op == 0x0f:
			return extSSSE3 // palignr
		case op == 0xcc && !in.p66:
			return extSHA
		case !in.p66:
		case op >= 0x08 && op <= 0x0e || op >= 0x14 && op <= 0x17 || op >= 0x20 && op <= 0x22 || op >= 0x40 && op <= 0x42:
			return extSSE41
		case op >= 0x60 && op <= 0x63:
			return extSSE42
		case op == 0x44:
			return extPCLMUL
		case op == 0xdf:
			return extAES
		}
	}
	return extNone
}

// vexExt classifies a VEX-encoded instruction: AVX, or AVX2 for integer
// vectors of 256 bits and the AVX2-only operations; FMA, F16C, BMI1 and
// BMI2, AES-NI and PCLMULQDQ, which VEX encodes too.
func vexExt(in *x86Inst) ext {
	op := in.op
	switch in.opmap {
	case 1:
		if op >= 0x41 && op <= 0x4b || op >= 0x90 && op <= 0x93 || op == 0x98 || op == 0x99 {
			return extAVX512 // opmask instructions (kmovw ...), VEX-encoded
		}
		integer := in.p66 && (op >= 0x60 && op <= 0x6d || op >= 0x70 && op <= 0x76 || op >= 0xd1 && op <= 0xfe && op != 0xe6 && op != 0xe7)
		if integer && in.vexL {
			return extAVX2
		}
	case 2:
		switch {
		case op == 0xb4 || op == 0xb5:
			return extAVXIFMA
		case op >= 0x50 && op <= 0x53:
			return extAVXVNNI
		case op == 0x49 || op == 0x4b || op == 0x5c || op == 0x5e:
			return extAMX
		case op == 0xf2 || op == 0xf3: // andn, blsr/blsmsk/blsi
			return extBMI1
		case op == 0xf7 && !in.p66 && !in.pF2 && !in.pF3: // bextr
			return extBMI1
		case op == 0xf5 || op == 0xf6 || op == 0xf7: // bzhi, pdep, pext, mulx, shlx, sarx, shrx
			return extBMI2
		case op >= 0x96 && op <= 0xbf || op >= 0x98 && op <= 0x9f:
			return extFMA
		case op == 0x13:
			return extF16C
		case op >= 0xdb && op <= 0xdf:
			return extAES
		case op == 0x16 || op == 0x36 || op >= 0x45 && op <= 0x47 || op >= 0x58 && op <= 0x5a || op == 0x78 || op == 0x79 ||
			op == 0x8c || op == 0x8e || op >= 0x90 && op <= 0x93:
			return extAVX2
		case in.vexL && (op <= 0x0b || op >= 0x1c && op <= 0x1e || op >= 0x20 && op <= 0x25 || op >= 0x28 && op <= 0x2b ||
			op >= 0x30 && op <= 0x35 || op >= 0x37 && op <= 0x40):
			return extAVX2
		}
	case 3:
		switch {
		case op >= 0x30 && op <= 0x33:
			return extAVX512 // kshift
		case op == 0xf0:
			return extBMI2 // rorx
		case op == 0x1d:
			return extF16C
		case op == 0x44:
			return extPCLMUL
		case op == 0xdf:
			return extAES
		case op <= 0x02 || op == 0x38 || op == 0x39 || op == 0x46:
			return extAVX2
		case in.vexL && (op == 0x0e || op == 0x0f || op == 0x42):
			return extAVX2
		}
	}
	return extAVX
}

// isaStats is what the instruction-set pass found in one object or slice.
type isaStats struct {
	funcs, insns, undecoded int
	used                    [numExt]int // instructions per extension
	uses                    []inspect.ISAUse
	dropped                 int // uses beyond maxISAUses
	// trace, when set (by tests), sees every instruction counted above
	// the baseline, by address.
	trace func(addr uint64, e ext)
}

// maxISAUses bounds the functions listed per slice; the counts stay whole.
const maxISAUses = 4096

func (s *isaStats) add(o isaStats) {
	s.funcs += o.funcs
	s.insns += o.insns
	s.undecoded += o.undecoded
	for i := range s.used {
		s.used[i] += o.used[i]
	}
	k := max(0, min(len(o.uses), maxISAUses-len(s.uses)))
	s.uses = append(s.uses, o.uses[:k]...)
	s.dropped += o.dropped + len(o.uses) - k
}

// isaFunc decodes one function of a relocatable object whole (arm64:
// word by word), skipping data ranges (in function-relative offsets), and
// returns the highest-level instruction above the baseline (its offset and
// extension) with the count. On arm64 SME counts only where the function
// switches to it (smeSwitched).
func isaFunc(code []byte, start uint64, data [][2]uint64, arm, repBSF bool, st *isaStats) (at int, top ext, n int) {
	var hits []isaHit
	for pos := 0; pos < len(code); {
		if skip := inData(data, uint64(pos)); skip > 0 {
			pos = int(min(skip, uint64(len(code))))
			continue
		}
		e, size := extNone, 4
		if arm {
			if pos+4 > len(code) {
				break
			}
			e = arm64Ext(binary.LittleEndian.Uint32(code[pos:]))
		} else {
			in, ok := decodeX86(code[pos:])
			if !ok {
				st.undecoded++
				pos++
				continue
			}
			e, size = x86Ext(&in), in.len
			if repBSF && e == extBMI1 && in.opmap == 1 && in.op == 0xbc {
				e = extNone // GCC's "rep bsf": see codeObject.gcc
			}
		}
		n++
		if e != extNone {
			hits = append(hits, isaHit{pos, e})
		}
		pos += size
	}
	if arm {
		hits = smeSwitched(code, hits)
	}
	return tally(hits, start, n, st)
}

// inData returns the end of the data range holding off, 0 when none does.
func inData(data [][2]uint64, off uint64) uint64 {
	for _, d := range data {
		if off >= d[0] && off < d[1] {
			return d[1]
		}
	}
	return 0
}

// isaObject runs the pass over every function of one object.
func isaObject(whole []byte, o *codeObject, st *isaStats) {
	first := len(st.uses)
	n := 0
	for _, s := range o.sections {
		n += len(s.starts)
	}
	fns := make([]isaFn, 0, n)
	for i := range o.sections {
		s := &o.sections[i]
		for j := range s.starts {
			if _, ok := s.end(j); ok {
				fns = append(fns, isaFn{s, j})
			}
		}
	}
	// A linked image is one unit of check's workers: its functions, in
	// runs of isaChunk, go to every CPU (a flow each), and the runs'
	// stats join in order, so the uses listed are those one walk lists.
	// A trace (tests) sees the hits in order: one walk.
	if !o.linked || len(fns) < 2*isaChunk || runtime.GOMAXPROCS(0) < 2 || st.trace != nil {
		var fl *flow
		if o.linked {
			fl = &flow{}
		}
		isaWalk(fl, whole, o, fns, st)
	} else {
		runs := make([]isaStats, (len(fns)+isaChunk-1)/isaChunk)
		inspect.OnCPUs(len(runs), func() *flow { return &flow{} }, func(fl *flow, k int) {
			isaWalk(fl, whole, o, fns[k*isaChunk:min((k+1)*isaChunk, len(fns))], &runs[k])
		})
		for _, r := range runs {
			st.add(r)
		}
	}
	// Names for the functions listed, read once the pass has found them.
	if first == len(st.uses) {
		return
	}
	want := map[uint64]bool{}
	for _, u := range st.uses[first:] {
		want[u.Address] = true
	}
	names := symbolNames(whole, want)
	for k := first; k < len(st.uses); k++ {
		u := &st.uses[k]
		u.Function = cmp.Or(names[u.Address], fmt.Sprintf("function at 0x%x", u.Address))
	}
}

// isaFn is one function of an object: the j-th start of section s.
type isaFn struct {
	s *codeSection
	j int
}

// isaChunk is how many functions a worker takes at a time.
const isaChunk = 256

// isaWalk measures each function of fns into st, in order: by recursive
// descent with fl (a linked image), or whole (fl nil).
func isaWalk(fl *flow, whole []byte, o *codeObject, fns []isaFn, st *isaStats) {
	arm := o.arch == "arm64" || o.arch == "arm64e" || o.arch == "aarch64"
	for _, f := range fns {
		s := f.s
		start := s.starts[f.j]
		end, _ := s.end(f.j)
		var data [][2]uint64
		for _, d := range s.data {
			if lo, hi := max(d[0], start), min(d[1], end); lo < hi {
				data = append(data, [2]uint64{lo - start, hi - start})
			}
		}
		fn := whole[s.offset+int64(start-s.addr) : s.offset+int64(end-s.addr)]
		var at, n int
		var top ext
		switch {
		case fl == nil:
			at, top, n = isaFunc(fn, start, data, arm, o.gcc, st)
		case arm:
			at, top, n = arm64Flow(fl, o, whole, fn, start, data, st)
		default:
			at, top, n = x86Flow(fl, o, whole, fn, start, data, o.gcc, st)
		}
		if n > 0 {
			st.funcs++
		}
		if at < 0 {
			continue
		}
		if len(st.uses) >= maxISAUses {
			st.dropped++
			continue
		}
		st.uses = append(st.uses, inspect.ISAUse{Address: start, Offset: int64(start-s.addr) + s.offset + int64(at),
			Extension: extNames[top], Level: levelName(top >= numX86Ext, extLevel[top]), Instruction: describeInst(fn[at:], top >= numX86Ext)})
	}
}

// describeInst is one instruction as a reader knows it: "vpshufb
// ymm0, ymm1, ymm2 (c4 e2 75 00 c2)". x86asm is the full decoder,
// ten times slower than the length decoder, so it reads only the few
// instructions reported.
func describeInst(b []byte, arm bool) string {
	if arm {
		if len(b) < 4 {
			return ""
		}
		hex := fmt.Sprintf("%08x", binary.LittleEndian.Uint32(b))
		decoding.Lock()
		d, err := arm64asm.Decode(b[:4])
		decoding.Unlock()
		if err == nil {
			return strings.ToLower(d.String()) + " (" + hex + ")"
		}
		return hex
	}
	in, ok := decodeX86(b)
	if !ok {
		return ""
	}
	raw := b[:in.len]
	hex := fmt.Sprintf("% x", raw)
	if d, err := x86asm.Decode(raw, 64); err == nil && d.Op != 0 {
		return strings.ToLower(x86asm.IntelSyntax(d, 0, nil)) + " (" + hex + ")"
	}
	return hex
}

// symbolNames maps function addresses to their symbols' names, for the
// few functions that have a use to report (the pass itself reads
// addresses only): those want holds, every function's when want is nil.
// Mach-O names lose the leading underscore C gives them. At one address
// the last global name wins, else the first local one, in table order.
func symbolNames(b []byte, want map[uint64]bool) map[uint64]string {
	out := map[uint64]string{}
	put := func(addr uint64, name string, global bool) {
		if want != nil && !want[addr] || name == "" || strings.HasPrefix(name, "ltmp") || strings.HasPrefix(name, "L") ||
			!global && out[addr] != "" {
			return
		}
		out[addr] = name
	}
	switch inspect.Identify(b) {
	case inspect.FormatMachO:
		// The table in place, not a debug/macho.File: its copied strings,
		// and a name for every function, were half of check's time on a
		// 150 MB image.
		inspect.MachOSymbols(b, func(s inspect.MachOSymbol) error {
			if s.Type&0xe0 == 0 && s.Type&0x0e == 0x0e && s.Name != nil && (want == nil || want[s.Value]) {
				put(s.Value, strings.TrimPrefix(string(s.Name), "_"), s.Type&0x01 != 0)
			}
			return nil
		})
	case inspect.FormatELF:
		f, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			return out
		}
		syms, _ := f.Symbols()
		if len(syms) == 0 {
			syms, _ = f.DynamicSymbols()
		}
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
				put(s.Value, s.Name, elf.ST_BIND(s.Info) == elf.STB_GLOBAL)
			}
		}
	}
	return out
}

// isaEvidence turns a slice's sums into its evidence: x86-64's
// extensions and levels, or arm64's.
func isaEvidence(st isaStats, attribution string, asm int, arm bool) *inspect.ISAEvidence {
	e := &inspect.ISAEvidence{Functions: st.funcs, Instructions: st.insns, Undecoded: st.undecoded,
		Attribution: attribution, AsmObjects: asm, Uses: st.uses, UsesDropped: st.dropped}
	top, lo, hi, levels := 0, ext(1), ext(numX86Ext), len(ISALevels)
	if arm {
		lo, hi, levels = numX86Ext, numExt, len(ARM64Levels)
	}
	for rank := 1; rank <= levels; rank++ { // lowest level first
		for i := lo; i < hi; i++ {
			if st.used[i] > 0 && extLevel[i] == rank {
				e.Extensions = append(e.Extensions, extNames[i])
				top = rank
			}
		}
	}
	e.Level = levelName(arm, top)
	if e.Uses == nil {
		e.Uses = []inspect.ISAUse{}
	}
	return e
}

// UseRank is the rank of a reported use's level, in ISALevels or
// ARM64Levels (their length for an extension of no level).
func UseRank(u inspect.ISAUse) int {
	if r, ok := rankIn(ISALevels, u.Level); ok {
		return r
	}
	if r, ok := rankIn(ARM64Levels, u.Level); ok {
		return r
	}
	if u.Level == BeyondARM64 {
		return len(ARM64Levels)
	}
	return len(ISALevels)
}
