package codeclass

// x86-64 instructions vary in length, so the classifier carries a small
// length decoder for 64-bit mode (Intel SDM vol. 2, appendix A): prefixes,
// REX, VEX and EVEX, the one-byte, 0F, 0F38 and 0F3A opcode maps, ModRM,
// SIB, displacement and immediate. It decodes just enough to find memory
// operands and the handful of opcodes the features need; a full
// disassembler (x86asm) measured about 2 µs per instruction here, too slow
// for a 17.8 MB library inside the time budget.

// x86Inst is a decoded instruction, as far as the classifier cares.
type x86Inst struct {
	len     int
	opmap   uint8 // 0 one-byte, 1 0F, 2 0F38, 3 0F3A
	op      uint8
	vex     bool // VEX or EVEX encoded
	evex    bool // EVEX encoded (AVX-512)
	vexL    bool // VEX.L (EVEX L'L non-zero): 256-bit (or wider) vectors
	p66     bool // operand-size prefix (or VEX/EVEX pp=01)
	pF3     bool // REP prefix (or pp=10)
	pF2     bool // REPNE prefix (or pp=11)
	rex     bool // a REX prefix was present
	rexW    bool
	modrm   bool
	mod     uint8
	reg     uint8 // ModRM.reg extended by REX.R
	rm      uint8 // ModRM.rm extended by REX.B
	modrmB  byte  // the ModRM byte itself
	hasMem  bool
	rip     bool  // the memory operand is RIP-relative (disp counts from the next instruction)
	xop     bool  // AMD's XOP encoding (8F prefix, maps 8 to 10)
	base    int8  // memory base register number (0-15), -1 for none or RIP
	index   int8  // -1 for none
	scale   uint8 // of the index: 1, 2, 4 or 8
	disp    int64
	immByte byte // first immediate byte (jmp rel8 target)
}

// immediate kinds in the opcode tables
const (
	immNone  = 0
	immB     = 1 // 1 byte
	immW     = 2 // 2 bytes
	immZ     = 3 // 4 bytes, 2 with the operand-size prefix
	immV     = 4 // 8 bytes with REX.W, else as immZ (MOV r, imm)
	immMoffs = 5 // 8-byte address (4 with the address-size prefix)
	immEnter = 6 // 2 + 1 bytes
	immGrp3  = 7 // F6/F7: immB/immZ only for /0 and /1
	x86ModRM = 0x10
	x86Bad   = 0x20 // invalid in 64-bit mode, or a prefix handled elsewhere
)

// setOps gives the opcodes ops the description v in t; fillOps gives it
// the opcodes from lo up to hi.
func setOps(t *[256]uint8, v uint8, ops ...int) {
	for _, op := range ops {
		t[op] = v
	}
}

func fillOps(t *[256]uint8, v uint8, lo, hi int) {
	for op := lo; op < hi; op++ {
		t[op] = v
	}
}

// oneByte describes the one-byte opcode map.
var oneByte = func() (t [256]uint8) {
	for op := 0; op < 0x40; op++ {
		switch op & 7 {
		case 0, 1, 2, 3:
			t[op] = x86ModRM
		case 4:
			t[op] = immB
		case 5:
			t[op] = immZ
		default: // push/pop segment, DAA etc., segment prefixes
			t[op] = x86Bad
		}
	}
	fillOps(&t, x86Bad, 0x40, 0x50) // REX, consumed as a prefix
	setOps(&t, x86Bad, 0x60, 0x61, 0x62, 0x64, 0xf1, 0x65, 0x66, 0x67, 0x82, 0x9a, 0xc4, 0xc5, 0xce, 0xd4, 0xd5, 0xd6, 0xea, 0xf0, 0xf2, 0xf3)
	setOps(&t, x86ModRM, 0x63, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
		0xd0, 0xd1, 0xd2, 0xd3, 0xd8, 0xd9, 0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xfe, 0xff)
	setOps(&t, immZ, 0x68, 0xa9, 0xe8, 0xe9)
	setOps(&t, x86ModRM|immZ, 0x69, 0x81, 0xc7)
	setOps(&t, immB, 0x6a, 0xa8, 0xcd, 0xe0, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xeb)
	setOps(&t, x86ModRM|immB, 0x6b, 0x80, 0x83, 0xc0, 0xc1, 0xc6)
	fillOps(&t, immB, 0x70, 0x80)
	setOps(&t, immMoffs, 0xa0, 0xa1, 0xa2, 0xa3)
	fillOps(&t, immB, 0xb0, 0xb8)
	fillOps(&t, immV, 0xb8, 0xc0)
	setOps(&t, immW, 0xc2, 0xca)
	setOps(&t, immEnter, 0xc8)
	setOps(&t, x86ModRM|immGrp3, 0xf6, 0xf7)
	return t
}()

// twoByte describes the 0F map.
var twoByte = func() (t [256]uint8) {
	fillOps(&t, x86ModRM, 0, 256)
	setOps(&t, immNone, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0b, 0x0e, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x37,
		0x77, 0xa0, 0xa1, 0xa2, 0xa8, 0xa9, 0xaa, 0xc8, 0xc9, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf)
	setOps(&t, x86ModRM|immB, 0x0f, 0x70, 0x71, 0x72, 0x73, 0xa4, 0xac, 0xba, 0xc2, 0xc4, 0xc5, 0xc6)
	fillOps(&t, immZ, 0x80, 0x90) // jcc rel32
	setOps(&t, x86Bad, 0x04, 0x0a, 0x0c, 0xff, 0x24, 0x25, 0x26, 0x27, 0x36, 0x39, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f)
	return t
}()

// decodeX86 decodes the instruction at the start of b. ok is false for
// bytes that are not a valid 64-bit instruction (or are cut off).
func decodeX86(b []byte) (in x86Inst, ok bool) {
	i := 0
	in.base, in.index = -1, -1
	addr32 := false
	// Legacy prefixes (at most 14 bytes in all, the architectural limit).
	for ; i < len(b) && i < 14; i++ {
		switch b[i] {
		case 0x66:
			in.p66 = true
			continue
		case 0xf3:
			in.pF3, in.pF2 = true, false
			continue
		case 0xf2:
			in.pF2, in.pF3 = true, false
			continue
		case 0x67:
			addr32 = true
			continue
		case 0xf0, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65:
			continue
		}
		break
	}
	if i >= len(b) {
		return in, false
	}
	var rexR, rexX, rexB uint8
	if b[i]&0xf0 == 0x40 {
		r := b[i]
		in.rex, in.rexW = true, r&8 != 0
		rexR, rexX, rexB = r>>2&1, r>>1&1, r&1
		i++
		if i >= len(b) {
			return in, false
		}
	}
	var flags uint8
	switch c := b[i]; {
	case c == 0x8f && i+1 < len(b) && b[i+1]&0x1f >= 8:
		// XOP (AMD): VEX3's layout after 8F, maps 8 (imm8), 9 and 10
		// (imm32); POP r/m (8F /0) has no map field.
		m := b[i+1] & 0x1f
		if i+3 >= len(b) || m > 10 {
			return in, false
		}
		in.vex, in.xop = true, true
		rexR, rexX, rexB = ^b[i+1]>>7&1, ^b[i+1]>>6&1, ^b[i+1]>>5&1
		in.opmap, in.rexW, in.vexL = m, b[i+2]&0x80 != 0, b[i+2]&4 != 0
		in.op = b[i+3]
		i += 4
		flags = x86ModRM
		switch m {
		case 8:
			flags |= immB
		case 10:
			flags |= immZ
		}
	case c == 0xc5 || c == 0xc4 || c == 0x62: // VEX2, VEX3, EVEX
		in.vex = true
		var pp uint8
		switch c {
		case 0xc5:
			if i+2 >= len(b) {
				return in, false
			}
			rexR = ^b[i+1] >> 7 & 1
			pp, in.opmap = b[i+1]&3, 1
			in.vexL = b[i+1]&4 != 0
			i += 2
		case 0xc4, 0x62:
			// Three-byte VEX and EVEX keep R, X, B, the map, W and pp in
			// the same bits; EVEX's map field is 3 bits wide and its
			// prefix a byte longer.
			n, mapMask := 3, byte(0x1f)
			if c == 0x62 {
				n, mapMask = 4, 7
			}
			if i+n >= len(b) {
				return in, false
			}
			rexR, rexX, rexB = ^b[i+1]>>7&1, ^b[i+1]>>6&1, ^b[i+1]>>5&1
			in.opmap, in.rexW, pp = b[i+1]&mapMask, b[i+2]&0x80 != 0, b[i+2]&3
			if c == 0x62 {
				// EVEX's fixed bits (P0[3:2] zero, P1[2] one, SDM vol. 2
				// 2.7.1): most bytes after a 62 in data break them.
				if b[i+1]&0x0c != 0 || b[i+2]&0x04 == 0 {
					return in, false
				}
				in.evex, in.vexL = true, b[i+3]&0x60 != 0
			} else {
				in.vexL = b[i+2]&4 != 0
			}
			i += n
		}
		in.p66, in.pF3, in.pF2 = pp == 1, pp == 2, pp == 3
		if in.opmap < 1 || in.opmap > 3 && !(in.evex && (in.opmap == 5 || in.opmap == 6)) {
			return in, false
		}
		in.op = b[i]
		i++
		if !vexOpcode(in.opmap, in.op, in.evex) || !in.evex && !vexForm(&in) {
			return in, false
		}
		flags = x86ModRM
		if in.opmap == 3 || in.opmap == 1 && twoByte[in.op]&0x0f == immB {
			flags |= immB
		}
		if in.opmap == 1 && in.op == 0x77 { // vzeroupper, vzeroall
			flags = immNone
		}
	case c == 0x0f:
		if i+1 >= len(b) {
			return in, false
		}
		i++
		switch b[i] {
		case 0x38:
			in.opmap, flags = 2, x86ModRM
			i++
		case 0x3a:
			in.opmap, flags = 3, x86ModRM|immB
			i++
		default:
			in.opmap, flags = 1, twoByte[b[i]]
		}
		if i >= len(b) {
			return in, false
		}
		in.op = b[i]
		i++
		if in.opmap >= 2 && !legacyOpcode(&in) {
			return in, false
		}
	default:
		in.op, flags = c, oneByte[c]
		i++
	}
	if flags&x86Bad != 0 {
		return in, false
	}
	if flags&x86ModRM != 0 {
		if i >= len(b) {
			return in, false
		}
		m := b[i]
		i++
		in.modrm, in.modrmB = true, m
		in.mod, in.reg = m>>6, m>>3&7|rexR<<3
		rm := m & 7
		in.rm = rm | rexB<<3
		if in.mod != 3 {
			in.hasMem = true
			dispLen := [3]int{0, 1, 4}[in.mod]
			if rm == 4 {
				if i >= len(b) {
					return in, false
				}
				sib := b[i]
				i++
				base, idx := sib&7, sib>>3&7|rexX<<3
				if idx != 4 {
					in.index, in.scale = int8(idx), 1<<(sib>>6)
				}
				if base == 5 && in.mod == 0 {
					dispLen = 4
				} else {
					in.base = int8(base | rexB<<3)
				}
			} else if rm == 5 && in.mod == 0 {
				dispLen, in.rip = 4, true // RIP-relative
			} else {
				in.base = int8(rm | rexB<<3)
			}
			if i+dispLen > len(b) {
				return in, false
			}
			in.disp = leInt(b[i:i+dispLen], true)
			i += dispLen
		}
	}
	if !in.vex && !groupValid(&in) {
		return in, false
	}
	imm := 0
	switch flags & 0x0f {
	case immB:
		imm = 1
	case immW:
		imm = 2
	case immZ:
		// REX.W overrides the operand-size prefix; branches (call, jmp,
		// jcc rel32) ignore it in 64-bit mode.
		imm = 4
		branch := in.opmap == 0 && (in.op == 0xe8 || in.op == 0xe9) || in.opmap == 1
		if in.p66 && !in.rexW && !in.vex && !branch {
			imm = 2
		}
	case immV:
		imm = 4
		if in.rexW {
			imm = 8
		} else if in.p66 {
			imm = 2
		}
	case immMoffs:
		imm = 8
		if addr32 {
			imm = 4
		}
	case immEnter:
		imm = 3
	case immGrp3:
		if in.reg&7 < 2 {
			imm = 1
			if in.op == 0xf7 {
				imm = 4
				if in.p66 {
					imm = 2
				}
			}
		}
	}
	if i+imm > len(b) {
		return in, false
	}
	if imm > 0 {
		in.immByte = b[i]
	}
	in.len = i + imm
	return in, true
}

const (
	x86RSP = 4
	x86RBP = 5
)

// frame reports a memory operand addressed off rbp or rsp (not lea or a
// nop/prefetch hint, which touch no memory).
func (in *x86Inst) frame() bool {
	if !in.hasMem || in.index >= 0 || (in.base != x86RSP && in.base != x86RBP) {
		return false
	}
	switch {
	case in.opmap == 0 && in.op == 0x8d: // lea
		return false
	case in.opmap == 1 && (in.op == 0x1f || in.op == 0x18 || in.op == 0x0d): // nop, prefetch
		return false
	}
	return true
}

// moveStore reports a plain move from a register to memory, and whether
// the register is an argument register (rdi, rsi, rdx, rcx, r8, r9 at any
// width; xmm0-7).
func (in *x86Inst) moveStore() (store, argReg bool) {
	switch {
	case in.opmap == 0 && (in.op == 0x89 || in.op == 0x88):
		r := in.reg
		arg := r == 1 || r == 2 || r == 8 || r == 9 || (r == 6 || r == 7) && (in.op == 0x89 || in.rex)
		return true, arg
	case in.opmap == 1 && (in.op == 0x11 || in.op == 0x29 || in.op == 0x7f || in.op == 0xd6 && in.p66 || in.op == 0x7e && in.p66):
		return true, in.reg < 8
	}
	return false, false
}

// moveLoad reports a plain move from memory to a register.
func (in *x86Inst) moveLoad() bool {
	switch {
	case in.opmap == 0:
		return in.op == 0x8b || in.op == 0x8a || in.op == 0x63
	case in.opmap == 1:
		switch in.op {
		case 0x10, 0x28, 0x6f, 0xb6, 0xb7, 0xbe, 0xbf:
			return true
		case 0x7e:
			return in.pF3
		case 0x6e:
			return in.p66
		}
	}
	return false
}

// prologue reports the instructions that set a frame up: push, mov rbp,
// rsp, sub rsp, imm, endbr64.
func (in *x86Inst) prologue() bool {
	if in.opmap == 1 {
		return in.op == 0x1e && in.pF3 // endbr64
	}
	return in.opmap == 0 && (in.op >= 0x50 && in.op <= 0x57 || // push
		in.op == 0x89 && in.mod == 3 && in.reg == x86RSP && in.rm == x86RBP || // mov rbp, rsp
		in.op == 0x8b && in.mod == 3 && in.reg == x86RBP && in.rm == x86RSP ||
		(in.op == 0x83 || in.op == 0x81) && in.mod == 3 && in.reg == 5 && in.rm == x86RSP) // sub rsp, imm
}

// scanX86 measures one x86-64 function's code (at most maxInsns instructions).
func scanX86(code []byte, maxInsns int, st *funcStats) {
	scanFunc(code, maxInsns, st, func(b []byte) frameInsn {
		in, ok := decodeX86(b)
		if !ok { // data, or an encoding the decoder does not know
			return frameInsn{}
		}
		store, arg := in.moveStore()
		return frameInsn{size: in.len, frame: in.frame(), slot: slotKey(uint32(in.base), in.disp),
			store: store, argSpill: arg, put: store, load: in.moveLoad(), prologue: in.prologue(),
			jumpNext: in.opmap == 0 && in.op == 0xeb && in.immByte == 0, // jmp .+2
			call:     in.opmap == 0 && in.op == 0xe8 || in.opmap == 0 && in.op == 0xff && in.reg&7 == 2}
	})
}

// The decoder refuses what no CPU runs, as llvm-objdump does: data read
// as instructions (a jump table's 0xffffff.. entries, an ASCII string)
// mostly breaks these rules within a few bytes, and the instruction-set
// pass takes an unreached stretch of bytes for code only when every
// instruction in it is valid (isa_flow.go).

// opSet is a set of opcodes of one map.
type opSet [4]uint64

func (s *opSet) has(op uint8) bool { return s[op>>6]>>(op&63)&1 != 0 }

// ops is the set of the ranges given as pairs, each range's first and
// last opcode.
func ops(ranges ...uint8) (s opSet) {
	for k := 0; k+1 < len(ranges); k += 2 {
		for op := int(ranges[k]); op <= int(ranges[k+1]); op++ {
			s[op>>6] |= 1 << (op & 63)
		}
	}
	return s
}

// The VEX (vexMaps[0]) and EVEX (vexMaps[1]) opcodes Intel's SDM (vol.
// 2, appendix A) and AMD's manuals define, per map; EVEX maps 5 and 6
// (AVX512-FP16) are taken whole.
var vexMaps = [2][4]opSet{{
	1: ops(0x10, 0x17, 0x28, 0x2f, 0x41, 0x4b, 0x50, 0x77, 0x7c, 0x7f, 0x90, 0x93, 0x98, 0x99, 0xae, 0xae, 0xc2, 0xc2,
		0xc4, 0xc6, 0xd0, 0xfe),
	2: ops(0x00, 0x0f, 0x13, 0x13, 0x16, 0x1a, 0x1c, 0x1e, 0x20, 0x25, 0x28, 0x40, 0x45, 0x47, 0x49, 0x49, 0x4b, 0x4b,
		0x50, 0x53, 0x58, 0x5a, 0x5c, 0x5c, 0x5e, 0x5e, 0x78, 0x79, 0x8c, 0x8c, 0x8e, 0x8e, 0x90, 0x93, 0x96, 0x9f,
		0xa6, 0xaf, 0xb0, 0xb1, 0xb4, 0xbf, 0xcf, 0xcf, 0xdb, 0xdf, 0xf2, 0xf3, 0xf5, 0xf7),
	3: ops(0x00, 0x02, 0x04, 0x06, 0x08, 0x0f, 0x14, 0x19, 0x1d, 0x1d, 0x20, 0x22, 0x30, 0x33, 0x38, 0x39, 0x40, 0x42,
		0x44, 0x44, 0x46, 0x46, 0x48, 0x4c, 0x5c, 0x7f, 0xce, 0xcf, 0xdf, 0xdf, 0xf0, 0xf0),
}, {
	1: ops(0x10, 0x17, 0x28, 0x2f, 0x51, 0x7f, 0xc2, 0xc2, 0xc4, 0xc6, 0xd1, 0xfe),
	2: ops(0x00, 0x6f, 0x70, 0x7f, 0x83, 0x83, 0x88, 0x8f, 0x90, 0xbf, 0xc4, 0xcf, 0xdc, 0xdf),
	3: ops(0x00, 0x0b, 0x0f, 0x0f, 0x14, 0x27, 0x38, 0x3f, 0x42, 0x44, 0x50, 0x57, 0x66, 0x67, 0x70, 0x73, 0xc2, 0xc2,
		0xce, 0xcf),
}}

// Legacy 0F38 and 0F3A: SSSE3 to SHA, with or without 66 (the
// prefix rules are checked in legacyOpcode).
var (
	legacyMap2 = ops(0x00, 0x0b, 0x10, 0x10, 0x14, 0x15, 0x17, 0x17, 0x1c, 0x1e, 0x20, 0x25, 0x28, 0x2b, 0x30, 0x35,
		0x37, 0x41, 0x80, 0x82, 0xc8, 0xcd, 0xcf, 0xcf, 0xdb, 0xdf, 0xf0, 0xf1, 0xf5, 0xf6, 0xf8, 0xf9)
	legacyMap3 = ops(0x08, 0x0f, 0x14, 0x17, 0x20, 0x22, 0x40, 0x42, 0x44, 0x44, 0x60, 0x63, 0xcc, 0xcc, 0xce, 0xcf,
		0xdf, 0xdf)
)

// vexOpcode says whether a VEX or EVEX opcode exists in its map (1 to 3,
// or EVEX's 5 and 6).
func vexOpcode(m, op uint8, evex bool) bool {
	if m == 5 || m == 6 {
		return evex
	}
	return vexMaps[b2i(evex)][m].has(op)
}

// vexForm applies the VEX map 1 rules that depend on L and the implied
// prefix, for the opcodes data most often passes for: the opmask
// instructions (kmov, kortest ... with L 0; kand ... with L 1) and the
// SSE3 forms.
func vexForm(in *x86Inst) bool {
	if in.opmap != 1 {
		return true
	}
	switch in.op {
	case 0x90, 0x91, 0x92, 0x93, 0x98, 0x99, 0x44:
		return !in.vexL
	case 0x41, 0x42, 0x45, 0x46, 0x47, 0x4a, 0x4b:
		return in.vexL
	case 0xf0: // vlddqu
		return in.pF2
	case 0x7c, 0x7d, 0xd0: // vhaddp, vhsubp, vaddsubp
		return in.p66 || in.pF2
	}
	return true
}

// legacyOpcode says whether a 0F38 or 0F3A opcode exists with the
// prefixes given: the SSSE3 ones and SHA without 66 or with it, the rest
// (SSE4, AES-NI, PCLMULQDQ ...) with 66 alone, but MOVBE, CRC32, ADCX and
// ADOX, which take their own.
func legacyOpcode(in *x86Inst) bool {
	op := in.op
	if in.opmap == 3 {
		switch {
		case !legacyMap3.has(op):
			return false
		case op == 0x0f: // palignr
			return !in.pF2 && !in.pF3
		case op == 0xcc:
			return !in.p66 && !in.pF2 && !in.pF3
		}
		return in.p66 && !in.pF2 && !in.pF3
	}
	switch {
	case !legacyMap2.has(op):
		return false
	case op == 0xf0 || op == 0xf1: // movbe (none or 66), crc32 (f2)
		return !in.pF3
	case op == 0xf6: // adcx (66), adox (f3)
		return in.p66 || in.pF3
	case op == 0xf5 || op == 0xf8 || op == 0xf9: // wrussd, movdir64b, movdiri
		return true
	case op <= 0x0b || op >= 0x1c && op <= 0x1e: // SSSE3
		return !in.pF2 && !in.pF3
	case op >= 0xc8 && op <= 0xcd: // SHA
		return !in.p66 && !in.pF2 && !in.pF3
	}
	return in.p66 && !in.pF2 && !in.pF3
}

// groupValid applies the ModRM rules of the one-byte and 0F opcode
// groups (SDM vol. 2, table A-6) and of the x87 escapes: the reg field
// selects the operation, and some have none, or none with a register
// operand.
func groupValid(in *x86Inst) bool {
	if !in.modrm {
		return true
	}
	reg, reg3 := in.reg&7, in.mod == 3
	m := in.modrmB
	if in.opmap == 1 {
		switch in.op {
		case 0x00:
			return reg < 6
		case 0x71, 0x72:
			return reg3 && (reg == 2 || reg == 4 || reg == 6)
		case 0x73:
			return reg3 && (reg == 2 || reg == 6 || (reg == 3 || reg == 7) && in.p66)
		case 0xba:
			return reg >= 4
		case 0xc7:
			if reg3 {
				return reg >= 6
			}
			return reg != 0 && reg != 2
		}
		return true
	}
	if in.opmap != 0 {
		return true
	}
	switch in.op {
	case 0x8d, 0xc4, 0xc5: // lea takes memory only
		return !reg3
	case 0x8f:
		return reg == 0
	case 0x8c, 0x8e: // six segment registers
		return reg < 6
	case 0xc0, 0xc1, 0xd0, 0xd1, 0xd2, 0xd3:
		return reg != 6
	case 0xc6, 0xc7: // mov /0; xabort, xbegin
		return reg == 0 || m == 0xf8
	case 0xfe:
		return reg < 2
	case 0xff:
		return reg != 7 && !(reg3 && (reg == 3 || reg == 5))
	case 0xd9:
		return !reg3 || m < 0xd0 || m == 0xd0 || m >= 0xe0 && m != 0xe2 && m != 0xe3 && m != 0xe6 && m != 0xe7 && m != 0xef
	case 0xda:
		return !reg3 || m < 0xe0 || m == 0xe9
	case 0xdb:
		return !reg3 || m < 0xe0 || m == 0xe2 || m == 0xe3 || m >= 0xe8 && m < 0xf8
	case 0xdd:
		return !reg3 || m < 0xc8 || m >= 0xd0 && m < 0xf0
	case 0xde:
		return !reg3 || m < 0xd0 || m == 0xd9 || m >= 0xe0
	case 0xdf:
		return !reg3 || m < 0xc8 || m == 0xe0 || m >= 0xe8 && m < 0xf8
	}
	return true
}
