package codeclass

import (
	"encoding/binary"
	"slices"

	"golang.org/x/arch/x86/x86asm"
)

// Where the instruction-set pass may decode: code, not data.
//
// The bytes of a code section are not all instructions. Measured on
// clang-14's and GCC 12's output (isa_truth_test.go compiles C with
// switch tables and assembly with constant pools, for x86_64 and arm64,
// Mach-O and ELF, -O0 and -O3, and reads which bytes are code from the
// assembler's own marks):
//
//   - clang puts x86_64 Mach-O jump tables inside __text, right after the
//     function (after .cfi_endproc), and marks them with .data_region:
//     LC_DATA_IN_CODE in the object, and in a linked image as long as the
//     linker keeps it (ld64.lld-14 does; an -O0 libssl.3.dylib on npm
//     has an empty one). Everywhere else (ELF, arm64) compilers put jump
//     tables in a data section.
//   - Hand-written assembly (OpenSSL's perlasm) puts constant tables,
//     literal pools and its "CRYPTOGAMS by <appro@openssl.org>" strings in
//     the text section between functions, marked by nothing. ELF symbol
//     sizes (.size) leave them out; Mach-O has no sizes, so they fall in
//     the preceding function's range.
//
// So a compiled relocatable object is decoded whole, instruction after
// instruction, with LC_DATA_IN_CODE skipped: that is exact for what
// compilers emit, and assembly members are left out by the container's
// mark already. A linked image mixes both, and its data-in-code table
// may be empty; there the pass decodes by recursive descent from each
// function start (symbols, LC_FUNCTION_STARTS, .eh_frame), following
// every direct branch, and through jump tables it resolves from the code
// that indexes them (x86_64: lea of the table, movsxd of an entry, add,
// jmp; or jmp [table + i*8]; arm64: adrp/add of the table, ldrb/ldrh/ldrsw
// of an entry, adr of the anchor, add, br), in whatever section the table
// is. The bytes descent does not reach are gaps: a gap is decoded only
// when no instruction reached refers to an address in it as data (a
// RIP-relative operand, an adr/adrp/ldr literal) and every instruction in
// it is valid (x86_64: the length decoder's rules and, for every
// instruction above the baseline, x86asm's full decoder agreeing; arm64:
// every word a defined encoding) and ends exactly at the gap's end;
// otherwise it is taken for data. A path that meets an invalid
// instruction is taken for data too and counts nothing (arm64: its run
// since its last branch; see arm64Flow). What this can
// miss is code reached only through a table it cannot resolve, together
// with data in the same gap: reported uses of linked images are not
// failed (validate), and the build's rule reads the objects.

// Marks of bytes within one function.
const (
	markNone uint8 = iota
	markInsn       // the first byte of an instruction reached
	markBody       // a later byte of one
	markData       // a jump table resolved
)

// maxJumpEntries bounds a resolved jump table.
const maxJumpEntries = 1 << 12

// mappedRange is a section of a linked image that the file holds.
type mappedRange struct {
	addr, size uint64
	offset     int64
}

// read returns n bytes at address addr of the image, nil when no section
// holds them.
func (o *codeObject) read(whole []byte, addr uint64, n int) []byte {
	for _, r := range o.mapped {
		if addr >= r.addr && addr-r.addr+uint64(n) <= r.size {
			b, _ := span(whole, uint64(r.offset)+addr-r.addr, uint64(n))
			return b
		}
	}
	return nil
}

// isaHit is one instruction above the baseline, found in a function.
type isaHit struct {
	pos int
	e   ext
}

// flow is the state of recursive descent through one function, reused
// from function to function.
type flow struct {
	mark []uint8
	work []int
	// tables are jump-table targets: walked once the direct flow is, so
	// that a table read wrong cannot take bytes from real code first.
	tables     []int
	tablesNext int // the next of tables to walk
	// known are function-relative data ranges: LC_DATA_IN_CODE's, and
	// tables found after a walk had taken their bytes for code; redo
	// asks for another walk.
	known     [][2]int
	redo      bool
	undecoded int
	hits      []isaHit // of the path being walked
	committed []isaHit // of the function
	// leas are the RIP-relative addresses (x86) lea puts in each
	// register, over the whole function: a jump table's base is often
	// loaded outside the block that indexes it.
	leas   [16][]uint64
	refs   []uint64 // addresses inside the function that code reads as data
	last   [6]x86Inst
	lastAt [6]uint64 // their addresses
	nLast  int
}

func (f *flow) reset(n int) {
	f.mark = append(f.mark[:0], make([]uint8, n)...) // n cleared marks, in the array kept
	f.work, f.tables, f.refs, f.hits, f.committed = f.work[:0], f.tables[:0], f.refs[:0], f.hits[:0], f.committed[:0]
	f.tablesNext = 0
	for i := range f.leas {
		f.leas[i] = f.leas[i][:0]
	}
}

// fill sets every mark of m to v.
func fill(m []uint8, v uint8) {
	for i := range m {
		m[i] = v
	}
}

// The work-list, shared by the x86-64 and arm64 walks: each item starts
// a path; the hits a path sees wait in f.hits until the walk commits
// them to the function (f.committed) or drops them.

// pending says whether a path is left to walk.
func (f *flow) pending() bool { return len(f.work) > 0 || f.tablesNext < len(f.tables) }

// pop takes the next path's start (one is pending): the direct flow
// first, then the jump tables' targets.
func (f *flow) pop() int {
	if k := len(f.work); k > 0 {
		pos := f.work[k-1]
		f.work = f.work[:k-1]
		return pos
	}
	pos := f.tables[f.tablesNext]
	f.tablesNext++ // not f.tables[1:], which lost the array's start to every function after
	return pos
}

// commit counts the hits waiting; drop forgets them.
func (f *flow) commit() {
	f.committed = append(f.committed, f.hits...)
	f.hits = f.hits[:0]
}

func (f *flow) drop() { f.hits = f.hits[:0] }

// tally counts a function's hits and its n instructions into st (and
// its trace, start being the function's address) and returns the
// highest-level hit (its function-relative offset, -1 for none, and
// extension) and n.
func tally(hits []isaHit, start uint64, n int, st *isaStats) (at int, top ext, _ int) {
	at, rank := -1, 0
	for _, h := range hits {
		st.used[h.e]++
		if st.trace != nil {
			st.trace(start+uint64(h.pos), h.e)
		}
		if r := extLevel[h.e]; at < 0 || r > rank || r == rank && h.e > top {
			at, top, rank = h.pos, h.e, r
		}
	}
	st.insns += n
	return at, top, n
}

// x86Flow decodes the x86-64 function fn, at address start of the image
// o (whole), by recursive descent; data are the function-relative ranges
// LC_DATA_IN_CODE gives. It returns the highest-level instruction above
// the baseline (function-relative offset, extension) and the count.
func x86Flow(f *flow, o *codeObject, whole, fn []byte, start uint64, data [][2]uint64, repBSF bool, st *isaStats) (at int, top ext, n int) {
	f.known = f.known[:0]
	for _, d := range data {
		f.known = append(f.known, [2]int{int(d[0]), int(min(d[1], uint64(len(fn))))})
	}
	// A table found where a path walked already (the bytes after a call
	// that does not return, read as code): again, with the table known.
	for try := 0; try < 3 && (try == 0 || f.redo); try++ {
		f.reset(len(fn))
		for _, d := range f.known {
			fill(f.mark[d[0]:d[1]], markData)
		}
		f.redo = false
		n = f.walkX86(o, whole, fn, start, repBSF)
	}
	st.undecoded += f.undecoded
	return tally(f.committed, start, n, st)
}

func (f *flow) walkX86(o *codeObject, whole, fn []byte, start uint64, repBSF bool) (n int) {
	f.undecoded = 0
	count := func(pos int, in *x86Inst) {
		n++
		e := x86Ext(in)
		if repBSF && e == extBMI1 && in.opmap == 1 && in.op == 0xbc {
			e = extNone
		}
		if e != extNone {
			f.hits = append(f.hits, isaHit{pos, e})
		}
	}
	f.work = append(f.work, 0)
	for f.pending() {
		// Each item starts a segment: its hits count only if the
		// segment runs into nothing invalid.
		pos := f.pop()
		f.nLast = 0
		bad := false
	path:
		for pos >= 0 && pos < len(fn) {
			switch f.mark[pos] {
			case markInsn:
				break path // joined a path walked already
			case markBody, markData:
				bad = true // into the middle of an instruction, or a table
				break path
			}
			in, ok := decodeX86(fn[pos:])
			if !ok {
				if len(fn)-pos < 15 {
					if _, whole := decodeX86(o.read(whole, start+uint64(pos), 15)); whole {
						break // runs past the function's end
					}
				}
				f.undecoded++
				bad = true
				break
			}
			if slices.ContainsFunc(f.mark[pos+1:pos+in.len], func(m uint8) bool { return m != markNone }) {
				bad = true
				break path
			}
			f.mark[pos] = markInsn
			fill(f.mark[pos+1:pos+in.len], markBody)
			count(pos, &in)
			next := pos + in.len
			if in.rip {
				ref := uint64(int64(start) + int64(next) + in.disp)
				if in.opmap == 0 && in.op == 0x8d {
					f.leas[in.reg&15] = append(f.leas[in.reg&15], ref)
				}
				if ref >= start && ref-start < uint64(len(fn)) {
					f.refs = append(f.refs, ref-start)
				}
			}
			f.last[f.nLast%len(f.last)], f.lastAt[f.nLast%len(f.last)] = in, start+uint64(next)
			f.nLast++
			target, kind := x86Branch(&in, fn[pos:next], next)
			switch kind {
			case flowCond:
				f.work = append(f.work, target)
			case flowCall:
				// What follows a call is a segment of its own: a call
				// that does not return may be followed by data.
				f.work = append(f.work, next, target)
				break path
			case flowJump:
				pos = target
				f.nLast = 0
				continue
			case flowStop:
				break path
			case flowIndirect:
				f.jumpTable(o, whole, fn, start)
				break path
			}
			pos = next
		}
		if bad {
			f.drop()
		} else {
			f.commit()
		}
	}
	// The gaps: decoded only when nothing marks them as data and every
	// instruction in them is valid.
	f.gaps(len(fn), 1, func(g0, g1 int) { f.sweepGap(fn, g0, g1, count) })
	return n
}

// gaps calls sweep on each run [g0, g1) of the n bytes that no path
// reached (in steps of step bytes) and no code reads as data, and commits
// the hits it leaves.
func (f *flow) gaps(n, step int, sweep func(g0, g1 int)) {
	slices.Sort(f.refs)
	for g0 := 0; g0+step <= n; g0 += step {
		if f.mark[g0] != markNone {
			continue
		}
		g1 := g0
		for g1+step <= n && f.mark[g1] == markNone {
			g1 += step
		}
		// Unless code reads an address in [g0, g1) as data.
		if i, _ := slices.BinarySearch(f.refs, uint64(g0)); i == len(f.refs) || f.refs[i] >= uint64(g1) {
			sweep(g0, g1)
			f.commit()
		}
		g0 = g1 - step
	}
}

// sweepGap decodes fn[g0:g1] linearly, counting its instructions (and
// their hits) only once every one is valid and the last ends at g1.
func (f *flow) sweepGap(fn []byte, g0, g1 int, count func(int, *x86Inst)) {
	var ins [][2]int
	for pos := g0; pos < g1; {
		in, ok := decodeX86(fn[pos:g1])
		if !ok {
			return
		}
		if x86Ext(&in) != extNone {
			// The full decoder must read the same instruction: data
			// that passes the length decoder rarely passes both.
			d, err := x86asm.Decode(fn[pos:pos+in.len], 64)
			if err != nil || d.Op == 0 || d.Len != in.len {
				return
			}
		}
		ins = append(ins, [2]int{pos, in.len})
		pos += in.len
	}
	for _, p := range ins {
		in, _ := decodeX86(fn[p[0]:g1])
		count(p[0], &in)
	}
}

// Control flow of one instruction.
const (
	flowNext     = iota // falls through
	flowCond            // falls through, and may branch to target
	flowJump            // goes to target only
	flowStop            // ends the path (return, trap)
	flowIndirect        // an indirect jump: a jump table, or a tail call
	flowCall            // a call: target, and what follows if it returns
)

// x86Branch classifies in (raw its bytes, next the offset after it):
// target is function-relative, -1 when outside.
func x86Branch(in *x86Inst, raw []byte, next int) (target, kind int) {
	rel := func() int {
		n := len(raw)
		if op := in.op; in.opmap == 0 && (op == 0xeb || op >= 0xe0 && op <= 0xe3 || op >= 0x70 && op <= 0x7f) {
			return next + int(int8(raw[n-1]))
		}
		return next + int(int32(binary.LittleEndian.Uint32(raw[n-4:])))
	}
	switch in.opmap {
	case 0:
		switch op := in.op; {
		case op >= 0x70 && op <= 0x7f, op >= 0xe0 && op <= 0xe3:
			return rel(), flowCond
		case op == 0xe8: // call: a local subroutine, or another function
			return rel(), flowCall
		case op == 0xff && (in.reg&7 == 2 || in.reg&7 == 3):
			return -1, flowCall
		case op == 0xe9 || op == 0xeb:
			return rel(), flowJump
		case op == 0xc3 || op == 0xc2 || op == 0xca || op == 0xcb || op == 0xcf || op == 0xf4 || op == 0xcc,
			op == 0xff && in.reg&7 == 5:
			return -1, flowStop
		case op == 0xff && in.reg&7 == 4:
			return -1, flowIndirect
		}
	case 1:
		switch op := in.op; {
		case op >= 0x80 && op <= 0x8f:
			return rel(), flowCond
		case op == 0x0b || op == 0xb9: // ud2, ud1
			return -1, flowStop
		}
	}
	return -1, flowNext
}

// jumpTable resolves the indirect jump just decoded (f.last) and queues
// the table's targets: a PIC table of 32-bit offsets from its base
// (lea base; movsxd r, [base + i*4]; add r, base; jmp r) or one of
// absolute addresses (jmp [table + i*8], or mov r, [table + i*8]; jmp r).
func (f *flow) jumpTable(o *codeObject, whole, fn []byte, start uint64) {
	jmp := f.last[(f.nLast-1)%len(f.last)]
	end := start + uint64(len(fn))
	queue := func(base uint64, size int, relative, precise bool) {
		inside := base >= start && base < end
		for k := 0; k < maxJumpEntries; k++ {
			loc := base + uint64(k*size)
			inFn := loc >= start && loc+uint64(size) <= end
			if inside && !inFn {
				return // a table in the function ends with it
			}
			taken := inFn && slices.ContainsFunc(f.mark[loc-start:loc-start+uint64(size)], func(m uint8) bool {
				return m == markInsn || m == markBody
			})
			if taken && !precise {
				return
			}
			b := o.read(whole, loc, size)
			if b == nil {
				return
			}
			t := uint64(leInt(b, true)) // an offset from base, or an address
			if relative {
				t += base
			}
			if t < start || t >= end || t >= base && t < loc+uint64(size) {
				return
			}
			if m := f.mark[t-start]; m == markData || m == markBody && !taken {
				return // into a table, or an instruction: past the table's end
			}
			if taken {
				// A path took the table for code: the bytes after a
				// call that does not return. Known now, for the next walk.
				f.known = append(f.known, [2]int{int(loc - start), int(loc-start) + size})
				f.redo = true
				continue
			}
			if inFn {
				fill(f.mark[loc-start:loc-start+uint64(size)], markData)
			}
			f.tables = append(f.tables, int(t-start))
		}
	}
	absolute := func(in *x86Inst) bool {
		return in.hasMem && !in.rip && in.base < 0 && in.index >= 0 && in.scale == 8
	}
	if jmp.hasMem {
		if absolute(&jmp) {
			queue(uint64(jmp.disp), 8, false, true)
		}
		return
	}
	for k := 2; k <= min(f.nLast, len(f.last)); k++ {
		in := f.last[(f.nLast-k)%len(f.last)]
		switch {
		case in.opmap == 0 && in.op == 0x63 && in.hasMem && in.base >= 0 && in.index >= 0 && in.scale == 4:
			// The table's base: the lea into that register on this
			// path, else (hoisted out of a loop) any in the function.
			for j := k + 1; j <= min(f.nLast, len(f.last)); j++ {
				if l := f.last[(f.nLast-j)%len(f.last)]; l.opmap == 0 && l.op == 0x8d && l.rip && l.reg&15 == uint8(in.base) {
					queue(uint64(int64(f.lastAt[(f.nLast-j)%len(f.last)])+l.disp), 4, true, true)
					return
				}
			}
			for _, base := range f.leas[in.base] {
				queue(base, 4, true, false)
			}
			return
		case in.opmap == 0 && in.op == 0x8b && in.rexW && absolute(&in) && in.reg == jmp.rm:
			queue(uint64(in.disp), 8, false, true)
			return
		}
	}
}
