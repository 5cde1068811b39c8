package codeclass

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestParallelWalkIsOneWalk: a linked image's functions are walked on
// every CPU in runs, and what the pass reports is what one walk in order
// reports: the counts, and the uses listed up to maxISAUses (5,000
// functions, each with an M2 or beyond instruction, some only past a
// call), in order, with the rest counted as dropped.
func TestParallelWalkIsOneWalk(t *testing.T) {
	var asm strings.Builder
	asm.WriteString("\t.text\n")
	for i := range 5000 {
		fmt.Fprintf(&asm, "\t.globl _f%d\n\t.p2align 2\n_f%d:\n", i, i)
		switch i % 3 {
		case 0:
			asm.WriteString("\tbfmmla v0.4s, v1.8h, v2.8h\n\tret\n")
		case 1:
			fmt.Fprintf(&asm, "\tstp x29, x30, [sp, #-16]!\n\tbl _f%d\n\tsmmla v0.4s, v1.16b, v2.16b\n\tldp x29, x30, [sp], #16\n\tret\n", (i+7)%5000)
		default:
			asm.WriteString("\tcbz x0, 1f\n\tadd x0, x0, #1\n1:\tsmstart\n\tsmstop\n\tret\n")
		}
	}
	_, dylib := arm64Dylib(t, "many", asm.String(), "armv9-a+sme+bf16+i8mm")
	b, err := os.ReadFile(dylib)
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // runs on several workers on any machine
	var one, many isaStats
	traceAll(&one, func(uint64, ext) {}) // a trace: one walk, in order
	isaObject(b, codeOf(t, dylib), &one)
	one.trace = nil
	isaObject(b, codeOf(t, dylib), &many)
	if one.funcs != 5000 || len(one.uses) != maxISAUses || one.dropped != 5000-maxISAUses {
		t.Fatalf("one walk: %d functions, %d uses listed, %d dropped; want 5000, %d, %d", one.funcs, len(one.uses), one.dropped, maxISAUses, 5000-maxISAUses)
	}
	if !reflect.DeepEqual(one, many) {
		t.Errorf("walked in runs: %d functions, %d instructions, %d uses listed (first %+v), %d dropped, counts %v; one walk: %d, %d, %d (first %+v), %d, %v",
			many.funcs, many.insns, len(many.uses), many.uses[0], many.dropped, many.used, one.funcs, one.insns, len(one.uses), one.uses[0], one.dropped, one.used)
	}
}
