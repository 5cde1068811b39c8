package inspect

import "fmt"

// The code classifier's verdict on a slice, as Slice.Code carries it. The
// classifier itself, with its threshold, is package codeclass: it reads
// what this package parses, so its result type lives here.

// CodeClass is the code classifier's verdict on one library slice.
type CodeClass string

const (
	CodeO0        CodeClass = "-O0-like"
	CodeOptimised CodeClass = "optimised"
	CodeTooLittle CodeClass = "too little evidence"
)

// CodeVerdict is what the machine code of one architecture slice says about
// how it was compiled.
type CodeVerdict struct {
	// Arch names the slice as Inspect does ("arm64", "x86_64", "aarch64"
	// for ELF); codeclass.Evidence returns the slices in Inspect's order.
	Arch  string
	Class CodeClass
	// Score is the share of measured functions showing an -O0 trait, from
	// 0 to 1; -O0-like from codeclass.O0Threshold up.
	Score float64
	// Functions and Instructions are what was measured: the sampled
	// functions of objects not taken for assembly.
	Functions    int
	Instructions int
	// Objects, AsmObjects and Skipped count the objects looked at: all of
	// them up to codeclass's limit per slice, every k-th member beyond.
	Objects int // objects (or linked images) measured
	// AsmObjects are relocatable objects without a compiler's mark, taken
	// for hand-written assembly and not measured.
	AsmObjects int
	// Skipped objects hold no machine code the classifier reads (LLVM
	// bitcode, a text file, an unsupported architecture, no code).
	Skipped int
	// Bounds says where the first measured object's function boundaries
	// came from: "symbols", "LC_FUNCTION_STARTS", ".eh_frame", "section".
	Bounds   string
	Features CodeFeatures
}

// CodeFeatures are the measurements behind the score.
type CodeFeatures struct {
	ArgSpill   float64 // share of functions storing an argument register to the frame in their prologue
	Reload     float64 // share of functions reloading a frame slot right after storing it
	BranchNext float64 // share of functions branching to the next instruction
	FrameShare float64 // loads and stores addressed off the frame or stack pointer, per instruction
}

func (v CodeVerdict) String() string {
	return fmt.Sprintf("%s: %s (score %.3f from %s, %s in %s; %s left out; argument spills %.3f, reloads %.3f, branches to next %.3f, frame loads/stores %.3f per instruction)",
		v.Arch, v.Class, v.Score, plural(v.Functions, "function"), plural(v.Instructions, "instruction"), plural(v.Objects, "object"),
		plural(v.AsmObjects, "assembly object"), v.Features.ArgSpill, v.Features.Reload, v.Features.BranchNext, v.Features.FrameShare)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
