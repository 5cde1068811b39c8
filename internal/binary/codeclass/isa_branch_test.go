package codeclass

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"
)

// TestARM64PlainDecodes holds arm64Plain to the decoder it stands in for:
// every word of its classes is taken, and arm64asm decodes it (a sample
// of 100,000 per class and each class's extremes; every one of the 600
// million was tried once); words beside its classes, which arm64asm does
// not decode or which are other instructions, are not taken.
func TestARM64PlainDecodes(t *testing.T) {
	decodes := func(w uint32) bool {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], w)
		_, err := arm64asm.Decode(b[:])
		return err == nil
	}
	classes := []struct {
		name        string
		mask, value uint32
	}{
		{"B, BL", 0x7c000000, 0x14000000},
		{"B.cond", 0xff000010, 0x54000000},
		{"CBZ, CBNZ, TBZ, TBNZ", 0x7c000000, 0x34000000},
		{"ADR, ADRP", 0x1f000000, 0x10000000},
		{"ADD, SUB (immediate)", 0x1f800000, 0x11000000},
		{"STRB, LDRB", 0xff800000, 0x39000000},
		{"STR, LDR W", 0xff800000, 0xb9000000},
		{"STR, LDR X", 0xff800000, 0xf9000000},
		{"LDP, STP", 0x7e000000, 0x28000000},
		{"MOVN X", 0xff800000, 0x92800000},
		{"MOVZ X", 0xff800000, 0xd2800000},
		{"MOVK X", 0xff800000, 0xf2800000},
		{"MOVZ W", 0xffc00000, 0x52800000},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range classes {
		for i := range 100_000 {
			w := c.value | r.Uint32()&^c.mask
			switch i {
			case 0:
				w = c.value
			case 1:
				w = c.value | ^c.mask
			}
			if !arm64Plain(w) {
				t.Fatalf("%s: %08x not taken", c.name, w)
			}
			if !decodes(w) {
				t.Fatalf("%s: %08x taken, but arm64asm does not decode it", c.name, w)
			}
		}
	}
	for _, w := range []uint32{
		0x00000000, // UDF #0
		0x54000010, // BC.cond (FEAT_HBC), not B.cond
		0xd65f03c0, // RET: decoded, but not of these classes
		0xf9c00000, // LDR X's unallocated opc=11
		0xb2800000, // MOV wide's unallocated opc=01
		0x68000000, // STGP/LDPSW, beside LDP/STP
		0x52c00000, // MOVZ W with hw=2, unallocated
	} {
		if arm64Plain(w) {
			t.Errorf("%08x taken", w)
		}
	}
}
