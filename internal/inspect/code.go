package inspect

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

// The code classifier: does a library's machine code look compiled at -O0?
//
// Unoptimised code keeps every variable in the stack frame. A function
// compiled at -O0 (by clang or gcc, for arm64 or x86-64) stores each
// incoming argument register to its frame right after the prologue, loads
// every variable back from its slot for each use (often the very next
// instruction after storing it), and, with clang on arm64, ends blocks
// with branches to the next instruction that no optimiser keeps. Each of
// these traits is rare in optimised code, each is near universal at -O0.
// The classifier measures, per function, whether any of the three traits
// shows, and scores a slice by the share of its measured functions that
// show one:
//
//   - argument spill: in the prologue (stack and frame set-up, pushes,
//     hints), a store of an argument register (x0-x7/v0-v7; rdi, rsi,
//     rdx, rcx, r8, r9, xmm0-7) to a slot off the frame or stack pointer;
//   - reload: a load from a frame slot stored to at most reloadWindow
//     instructions before, with no call in between (values kept in memory
//     across a call are ordinary in optimised code);
//   - branch to the next instruction (arm64 "b .+4", x86 "jmp .+2").
//
// Measured on the labelled corpus (code_corpus_test.go: 39 OpenSSL 4.0.2
// C files plus perlasm objects, clang-14 for macOS arm64 and x86_64, gcc 12
// for linux-x86_64, at -O0, -O1, -O2, -O3, -Os), -O0 libraries score 0.98
// and above and optimised ones 0.08 and below; Debian's gcc -O2 libcrypto
// scores 0.03. CodeO0Threshold sits in the middle of that gap, so that
// neither side is near it: a slice is -O0-like when most of its functions
// are. The share of frame-addressed loads and stores per instruction (the
// measurement that motivated this, 0.35-0.43 at -O0 against 0.04-0.12
// optimised) is reported too, but does not decide: its gap is 3x where the
// function share's is more than 10x, and hand-written assembly, which
// keeps state on the stack, moves it more.
//
// Hand-written assembly (OpenSSL's perlasm) is left out where it can be
// told apart: a Mach-O relocatable object from clang carries
// MH_SUBSECTIONS_VIA_SYMBOLS, which the assembler sets only on request and
// perlasm never requests. ELF gives no such mark that survives Debian's
// strip (.comment goes), and linked images mix both; there assembly is
// measured with the rest and, since perlasm functions hardly ever show the
// traits, only dilutes an -O0 score by its share of functions (a few per
// cent in libcrypto).
//
// Function boundaries come from the symbol table; in a linked Mach-O from
// LC_FUNCTION_STARTS (present even when stripped); in a linked ELF without
// .symtab, from .eh_frame.

// CodeClass is the code classifier's verdict on one library slice.
type CodeClass string

const (
	CodeO0        CodeClass = "-O0-like"
	CodeOptimised CodeClass = "optimised"
	CodeTooLittle CodeClass = "too little evidence"
)

const (
	// CodeO0Threshold: a slice whose Score is at least this is -O0-like.
	CodeO0Threshold = 0.5
	// CodeMinFunctions: with fewer functions measured, a slice has too
	// little evidence. Thirty keeps the binomial noise of a share near
	// 0.05 or 0.95 far from the threshold (a standard deviation of 0.04),
	// while a library of a few C files still has enough.
	CodeMinFunctions = 30
)

// CodeVerdict is what the machine code of one architecture slice says about
// how it was compiled.
type CodeVerdict struct {
	Arch  string // "arm64", "x86_64", ...
	Class CodeClass
	// Score is the share of measured functions showing an -O0 trait, from
	// 0 to 1; -O0-like from CodeO0Threshold up.
	Score float64
	// Functions and Instructions are what was measured: the sampled
	// functions of objects not taken for assembly.
	Functions    int
	Instructions int
	Objects      int // objects (or linked images) measured
	// AsmObjects are relocatable objects without a compiler's mark, taken
	// for hand-written assembly and not measured.
	AsmObjects int
	// Skipped objects hold no machine code the classifier reads (LLVM
	// bitcode, a text file, an unsupported architecture, no code).
	Skipped  int
	Bounds   string // where function boundaries came from: "symbols", "LC_FUNCTION_STARTS", ".eh_frame", "section"
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
	return fmt.Sprintf("%s: %s (score %.3f from %d functions, %d instructions, %d objects; %d assembly objects left out; argument spills %.3f, reloads %.3f, branches to next %.3f, frame loads/stores %.3f per instruction)",
		v.Arch, v.Class, v.Score, v.Functions, v.Instructions, v.Objects, v.AsmObjects,
		v.Features.ArgSpill, v.Features.Reload, v.Features.BranchNext, v.Features.FrameShare)
}

// funcStats are one function's counts.
type funcStats struct {
	insns, undecoded    int
	frameMem            int
	reloads, branchNext int
	argSpill            bool
}

// o0 says whether the function shows an -O0 trait.
func (f funcStats) o0() bool {
	return f.argSpill || f.reloads > 0 || f.branchNext > 0
}

// codeStats sums functions and objects.
type codeStats struct {
	funcs, insns, frameMem                      int
	argSpillFuncs, reloadFuncs, branchNextFuncs int
	o0Funcs                                     int
	objects, asm, skipped                       int
	bounds                                      string
}

func (s *codeStats) addFunc(f funcStats) {
	if f.insns == 0 {
		return
	}
	s.funcs++
	s.insns += f.insns
	s.frameMem += f.frameMem
	s.argSpillFuncs += b2i(f.argSpill)
	s.reloadFuncs += b2i(f.reloads > 0)
	s.branchNextFuncs += b2i(f.branchNext > 0)
	s.o0Funcs += b2i(f.o0())
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *codeStats) add(o codeStats) {
	s.funcs += o.funcs
	s.insns += o.insns
	s.frameMem += o.frameMem
	s.argSpillFuncs += o.argSpillFuncs
	s.reloadFuncs += o.reloadFuncs
	s.branchNextFuncs += o.branchNextFuncs
	s.o0Funcs += o.o0Funcs
	s.objects += o.objects
	s.asm += o.asm
	s.skipped += o.skipped
	if s.bounds == "" {
		s.bounds = o.bounds
	}
}

// slotRing remembers the last few frame slots stored to.
type slotRing struct {
	keys [4]uint64
	at   [4]int
	n    int
}

// reloadWindow: a load this many instructions or fewer after a store to the
// same slot, with no call between, is a reload.
const reloadWindow = 6

func slotKey(base uint32, off int64) uint64 { return uint64(base)<<56 ^ uint64(off) ^ 1<<63 }

func (r *slotRing) put(key uint64, i int) {
	r.keys[r.n%len(r.keys)], r.at[r.n%len(r.keys)] = key, i
	r.n++
}

func (r *slotRing) recent(key uint64, i int) bool {
	for k := range min(r.n, len(r.keys)) {
		if r.keys[k] == key && i-r.at[k] <= reloadWindow {
			return true
		}
	}
	return false
}

// Sampling bounds (see measureObject).
const (
	codeMaxFuncs       = 1 << 30 // per relocatable object
	codeMaxLinkedFuncs = 1 << 30 // per linked image
	codeMaxInsns       = 1 << 30 // per function
)

// codeOptions tune a run; tests use them to measure what the classifier
// normally leaves out.
type codeOptions struct {
	measureAsm     bool // measure objects taken for assembly too
	maxFuncs       int  // per relocatable object
	maxLinkedFuncs int  // per linked image
	maxInsns       int  // per function
}

var defaultCodeOptions = codeOptions{maxFuncs: codeMaxFuncs, maxLinkedFuncs: codeMaxLinkedFuncs, maxInsns: codeMaxInsns}

// codeUnit is one object to measure.
type codeUnit struct {
	slice  int
	member string
	base   int64 // offset in the file, for messages
	r      io.ReaderAt
	size   int64
}

// CodeEvidenceFile runs CodeEvidence on the file at path.
func CodeEvidenceFile(ctx context.Context, path string) ([]CodeVerdict, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("code evidence: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("code evidence: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("code evidence %s: expected a regular file, found %s", path, st.Mode().Type())
	}
	return CodeEvidence(ctx, path, f, st.Size())
}

// CodeEvidence reads the machine code of a Mach-O (thin or universal), an
// ar archive of Mach-O or ELF objects, or an ELF object or shared object,
// and classifies each architecture slice. name is used in messages.
func CodeEvidence(ctx context.Context, name string, r io.ReaderAt, size int64) ([]CodeVerdict, error) {
	return codeEvidence(ctx, name, r, size, defaultCodeOptions)
}

func codeEvidence(ctx context.Context, name string, r io.ReaderAt, size int64, opt codeOptions) ([]CodeVerdict, error) {
	magic, err := readMagic(r, size)
	if err != nil {
		return nil, fmt.Errorf("code evidence %s: %w", name, err)
	}
	type sliceInfo struct {
		arch string
		base int64
	}
	var slices []sliceInfo
	var units []codeUnit
	addSlice := func(arch string, base int64, sr io.ReaderAt, ssize int64) error {
		idx := len(slices)
		slices = append(slices, sliceInfo{arch, base})
		m, err := readMagic(sr, ssize)
		if err != nil {
			return fmt.Errorf("code evidence %s: %w", name, err)
		}
		if !isAr(m) {
			units = append(units, codeUnit{slice: idx, base: base, r: sr, size: ssize})
			return nil
		}
		a, err := ParseAr(sr, ssize)
		if err != nil {
			return annotate(err, name, arch, "", base)
		}
		for _, mem := range a.Members {
			units = append(units, codeUnit{slice: idx, member: mem.Name, base: base + mem.Offset,
				r: io.NewSectionReader(sr, mem.Offset, mem.Size), size: mem.Size})
		}
		return nil
	}
	switch {
	case isFat(magic):
		_, arches, err := ParseFat(r, size)
		if err != nil {
			return nil, annotate(err, name, "", "", 0)
		}
		for _, a := range arches {
			if err := addSlice(a.Arch(), a.Offset, io.NewSectionReader(r, a.Offset, a.Size), a.Size); err != nil {
				return nil, err
			}
		}
	case isMachO(magic), isAr(magic), isELF(magic):
		if err := addSlice("", 0, r, size); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("code evidence %s: %w: expected the magic of a Mach-O, universal, ar or ELF file, found %x", name, ErrUnknownFormat, magic)
	}

	results := make([]codeStats, len(units))
	arches := make([]string, len(units))
	errs := make([]error, len(units))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(units)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for i := range next {
				u := units[i]
				arches[i], results[i], errs[i] = measureObject(u.r, u.size, opt, &buf)
				if errs[i] != nil {
					errs[i] = annotate(errs[i], name, slices[u.slice].arch, u.member, u.base)
				}
			}
		}()
	}
	var cerr error
	for i := range units {
		if cerr = ctx.Err(); cerr != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if cerr != nil {
		return nil, fmt.Errorf("code evidence %s: %w", name, cerr)
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}

	out := make([]CodeVerdict, len(slices))
	sums := make([]codeStats, len(slices))
	for i, u := range units {
		sums[u.slice].add(results[i])
		if out[u.slice].Arch == "" && arches[i] != "" {
			out[u.slice].Arch = arches[i]
		}
	}
	for i := range out {
		if slices[i].arch != "" {
			out[i].Arch = slices[i].arch
		}
		out[i] = verdict(out[i].Arch, sums[i])
	}
	return out, nil
}

// measureObject reads one object or linked image and measures its code.
func measureObject(r io.ReaderAt, size int64, opt codeOptions, buf *[]byte) (string, codeStats, error) {
	var st codeStats
	magic, err := readMagic(r, size)
	if err != nil {
		return "", st, err
	}
	if !isMachO(magic) && !isELF(magic) {
		st.skipped++ // bitcode, a text file, a nested archive: no machine code
		return "", st, nil
	}
	var whole []byte
	if size <= maxInMemoryObject {
		// One read per object: archive members are small and many, and a
		// read per header, table and section costs more than the copy.
		if int64(cap(*buf)) < size {
			*buf = make([]byte, size)
		}
		whole = (*buf)[:size]
		if _, err := r.ReadAt(whole, 0); err != nil && err != io.EOF {
			return "", st, err
		}
		r = memReaderAt(whole)
	}
	var o *codeObject
	if isMachO(magic) {
		o, err = readMachOCode(r, size)
	} else {
		o, err = readELFCode(r, size)
	}
	if err != nil {
		return "", st, err
	}
	var scan func([]byte, int, *funcStats)
	switch o.arch {
	case "arm64", "arm64e":
		scan = scanARM64
	case "x86_64", "x86_64h":
		scan = scanX86
	}
	switch {
	case scan == nil || len(o.sections) == 0:
		st.skipped++
		return o.arch, st, nil
	case !o.linked && !o.compiled && !opt.measureAsm:
		st.asm++
		return o.arch, st, nil
	}
	st.objects++
	st.bounds = o.bounds

	// Deterministic sampling: every step-th function, spread over the
	// whole object, and the first maxInsns instructions of each (the
	// traits show in the prologue and the first uses of variables).
	limit := opt.maxFuncs
	if o.linked {
		limit = opt.maxLinkedFuncs
	}
	total := 0
	for _, s := range o.sections {
		total += len(s.starts)
	}
	step := max(1, float64(total)/float64(limit))
	k, pick := 0, 0.0
	for _, s := range o.sections {
		var code []byte
		for j, start := range s.starts {
			k++
			if float64(k-1) < pick {
				continue
			}
			pick += step
			end := s.ends[j]
			if end <= start || start < s.addr || end-s.addr > uint64(s.size) {
				continue
			}
			// Data inside a function (a jump table) ends what is read
			// of it: decoding data as instructions measures noise.
			for _, d := range s.data {
				if d[0] > start && d[0] < end {
					end = d[0]
					break
				}
			}
			if code == nil {
				if code, err = sectionBytes(r, whole, s); err != nil {
					return o.arch, st, err
				}
			}
			var f funcStats
			scan(code[start-s.addr:end-s.addr], opt.maxInsns, &f)
			st.addFunc(f)
		}
	}
	return o.arch, st, nil
}

// sectionBytes returns a code section's bytes: a slice of whole when the
// object is in memory, else read.
func sectionBytes(r io.ReaderAt, whole []byte, s codeSection) ([]byte, error) {
	if whole != nil {
		return whole[s.offset : s.offset+s.size], nil
	}
	b := make([]byte, s.size)
	if _, err := r.ReadAt(b, s.offset); err != nil {
		return nil, fmt.Errorf("read code at offset %d: %w", s.offset, err)
	}
	return b, nil
}

// maxInMemoryObject: objects up to this size are read whole, once.
const maxInMemoryObject = 256 << 20

// memReaderAt serves ReadAt from memory.
type memReaderAt []byte

func (m memReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(m)) {
		return 0, fmt.Errorf("read at offset %d: outside the %d-byte object", off, len(m))
	}
	n := copy(p, m[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// verdict turns a slice's sums into its class.
func verdict(arch string, s codeStats) CodeVerdict {
	v := CodeVerdict{Arch: arch, Functions: s.funcs, Instructions: s.insns, Objects: s.objects,
		AsmObjects: s.asm, Skipped: s.skipped, Bounds: s.bounds, Class: CodeTooLittle}
	if s.funcs > 0 {
		n := float64(s.funcs)
		v.Score = float64(s.o0Funcs) / n
		v.Features = CodeFeatures{
			ArgSpill:   float64(s.argSpillFuncs) / n,
			Reload:     float64(s.reloadFuncs) / n,
			BranchNext: float64(s.branchNextFuncs) / n,
			FrameShare: float64(s.frameMem) / float64(s.insns),
		}
	}
	switch {
	case s.funcs < CodeMinFunctions:
	case v.Score >= CodeO0Threshold:
		v.Class = CodeO0
	default:
		v.Class = CodeOptimised
	}
	return v
}
