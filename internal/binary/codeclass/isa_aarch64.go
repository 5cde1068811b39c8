package codeclass

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/arch/arm64/arm64asm"
)

// Instruction-set evidence for arm64: which extensions above the
// apple-m1 baseline compiled code uses.
//
// Every arm64 Mac runs apple-m1's instruction set (as LLVM 14 defines it:
// Armv8.4-A with the crypto, SHA3, FP16, FP16FML, DotProd, FRINTTS, SB,
// SSBS and PredRes extensions; macOS 11's targets), so that is the
// baseline. apple-m2 (Armv8.6-A) adds BF16 and I8MM, the only user-level
// instructions the later architecture versions add that the M2 has; SVE
// and SVE2 (Apple has none), SME (M4), MTE, the random-number registers,
// MOPS, LS64, WFET/WFIT, SM3/SM4, CSSC, BC.cond and DSB nXS are beyond
// either. A -mcpu above apple-m1 lets a compiler use them; the rule holds
// the code to the recipe's -mcpu as -march is held on x86_64. Instructions
// are 4 bytes wide, so each word is matched against the encodings (Arm
// ARM, "A64 instruction set encoding"); the matches are held to
// clang-14's assembler and llvm-objdump-14 (isa_aarch64_test.go).

// ARM64Levels are the arm64 levels, lowest first.
var ARM64Levels = []string{"apple-m1", "apple-m2"}

// BeyondARM64 names what an extension no Apple level holds needs.
const BeyondARM64 = "beyond apple-m2"

// arm64 extensions, numbered after the x86-64 ones (one ext type, one
// table of counts).
const (
	extBF16 = numX86Ext + iota
	extI8MM
	extSVE
	extSME
	extMTE
	extRNG
	extMOPS
	extLS64
	extWFxT
	extSM4
	extCSSC
	extHBC
	extXS
	numExt
)

// arm64Ext is the extension a word needs above apple-m1, extNone for
// the baseline.
func arm64Ext(w uint32) ext {
	switch op1 := w >> 25 & 0xf; {
	case op1 == 0x2:
		return extSVE // the SVE encoding space
	case op1 == 0x0:
		if w>>31 == 1 {
			return extSME
		}
		return extNone // UDF
	}
	m := func(mask, val uint32) bool { return w&mask == val }
	switch {
	// BF16: BFCVT, BFCVTN{2}, BFDOT, BFMLALB/T, BFMMLA.
	case m(0xfffffc00, 0x1e634000), m(0xbffffc00, 0x0ea16800), m(0xbfe0fc00, 0x2e40fc00), m(0xbfc0f400, 0x0f40f000),
		m(0xbfe0fc00, 0x2ec0fc00), m(0xbfc0f400, 0x0fc0f000), m(0xffe0fc00, 0x6e40ec00):
		return extBF16
	// I8MM: SMMLA, UMMLA, USMMLA, USDOT (vector, element), SUDOT.
	case m(0xffe0fc00, 0x4e80a400), m(0xffe0fc00, 0x6e80a400), m(0xffe0fc00, 0x4e80ac00), m(0xbfe0fc00, 0x0e809c00),
		m(0xbfc0f400, 0x0f80f000), m(0xbfc0f400, 0x0f00f000):
		return extI8MM
	// SME's mode switches, SMSTART and SMSTOP (MSR SVCR*), and MSR/MRS
	// of SVCR.
	case m(0xfffff0ff, 0xd503407f) && w>>8&0xf >= 2 && w>>8&0xf <= 7, m(0xffdfffe0, 0xd51b4240):
		return extSME
	// MTE: IRG, GMI, SUBP(S), ADDG, SUBG, the tag loads and stores, STGP.
	case m(0xffe0f800, 0x9ac01000), m(0xdfe0fc00, 0x9ac00000), m(0xffc0c000, 0x91800000), m(0xffc0c000, 0xd1800000),
		m(0xff200000, 0xd9200000), m(0xffc00000, 0x68800000), m(0xffc00000, 0x69000000), m(0xffc00000, 0x69800000):
		return extMTE
	case m(0xffffffc0, 0xd53b2400): // MRS Xt, RNDR / RNDRRS
		return extRNG
	case m(0x3b200c00, 0x19000400): // CPY*, SET*
		return extMOPS
	case m(0xfffffc00, 0xf83fd000), m(0xfffffc00, 0xf83f9000), m(0xffe0fc00, 0xf820b000), m(0xffe0fc00, 0xf820a000):
		return extLS64
	case m(0xffffffc0, 0xd5031000): // WFET, WFIT
		return extWFxT
	case m(0xffe08000, 0xce400000), m(0xffe0c000, 0xce408000), m(0xffe0f000, 0xce60c000), m(0xfffffc00, 0xcec08400):
		return extSM4
	case m(0x7ffff800, 0x5ac01800), m(0x7ffffc00, 0x5ac02000), m(0x7fe0f000, 0x1ac06000), m(0x7fc00000, 0x11c00000):
		return extCSSC // ABS, CNT, CTZ, SMAX/SMIN/UMAX/UMIN on general registers
	case m(0xff000010, 0x54000010):
		return extHBC
	case m(0xfffff3ff, 0xd503323f): // DSB <option>nXS
		return extXS
	}
	return extNone
}

// arm64Known says whether a word is an instruction: one arm64asm decodes
// (the base instruction set, Advanced SIMD, crypto) or one of the
// extensions above. An unreached gap is code only when every word is.
func arm64Known(w uint32) bool {
	if w == 0 {
		return false
	}
	if e := arm64Ext(w); e != extNone && e != extSVE && (e != extSME || w>>25&0xf != 0) {
		return true // SME's switches and SVCR, not its encoding space
	}
	if arm64PAuth(w) {
		return true
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], w)
	decoding.Lock()
	_, err := arm64asm.Decode(b[:])
	decoding.Unlock()
	return err == nil
}

// arm64PAuth says w is one of pointer authentication's instructions
// (Armv8.3, in apple-m1's baseline; arm64e code is full of them) that
// arm64asm does not decode: PACIA..AUTDB and their Z forms, XPACI/D,
// PACGA, BRAA/BRAB and BLRAA/BLRAB (and their Z forms), RETAA/RETAB,
// ERETAA/ERETAB, LDRAA/LDRAB. (The hint-space forms, PACIASP and the
// like, arm64asm reads as HINT.) A path through them is code.
func arm64PAuth(w uint32) bool {
	return w&0xffffe000 == 0xdac10000 || // PACIA, PACIB, PACDA, PACDB, AUTIA, AUTIB, AUTDA, AUTDB
		w&0xffffe3e0 == 0xdac123e0 || // PACIZA ... AUTDZB (Rn 11111)
		w&0xfffffbe0 == 0xdac143e0 || // XPACI, XPACD
		w&0xffe0fc00 == 0x9ac03000 || // PACGA
		w&0xffdff800 == 0xd71f0800 || // BRAA, BRAB, BLRAA, BLRAB
		w&0xffdff81f == 0xd61f081f || // BRAAZ, BRABZ, BLRAAZ, BLRABZ
		w&0xfffffbff == 0xd65f0bff || w&0xfffffbff == 0xd69f0bff || // RETAA, RETAB; ERETAA, ERETAB
		w&0xff200400 == 0xf8200400 // LDRAA, LDRAB
}

// arm64Plain says every word of w's class is one arm64asm decodes and
// none needs an extension, so that neither the decoder nor the cache need
// see it. The classes are the 12-bit prefixes (w>>20) all of whose
// 2^20 words are so, 1,064 of 4,096 (every word was tried:
// TestARM64PlainDecodes -plaintable prints this table again), and B.cond
// (BC.cond beside it is HBC): 512 bytes, which hold 83 to 92 % of the
// words of three large arm64 images from npm (bench/check-speed.sh's
// forks; the 13 classes named here before held 74 % of codex's) and
// leave the decoder a third of the distinct words it saw (codex: 161,367
// of 443,278). insnCache.word reads plainWords' 22-bit prefixes for the
// words these leave (not here: the walk calls this for every word, and
// inlined it is a few instructions).
func arm64Plain(w uint32) bool {
	return plainPrefixes[w>>26]>>(w>>20&63)&1 != 0 || w&0xff000010 == 0x54000000
}

// bitSet says whether bit i of the bitmap t (bit i&63 of word i>>6) is set.
func bitSet(t []uint64, i uint32) bool { return t[i>>6]>>(i&63)&1 != 0 }

// plainWords is a bit per 22-bit prefix (w>>10: all of a word but the
// two register fields of most instructions) of
// which arm64asm decodes every word and no word needs an extension,
// outside plainPrefixes: 176,430 of 2^22, SIMD, floating point and
// the rest of the general-register instructions (every word was tried:
// TestARM64PlainDecodes -plaintable writes plain22.bin.gz again). After
// plainPrefixes, they leave the decoder 4 to 7 % of the distinct words
// it saw: 11,570 of codex's 161,367, 6,011 of rtc-node's 182,110. 512 KB
// in memory, 1.9 KB gzipped in the binary, read at the first word that
// needs it.
var plainWords = sync.OnceValue(func() []uint64 {
	zr, err := gzip.NewReader(bytes.NewReader(plain22))
	if err != nil {
		panic(fmt.Sprintf("codeclass: plain22.bin.gz: %v", err)) // embedded: a build that broke it
	}
	b, err := io.ReadAll(zr)
	if err != nil || len(b) != 1<<19 {
		panic(fmt.Sprintf("codeclass: plain22.bin.gz: %d bytes, %v; want 1<<19", len(b), err))
	}
	t := make([]uint64, 1<<16)
	for i := range t {
		t[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return t
})

//go:embed plain22.bin.gz
var plain22 []byte

// plainPrefixes is a bit per 12-bit prefix, bit p&63 of word p>>6.
var plainPrefixes = [64]uint64{
	0x0000000000000000, 0x0000000000000000, 0x000c000000000033, 0x0000000000000000,
	0x00000f0000ffffff, 0xffffffffffffffff, 0x000300000000ffff, 0x00ff00000000ffff,
	0x0000000000000000, 0x0000000000000000, 0x000c0000ffffffff, 0x00000000ffffffff,
	0x0000000000ffffff, 0xffffffffffffffff, 0x00000000ffff3333, 0x00000000ffff0000,
	0x0000000000000000, 0x0000000000000000, 0x000c000000000033, 0x0000000000000000,
	0x00000f0000ffffff, 0x0000000000000000, 0x000000000000ffff, 0x000000000000ffff,
	0x0000000000000000, 0x0000000000000000, 0x000c0000f0f0f000, 0x00000000ffffffff,
	0x00000f0000ffffff, 0x0000000000000000, 0x00000000ffff3333, 0x0000000000ff0000,
	0x0000000000000000, 0x0000000000000000, 0x033fffff000000ff, 0x0000000000000000,
	0x30f0fff000ffffff, 0xffffffffffffffff, 0x0c0f00000000ffff, 0x000000000000ffff,
	0x0000000000000000, 0x0000000000000000, 0x033fffffffffffff, 0x00000000ffffffff,
	0x00f000f000ffffff, 0xffffffffffffffff, 0x000000000fff0333, 0x0000000000ff0000,
	0x0000000000000000, 0x0000000000000000, 0x033fffff000000ff, 0x0000000000000000,
	0x00f0fff000ffffff, 0x0000000000000000, 0x000000000000ffff, 0x0000000000000000,
	0x0000000000000000, 0x0000000000000000, 0x033fffff00000000, 0x0000000000000000,
	0x0000fff000ffffff, 0x0000000000000000, 0x000000000fff0033, 0x0000000000ff0000,
}

// decoding serialises arm64asm.Decode, which marks the format it matched
// in a package-level slice (its tests' coverage): a data race between
// the walks of two images (check's workers) otherwise.
var decoding sync.Mutex

// arm64 registers written by the few instructions descent follows.
type arm64Def struct {
	addr uint64 // an address (ADR; ADRP and ADD)
	page bool   // addr is an ADRP page, waiting for its ADD
	path uint32 // the walk's path that set it: valid on that one only, so no path clears all 32
}

// arm64Flow decodes one function of a linked image by recursive descent
// (see isa_flow.go), with jump tables resolved from adrp/add of the
// table, an ldrb/ldrh/ldr/ldrsw of an entry, adr of the anchor, add and br.
//
// Perlasm puts constants among the functions, and a Mach-O symbol names
// them as it names code, so only what reads as code all the way counts:
// a function whose first word is no instruction (insn below) counts none;
// a path stops at a word that is none (or a resolved table, or UDF:
// small integers read so), and the run of that path since its last
// branch (B, BL, B.cond, CB*, TB*, BR*, BLR*, RET*, BRK, HLT), which
// led into it, counts nothing; a run counts once it ends in a branch or
// joins code walked already. SME counts only where a reached path turns
// streaming mode or ZA on or off (smSwitch): without that every SME
// instruction traps.
func arm64Flow(f *flow, o *codeObject, whole, fn []byte, start uint64, data [][2]uint64, st *isaStats) (at int, top ext, n int) {
	f.reset(len(fn))
	for _, d := range data {
		fill(f.mark[d[0]:min(d[1], uint64(len(fn)))], markData)
	}
	// A switch anywhere in fn: SME's encodings may be instructions. Read
	// when a word of SME's space is met, which few functions have.
	sme, smeRead := false, false
	insn := func(w uint32) (bool, ext) {
		known, e := words.word(w)
		if w>>25&0xf != 0 || w>>31 != 1 {
			return e == extSVE || known, e // any word of SVE's space: no decoder here reads it
		}
		if !smeRead {
			for p := 0; p+4 <= len(fn) && !sme; p += 4 {
				sme = smSwitch(binary.LittleEndian.Uint32(fn[p:]))
			}
			smeRead = true
		}
		return sme, e
	}
	if len(fn) < 4 || f.mark[0] == markData {
		return -1, extNone, 0
	}
	if ok, _ := insn(binary.LittleEndian.Uint32(fn)); !ok {
		return -1, extNone, 0
	}
	var regs [32]arm64Def
	path := uint32(0)
	var ring [6]uint32
	f.work = append(f.work, 0)
	for f.pending() {
		pos := f.pop()
		path++
		nRing := 0
		bad := false
	path:
		for pos >= 0 && pos+4 <= len(fn) && pos%4 == 0 {
			switch f.mark[pos] {
			case markInsn:
				break path
			case markData, markBody:
				bad = true
				break path
			}
			w := binary.LittleEndian.Uint32(fn[pos:])
			ok, e := insn(w)
			if w>>16 == 0 || !ok { // UDF, or no instruction
				bad = true
				break path
			}
			binary.LittleEndian.PutUint32(f.mark[pos:], insnMarks) // one store for the four marks
			n++
			if e != extNone {
				f.hits = append(f.hits, isaHit{pos, e})
			}
			pc := start + uint64(pos)
			ring[nRing%len(ring)] = w
			nRing++
			next := pos + 4
			rel := func(bits, shift uint) int {
				v := int64(int32(w<<(32-bits-shift)) >> (32 - bits)) // sign-extended imm
				return pos + int(v*4)
			}
			ref := func(a uint64) {
				if a >= start && a-start < uint64(len(fn)) {
					f.refs = append(f.refs, a-start)
				}
			}
			switch {
			case w&0xfc000000 == 0x14000000: // B
				f.commit()
				pos = rel(26, 0)
				continue
			case w&0xfc000000 == 0x94000000: // BL
				f.work = append(f.work, next, rel(26, 0))
				break path
			case w&0xff000000 == 0x54000000, w&0x7e000000 == 0x34000000: // B.cond, BC.cond; CBZ, CBNZ
				f.work = append(f.work, rel(19, 5))
				f.commit()
			case w&0x7e000000 == 0x36000000: // TBZ, TBNZ
				f.work = append(f.work, rel(14, 5))
				f.commit()
			case w&0xfffffc1f == 0xd65f0000, w == 0xd65f0bff, w == 0xd65f0fff, w == 0xd69f03e0, // RET, RETAA/AB, ERET
				w&0xffe0001f == 0xd4200000, w&0xffe0001f == 0xd4400000, // BRK, HLT
				w&0xfefff800 == 0xd61f0800: // BRAA, BRAB, BRAAZ, BRABZ
				break path
			case w&0xfffffc1f == 0xd61f0000: // BR
				f.arm64Table(o, whole, fn, start, ring, nRing, &regs, path)
				break path
			case w&0xfffffc1f == 0xd63f0000, w&0xfefff800 == 0xd63f0800: // BLR, BLRAA, BLRAB, BLRAAZ, BLRABZ
				f.work = append(f.work, next)
				break path
			case w&0x9f000000 == 0x10000000: // ADR
				a := uint64(int64(pc) + int64(int32((w>>5&0x7ffff)<<13|(w>>29&3)<<11)>>11))
				regs[w&31] = arm64Def{addr: a, path: path}
				ref(a)
			case w&0x9f000000 == 0x90000000: // ADRP
				off := int64(int32((w>>5&0x7ffff)<<13|(w>>29&3)<<11)>>11) << 12
				regs[w&31] = arm64Def{addr: uint64(int64(pc&^0xfff) + off), page: true, path: path}
			case w&0xffc00000 == 0x91000000: // ADD Xd, Xn, #imm
				if d := regs[w>>5&31]; d.path == path && d.page {
					a := d.addr + uint64(w>>10&0xfff)
					regs[w&31] = arm64Def{addr: a, path: path}
					ref(a)
				} else {
					regs[w&31] = arm64Def{}
				}
			case w&0x3b000000 == 0x18000000: // LDR (literal)
				ref(uint64(rel(19, 5)) + start)
			}
			pos = next
		}
		// A path ends at a branch or stop (break path, counted), code
		// walked already (counted), no instruction (bad) or the
		// function's end, which no code runs into (not counted).
		if bad || pos+4 > len(fn) || pos < 0 || pos%4 != 0 {
			f.drop()
		} else {
			f.commit()
		}
	}
	f.gaps(len(fn), 4, func(g0, g1 int) {
		ok := true
		for p := g0; p < g1 && ok; p += 4 {
			ok, _ = words.word(binary.LittleEndian.Uint32(fn[p:]))
		}
		for p := g0; p < g1 && ok; p += 4 {
			n++
			if e := arm64Ext(binary.LittleEndian.Uint32(fn[p:])); e != extNone {
				f.hits = append(f.hits, isaHit{p, e})
			}
		}
	})
	f.committed = smeSwitched(fn, f.committed)
	return tally(f.committed, start, n, st)
}

// insnMarks are an instruction's four marks, as one little-endian word.
const insnMarks = uint32(markInsn) | uint32(markBody)<<8 | uint32(markBody)<<16 | uint32(markBody)<<24

// insnCache remembers what the walk asks of a word: arm64Known and
// arm64Ext. The full decoder was three quarters of check's time on a
// 150 MB image, whose words repeat (every ret, every stp x29, x30,
// [sp, #-16]!). One for the process (the answers are the word's alone),
// shared by every walk on every CPU: a cache per walk decoded each word
// again on each, all behind decoding's lock. Direct-mapped by a hash of
// the word, so its memory is fixed; a slot holds the word, the
// extension, a present bit and the answer, in one atomic word, so that a
// slot read while another walk writes it is either whole or missed.
type insnCache struct {
	once sync.Once
	slot []atomic.Uint64
}

var words insnCache

// word returns arm64Known(w) and arm64Ext(w).
func (c *insnCache) word(w uint32) (bool, ext) {
	if arm64Plain(w) || bitSet(plainWords(), w>>10) {
		return true, extNone // cheaper than the slot's cache line, and than the decoder
	}
	c.once.Do(func() { c.slot = make([]atomic.Uint64, 1<<18) })
	i := w * 0x9e3779b1 >> 14
	if v := c.slot[i].Load(); v&2 != 0 && uint32(v>>32) == w {
		return v&1 != 0, ext(v >> 8)
	}
	k, e := arm64Known(w), arm64Ext(w)
	c.slot[i].Store(uint64(w)<<32 | uint64(e)<<8 | 2 | uint64(b2i(k)))
	return k, e
}

// smSwitch says whether w turns streaming mode or ZA on or off: SMSTART,
// SMSTOP (MSR SVCRSM/SVCRZA/SVCRSMZA, #imm) or MSR SVCR, Xt.
func smSwitch(w uint32) bool {
	return w&0xfffff0ff == 0xd503407f && w>>8&0xf >= 2 && w>>8&0xf <= 7 || w&0xffffffe0 == 0xd51b4240
}

// smeSwitched drops the SME hits of a function none of whose hits (the
// code counted) is a switch (smSwitch): hits keeps its order.
func smeSwitched(fn []byte, hits []isaHit) []isaHit {
	for _, h := range hits {
		if h.e == extSME && smSwitch(binary.LittleEndian.Uint32(fn[h.pos:])) {
			return hits
		}
	}
	return slices.DeleteFunc(hits, func(h isaHit) bool { return h.e == extSME })
}

// arm64Table resolves the BR just walked (the last word of ring) and
// queues the table's targets: target = anchor + entry<<shift, with the
// entry loaded by ldrb/ldrh/ldr/ldrsw (and sign- or zero-extended by
// the load or the add) from the table.
func (f *flow) arm64Table(o *codeObject, whole, fn []byte, start uint64, ring [6]uint32, nRing int, regs *[32]arm64Def, path uint32) {
	br := ring[(nRing-1)%len(ring)]
	target := br >> 5 & 31
	var anchorReg, entryReg, shift uint32
	signed, ext := false, false
	found := false
	for k := 2; k <= min(nRing, len(ring)) && !found; k++ {
		w := ring[(nRing-k)%len(ring)]
		switch {
		case w&0xff200000 == 0x8b000000 && w&31 == target && w>>22&3 == 0: // ADD (shifted register), LSL
			anchorReg, entryReg, shift, found = w>>5&31, w>>16&31, w>>10&63, true
		case w&0xffe00000 == 0x8b200000 && w&31 == target: // ADD (extended register)
			opt := w >> 13 & 7
			anchorReg, entryReg, shift, found = w>>5&31, w>>16&31, w>>10&7, true
			ext, signed = opt != 3 && opt != 7, opt >= 4
		}
	}
	if !found || regs[anchorReg].path != path || regs[anchorReg].page {
		return
	}
	anchor := regs[anchorReg].addr
	for k := 2; k <= min(nRing, len(ring)); k++ {
		w := ring[(nRing-k)%len(ring)]
		if w&0x3f200c00 != 0x38200800 || w&31 != entryReg { // load, register offset
			continue
		}
		size := 1 << (w >> 30)
		if !ext {
			signed = w>>23&1 == 1
		}
		tr := regs[w>>5&31]
		if tr.path != path || tr.page || size > 4 {
			return
		}
		end := start + uint64(len(fn))
		for i := 0; i < maxJumpEntries; i++ {
			b := o.read(whole, tr.addr+uint64(i*size), size)
			if b == nil {
				return
			}
			t := uint64(int64(anchor) + leInt(b, signed)<<shift)
			if t < start || t >= end || t%4 != 0 || f.mark[t-start] == markData {
				return
			}
			if tr.addr >= start && tr.addr < end {
				for j := 0; j < size; j++ {
					f.mark[tr.addr-start+uint64(i*size+j)] = markData
				}
			}
			f.tables = append(f.tables, int(t-start))
		}
		return
	}
}
