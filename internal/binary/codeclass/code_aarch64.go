package codeclass

import "encoding/binary"

// arm64 instructions are 4 bytes wide, so the classifier matches the few
// encodings it needs directly instead of disassembling (Arm ARM, "Loads and
// Stores" and "Data Processing -- Immediate"); this reads a 3 MB slice of
// code in milliseconds.

// arm64Mem is a decoded load or store.
type arm64Mem struct {
	rn, rt, rt2 uint32 // base, transfer register(s); rt2 is 32 when not a pair
	store       bool
	writeback   bool  // pre- or post-index (prologue/epilogue pushes and pops)
	imm         int64 // byte offset from rn (0 for register offsets and post-index)
}

// decodeARM64Mem recognises the load/store classes that address memory off
// a base register with an immediate or register offset. Literal loads,
// exclusives and atomics are not matched (they never address the frame).
func decodeARM64Mem(ins uint32) (m arm64Mem, ok bool) {
	size := ins >> 30
	fp := ins>>26&1 == 1
	opc := ins >> 22 & 3
	m.rn, m.rt, m.rt2 = ins>>5&31, ins&31, 32
	// For single-register forms: a store is opc 00, and opc 10 with a
	// 128-bit SIMD&FP register; everything else loads (or prefetches).
	single := fp && opc&1 == 0 || !fp && opc == 0
	switch {
	case ins&0x3B000000 == 0x39000000: // unsigned immediate offset
		scale := size
		if fp && opc >= 2 {
			scale = 4
		}
		m.store, m.imm = single, int64(ins>>10&0xfff)<<scale
		return m, true
	case ins&0x3B200000 == 0x38000000: // unscaled, post-, pre-index, unprivileged
		m.store = single
		m.indexed(ins>>10&3, int64(int32(ins<<11)>>23)) // imm9, sign-extended
		return m, true
	case ins&0x3B200C00 == 0x38200800: // register offset
		m.store = single
		return m, true
	case ins&0x3A000000 == 0x28000000: // load/store pair
		opc2 := ins >> 30
		scale := uint32(2) // W registers, LDPSW
		if fp {
			scale = 2 + opc2 // S, D, Q
		} else if opc2 == 2 {
			scale = 3 // X registers
		}
		m.rt2 = ins >> 10 & 31
		m.store = ins>>22&1 == 0
		m.indexed(ins>>23&3, int64(int32(ins<<10)>>25)<<scale) // imm7, sign-extended, scaled
		return m, true
	}
	return m, false
}

// indexed sets the offset of an addressing mode (mode as the unscaled and
// the pair forms encode it): 0 and 2 an offset (unscaled, unprivileged;
// no-allocate, signed offset), 1 post-index (none: the base is the
// address), 3 pre-index, the two writing the base back.
func (m *arm64Mem) indexed(mode uint32, imm int64) {
	m.writeback = mode&1 == 1
	if mode != 1 {
		m.imm = imm
	}
}

const (
	arm64FP = 29
	arm64SP = 31 // as a load/store base register
)

// arm64Prologue reports instructions that set a frame up: sub sp, sp, #n;
// add x29, sp, #n (mov x29, sp); hints (pacibsp, bti). Stores to the frame
// are handled by the caller.
func arm64Prologue(ins uint32) bool {
	return ins&0xFF8003FF == 0xD10003FF || // sub sp, sp, #imm
		ins&0xFF8003FF == 0x910003FD || // add x29, sp, #imm
		ins&0xFFFFF01F == 0xD503201F // hint: pacibsp, paciasp, bti, nop
}

// scanARM64 measures one function's code (at most maxInsns instructions).
func scanARM64(code []byte, maxInsns int, st *funcStats) {
	scanFunc(code[:len(code)&^3], maxInsns, st, func(b []byte) frameInsn {
		ins := binary.LittleEndian.Uint32(b)
		m, ok := decodeARM64Mem(ins)
		return frameInsn{size: 4, frame: ok && (m.rn == arm64FP || m.rn == arm64SP), slot: slotKey(m.rn, m.imm),
			// An incoming argument register (x0-x7, or v0-v7) stored to
			// the frame: the -O0 "home every parameter" sequence.
			store: m.store, argSpill: !m.writeback && (m.rt < 8 || m.rt2 < 8),
			put: m.store && !m.writeback, load: !m.store, prologue: arm64Prologue(ins),
			jumpNext: ins == 0x14000001,                                            // b .+4
			call:     ins&0xFC000000 == 0x94000000 || ins&0xFFFFFC1F == 0xD63F0000} // bl, blr
	})
}
