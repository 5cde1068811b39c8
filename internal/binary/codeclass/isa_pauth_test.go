package codeclass

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// pauthAsm reaches an M2 instruction (bfmmla, BF16) in each function only
// through pointer authentication's instructions, which arm64asm does not
// decode: signing and authenticating registers, an authenticated load,
// and a return, call and tail call through authenticated branches.
const pauthAsm = `	.text
	.globl _signed
	.p2align 2
_signed:
	pacibsp
	pacia x16, x17
	autia x16, x17
	xpaci x16
	ldraa x0, [x1]
	bfmmla v0.4s, v1.8h, v2.8h
	retab
	.globl _calls
	.p2align 2
_calls:
	stp x29, x30, [sp, #-16]!
	blraaz x16
	bfmmla v0.4s, v1.8h, v2.8h
	ldp x29, x30, [sp], #16
	ret
	.globl _tail
	.p2align 2
_tail:
	pacga x0, x1, x2
	cbz x0, 1f
	braa x16, x17
1:	bfmmla v0.4s, v1.8h, v2.8h
	retaa
`

// TestPAuthPathsAreCode: in a dylib the walk follows paths through
// pointer authentication (arm64e code is full of it) and counts what
// they reach, at the address llvm-objdump-14 reads as bfmmla. Before
// #58 it read them as no instruction and counted none of the three.
func TestPAuthPathsAreCode(t *testing.T) {
	testfixture.Tools(t, "llvm-objdump-14")
	_, dylib := arm64Dylib(t, "pauth", pauthAsm, "armv8.6-a+bf16")
	top, _ := passExts(t, dylib)
	for _, fn := range []string{"signed", "calls", "tail"} {
		if got := fmt.Sprint(top[fn]); got != "[BF16]" {
			t.Errorf("%s: %s, want [BF16] (reached through pointer authentication)", fn, got)
		}
	}
	b, err := os.ReadFile(dylib)
	if err != nil {
		t.Fatal(err)
	}
	var st isaStats
	var hits []uint64
	traceAll(&st, func(addr uint64, e ext) { hits = append(hits, addr) })
	isaObject(b, codeOf(t, dylib), &st)
	if len(hits) != 3 {
		t.Fatalf("%d instructions counted above apple-m1 at %x, want the 3 bfmmla", len(hits), hits)
	}
	od := objdumpARM64(t, dylib, hits)
	for _, a := range hits {
		if g := od[a]; !strings.HasPrefix(g.mn, "bfmmla") {
			t.Errorf("0x%x: counted as BF16; llvm-objdump-14 reads %q", a, g.mn)
		}
	}
}
