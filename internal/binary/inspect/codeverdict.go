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
	// ISA is the instruction-set evidence of an x86-64 slice (every
	// compiled function decoded whole), nil for other architectures.
	ISA *ISAEvidence
}

// ISAEvidence is which x86-64 extensions a slice's compiled code uses.
type ISAEvidence struct {
	// Level is the lowest level holding every extension used: "x86-64"
	// (the baseline, SSE2), "core2", "x86-64-v2", "x86-64-v3",
	// "x86-64-v4", or "beyond x86-64-v4" (AES-NI, SHA ..., in no level).
	Level      string
	Extensions []string // every extension used, lowest level first
	// Functions and Instructions are what was decoded; Undecoded counts
	// bytes the decoder could not read as an instruction (skipped).
	Functions, Instructions, Undecoded int
	// Attribution says how code was told from hand-written assembly:
	// "members" (a static library: assembly members left out) or
	// "linked" (a linked image: both together, functions by symbol).
	Attribution string
	AsmObjects  int
	// Uses are the functions using an extension above the baseline, each
	// with its highest-level instruction, at most a few hundred.
	Uses        []ISAUse
	UsesDropped int // uses beyond the list
}

// ISAUse is one function using an extension above the x86-64 baseline.
type ISAUse struct {
	Member      string // archive member, "" when none
	Function    string // symbol name ("encode_base64_avx2"), or "function at 0x..."
	Address     uint64 // the function's address in its object
	Offset      int64  // of the instruction, in its object
	Extension   string // "AVX2"
	Level       string // the lowest level holding it
	Instruction string // "vpshufb ymm0, ymm1, ymm2 (c4 e2 75 00 c2)"
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
		v.Arch, v.Class, v.Score, Plural(v.Functions, "function"), Plural(v.Instructions, "instruction"), Plural(v.Objects, "object"),
		Plural(v.AsmObjects, "assembly object"), v.Features.ArgSpill, v.Features.Reload, v.Features.BranchNext, v.Features.FrameShare)
}

// Plural is n and what, an "s" added unless n is 1: "1 function", "2
// objects".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
