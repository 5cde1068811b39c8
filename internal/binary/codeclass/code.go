// Package codeclass is the machine-code classifier: it reads the code of
// the objects package inspect parses and says whether each library slice
// looks compiled at -O0. Its threshold and sampling are policy, which
// inspect holds none of; its verdict is inspect's CodeVerdict, which
// Measure records in Slice.Code.
package codeclass

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/ctxio"
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
// Measured on the labelled corpus (code_corpus_test.go: 39 OpenSSL 4.0.2 C
// files plus perlasm objects, compiled by clang-14 for macOS arm64 and
// x86_64 and by gcc 12 for linux-x86_64 at -O0, -O1, -O2, -O3 and -Os, as
// archives, universal archives, dylibs and shared objects), every -O0
// slice scores 0.86 or more and every optimised one 0.08 or less (0.88
// and 0.09 unsampled); Debian's gcc -O2 libcrypto
// scores 0.03 and osslbuild's full -O3 universal2 libcrypto 0.02 (arm64)
// and 0.04 (x86_64). O0Threshold sits in the middle of that gap, far
// from both sides: a slice is -O0-like when most of its functions are.
// The share of frame-addressed loads and stores per instruction (the
// measurement that motivated this: 0.29-0.43 at -O0, 0.05-0.14 optimised)
// is reported too but does not decide: its gap is 2-3x where the function
// share's is 10x, and hand-written assembly, which keeps state on the
// stack, moves it more.
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

const (
	// O0Threshold: a slice whose Score is at least this is -O0-like.
	O0Threshold = 0.5
	// MinFunctions: with fewer functions measured, a slice has too
	// little evidence. Thirty keeps the binomial noise of a share near
	// 0.05 or 0.95 far from the threshold (a standard deviation of 0.04),
	// while a library of a few C files still has enough.
	MinFunctions = 30
)

// funcStats are one function's counts.
type funcStats struct {
	insns               int
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
	// The instruction-set pass (x86-64 and arm64), over every object,
	// sampled or not: isaLinked when one it decoded was a linked image.
	isa                         isaStats
	isaAsm                      int
	isaLinked, isaArchX, isaArm bool
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
	s.isa.add(o.isa)
	s.isaAsm += o.isaAsm
	s.isaLinked = s.isaLinked || o.isaLinked
	s.isaArchX = s.isaArchX || o.isaArchX
	s.isaArm = s.isaArm || o.isaArm
	s.bounds = cmp.Or(s.bounds, o.bounds)
}

// slotRing remembers the last few frame slots stored to.
type slotRing struct {
	keys [4]uint64
	at   [4]int
	n    int
}

// reloadWindow: a load this many instructions or fewer after a store to the
// same slot, with no call between, is a reload. Measured on the corpus, 6
// gives the widest gap: 2 misses -O0 reloads across a branch (closest -O0
// 0.82), 16 starts to catch optimised spill code (closest optimised 0.086
// against 0.082).
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

// frameInsn is what the -O classifier reads of one instruction.
type frameInsn struct {
	size     int    // in bytes; 0: no instruction decodes here
	frame    bool   // a load or store off the frame or stack pointer, at slot
	slot     uint64 // slotKey of its base register and offset
	store    bool
	argSpill bool // a store of an argument register
	put      bool // a store that fills the slot (not one writing its base back: a push)
	load     bool // a load that reloads the slot
	prologue bool // sets a frame up: push, sub sp, mov of the frame pointer, hints
	jumpNext bool // a branch to the next instruction
	call     bool
}

// scanFunc measures one function's code (at most maxInsns instructions),
// decode reading the instruction at the start of its bytes.
func scanFunc(code []byte, maxInsns int, st *funcStats, decode func([]byte) frameInsn) {
	var ring slotRing
	prologue := true
	for pos, i := 0, 0; pos < len(code) && i < maxInsns; i++ {
		in := decode(code[pos:])
		if in.size == 0 { // resynchronise
			pos++
			prologue = false
			continue
		}
		st.insns++
		if prologue {
			switch {
			case in.frame && in.store:
				// An argument register stored to the frame before any
				// other work.
				st.argSpill = st.argSpill || in.argSpill
			case in.prologue:
			default:
				prologue = false
			}
		}
		switch {
		case in.frame:
			st.frameMem++
			if in.put {
				ring.put(in.slot, i)
			} else if in.load && ring.recent(in.slot, i) {
				st.reloads++
			}
		case in.jumpNext && pos+in.size < len(code):
			// Not as the last instruction: in a linked image that is a
			// tail call to the function placed right after.
			st.branchNext++
		case in.call:
			// A value kept in memory across a call is ordinary in
			// optimised code; only reloads with no call between count.
			ring = slotRing{}
		}
		pos += in.size
	}
}

// Deterministic sampling keeps a 17.8 MB universal libcrypto.a (1,000
// objects and 13,000 functions per slice) well inside the time budget of
// check without losing accuracy. A slice measures at most codeMaxObjects
// of its objects (every k-th member) and about codeSliceBudget functions
// spread evenly over them (every k-th function of an object, at least
// codeMinPerObject), and of each function its first codeMaxInsns
// instructions, where the traits show (the prologue, the first uses of
// each variable). Small libraries are measured whole. On the corpus the
// closest -O0 and optimised scores move by less than 0.02 against an
// unsampled run (TestCodeCalibration runs both), and on the full builds
// (osslbuild's universal2, the pyca-way arm64 libcrypto, Debian's) by
// 0.015 at most.
const (
	codeMaxObjects   = 512
	codeSliceBudget  = 4096
	codeMinPerObject = 8
	codeMaxInsns     = 64
)

// codeOptions tune a run; tests use them to measure what the classifier
// normally leaves out.
type codeOptions struct {
	measureAsm   bool // measure objects taken for assembly too
	maxObjects   int  // per slice, every k-th
	sliceBudget  int  // functions per slice, spread over its objects
	minPerObject int  // but at least this many per object
	maxInsns     int  // per function
}

var defaultCodeOptions = codeOptions{maxObjects: codeMaxObjects, sliceBudget: codeSliceBudget, minPerObject: codeMinPerObject, maxInsns: codeMaxInsns}

// unsampled measures every instruction of every function.
var unsampled = codeOptions{maxObjects: 1 << 30, sliceBudget: 1 << 30, minPerObject: 1 << 30, maxInsns: 1 << 30}

// codeSlice is one architecture slice: the whole file when thin.
type codeSlice struct {
	arch  string // from the fat header, "" when thin
	base  int64  // offset in the file
	r     io.ReaderAt
	size  int64
	units []codeUnit
	err   error
}

// list returns the slice's objects: its archive members, or itself.
func (s *codeSlice) list(name string, idx int) ([]codeUnit, error) {
	m, err := inspect.ReadMagic(s.r, s.size)
	if err != nil {
		return nil, fmt.Errorf("code evidence %s: %w", name, err)
	}
	if inspect.Identify(m) != inspect.FormatAr {
		return []codeUnit{{slice: idx, base: s.base, r: s.r, size: s.size}}, nil
	}
	a, err := inspect.ParseAr(s.r, s.size)
	if err != nil {
		return nil, inspect.Annotate(err, name, s.arch, "", s.base)
	}
	units := make([]codeUnit, 0, len(a.Members))
	for _, mem := range a.Members {
		units = append(units, codeUnit{slice: idx, member: mem.Name, base: s.base + mem.Offset,
			r: io.NewSectionReader(s.r, mem.Offset, mem.Size), size: mem.Size})
	}
	return units, nil
}

// codeUnit is one object to measure.
type codeUnit struct {
	slice  int
	member string
	base   int64 // offset in the file, for messages
	r      io.ReaderAt
	size   int64
	macho  *inspect.MachO // the object as Inspect parsed it, nil: parse it here
	elf    *inspect.ELF
	// isaOnly: outside the classifier's sample, read by the
	// instruction-set pass only.
	isaOnly bool
}

// maxInMemoryFile: where it cannot map a file, EvidenceFile reads files
// up to this size whole, with one read (a 17.8 MB universal libcrypto.a
// otherwise costs thousands of small reads, a third of the classifier's
// time).
const maxInMemoryFile = 1 << 30

// EvidenceFile classifies the slices of the file at path (codeEvidence).
func EvidenceFile(ctx context.Context, path string) ([]inspect.CodeVerdict, error) {
	r, size, _, done, err := readWhole(path, "code evidence")
	if err != nil {
		return nil, err
	}
	defer done()
	return codeEvidence(ctx, path, r, size, defaultCodeOptions)
}

// readWhole opens the file at path and returns its size bytes: mapped, or
// where it cannot be, read whole, in b and r; b is nil for a file beyond
// maxInMemoryFile that cannot be mapped, to be read through r, the file.
// done closes (and unmaps) it; what begins the errors.
func readWhole(path, what string) (r io.ReaderAt, size int64, b []byte, done func(), err error) {
	fd, st, err := ctxio.OpenRegular(path, true)
	if err != nil {
		return nil, 0, nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	size = st.Size()
	if b, unmap, ok := mapFile(fd, size); ok {
		return memReaderAt(b), size, b, func() { unmap(); fd.Close() }, nil
	}
	if size > maxInMemoryFile {
		return fd, size, nil, func() { fd.Close() }, nil
	}
	b = make([]byte, size)
	if _, err := io.ReadFull(fd, b); err != nil {
		fd.Close()
		return nil, 0, nil, nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return memReaderAt(b), size, b, func() { fd.Close() }, nil
}

// codeEvidence reads the machine code of a Mach-O (thin or universal), an
// ar archive of Mach-O or ELF objects, or an ELF object or shared object,
// and classifies each architecture slice. name is used in messages.
func codeEvidence(ctx context.Context, name string, r io.ReaderAt, size int64, opt codeOptions) (_ []inspect.CodeVerdict, err error) {
	// A mapped file that shrinks under us faults on access; that must be
	// an error, not a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer catchFault(&err, name)
	magic, err := inspect.ReadMagic(r, size)
	if err != nil {
		return nil, fmt.Errorf("code evidence %s: %w", name, err)
	}
	var slices []codeSlice
	switch inspect.Identify(magic) {
	case inspect.FormatFat:
		_, arches, err := inspect.ParseFat(r, size)
		if err != nil {
			return nil, inspect.Annotate(err, name, "", "", 0)
		}
		for _, a := range arches {
			slices = append(slices, codeSlice{arch: a.Arch(), base: a.Offset, r: io.NewSectionReader(r, a.Offset, a.Size), size: a.Size})
		}
	case inspect.FormatMachO, inspect.FormatAr, inspect.FormatELF:
		slices = append(slices, codeSlice{r: r, size: size})
	default:
		return nil, fmt.Errorf("code evidence %s: %w: expected the magic of a Mach-O, universal, ar or ELF file, found %x", name, inspect.ErrUnknownFormat, magic)
	}
	// The slices' member tables, side by side: reading them is most of
	// the page faults of a mapped universal file.
	var lists sync.WaitGroup
	for i := range slices {
		lists.Go(func() {
			debug.SetPanicOnFault(true)
			defer catchFault(&slices[i].err, name)
			slices[i].units, slices[i].err = slices[i].list(name, i)
		})
	}
	lists.Wait()
	for _, s := range slices {
		if s.err != nil {
			return nil, s.err
		}
	}
	return measureSlices(ctx, name, r, slices, opt, false)
}

// measureSlices measures the objects of each slice, sampled as opt says,
// on every CPU. With tolerant, an object the classifier cannot read counts
// as skipped instead of failing the whole run: the caller (Measure)
// reports malformed objects itself.
func measureSlices(ctx context.Context, name string, r io.ReaderAt, slices []codeSlice, opt codeOptions, tolerant bool) ([]inspect.CodeVerdict, error) {
	var units []codeUnit
	perSlice := make([]int, len(slices)) // objects measured in each slice, for sampling
	for i, s := range slices {
		// Every k-th object when a slice has more than maxObjects.
		step := max(1, float64(len(s.units))/float64(opt.maxObjects))
		for k, pick := 0, 0.0; k < len(s.units); k++ {
			u := s.units[k]
			if float64(k) >= pick {
				perSlice[i]++
				pick += step
			} else {
				u.isaOnly = true // the instruction-set pass reads every object
			}
			units = append(units, u)
		}
	}
	results := make([]codeStats, len(units))
	arches := make([]string, len(units))
	errs := make([]error, len(units))
	one := func(i int, buf *[]byte) {
		u := units[i]
		var whole []byte
		if m, ok := r.(memReaderAt); ok { // the file is in memory: no copy
			whole = m[u.base : u.base+u.size]
		}
		limit := max(opt.minPerObject, opt.sliceBudget/perSlice[u.slice])
		arches[i], results[i], errs[i] = measureObject(u.r, u.size, whole, u.macho, u.elf, limit, opt, u.isaOnly, buf)
		for k := range results[i].isa.uses {
			results[i].isa.uses[k].Member = u.member
		}
		if _, malformed := errors.AsType[*inspect.FormatError](errs[i]); tolerant && malformed {
			results[i], errs[i] = codeStats{skipped: 1}, nil
		}
		if errs[i] != nil {
			errs[i] = inspect.Annotate(errs[i], name, slices[u.slice].arch, u.member, u.base)
		}
	}
	if len(units) == 1 {
		// A single object (check walks thousands of them, each file on a
		// worker of its own already): no goroutines to start and stop.
		var buf []byte
		one(0, &buf)
	} else {
		next := make(chan int)
		var wg sync.WaitGroup
		for range min(runtime.GOMAXPROCS(0), len(units)) {
			wg.Go(func() {
				debug.SetPanicOnFault(true)
				var buf []byte
				for i := range next {
					one(i, &buf)
				}
			})
		}
		for i := range units {
			if ctx.Err() != nil {
				break
			}
			next <- i
		}
		close(next)
		wg.Wait()
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("code evidence %s: %w", name, err)
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}

	out := make([]inspect.CodeVerdict, len(slices))
	sums := make([]codeStats, len(slices))
	for i, u := range units {
		sums[u.slice].add(results[i])
		out[u.slice].Arch = cmp.Or(out[u.slice].Arch, arches[i])
	}
	for i := range out {
		out[i] = verdict(cmp.Or(slices[i].arch, out[i].Arch), sums[i])
	}
	return out, nil
}

// catchFault, deferred, turns a memory fault (which debug.SetPanicOnFault
// turns into a panic) into *err, naming the file (name) unless the caller
// adds the location itself (""). Any other panic goes on: a bug must stay
// visible, to the fuzzers first.
func catchFault(err *error, name string) {
	p := recover()
	if p == nil {
		return
	}
	fault, ok := p.(interface {
		error
		Addr() uintptr
	})
	if !ok {
		panic(p)
	}
	*err = fmt.Errorf("reading failed (did the file change while being read?): %w", fault)
	if name != "" {
		*err = fmt.Errorf("code evidence %s: %w", name, *err)
	}
}

// measureObject reads one object or linked image and measures the code of
// at most limit of its functions; m or e is the object parsed already (by
// Inspect), or nil.
//
// whole, when not nil, holds the object's bytes already; otherwise they are
// read into *buf, one read per object (archive members are small and many,
// and a read per header, table and section costs more than the copy).
//
// Every object's x86-64 and arm64 code goes through the instruction-set pass whole;
// isaOnly leaves the object out of the -O classifier's sample.
//
// A memory fault (a mapped file truncated meanwhile) is turned into an
// error.
func measureObject(r io.ReaderAt, size int64, whole []byte, m *inspect.MachO, e *inspect.ELF, limit int, opt codeOptions, isaOnly bool, buf *[]byte) (_ string, _ codeStats, err error) {
	defer catchFault(&err, "")
	var st codeStats
	if whole == nil {
		magic, err := inspect.ReadMagic(r, size)
		if err != nil {
			return "", st, err
		}
		if f := inspect.Identify(magic); f != inspect.FormatMachO && f != inspect.FormatELF {
			st.skipped++
			return "", st, nil
		}
		if size > maxObject {
			return "", st, inspect.Malformed(0, "object of %d bytes exceeds the %d-byte limit of the code classifier", size, int64(maxObject))
		}
		if int64(cap(*buf)) < size {
			*buf = make([]byte, size)
		}
		whole = (*buf)[:size]
		if _, err := r.ReadAt(whole, 0); err != nil && err != io.EOF {
			return "", st, err
		}
	}
	var o *codeObject
	switch inspect.Identify(whole) {
	case inspect.FormatMachO:
		o, err = readMachOCode(whole, m)
	case inspect.FormatELF:
		o, err = readELFCode(whole, e)
	default:
		st.skipped++ // bitcode, a text file, a nested archive: no machine code
		return "", st, nil
	}
	if err != nil {
		return "", st, err
	}
	x86, arm := o.arch == "x86_64" || o.arch == "x86_64h", o.arch == "arm64" || o.arch == "arm64e" || o.arch == "aarch64"
	scan := scanX86
	if arm {
		scan = scanARM64
	}
	if x86 || arm {
		st.isaArchX, st.isaArm = x86, arm
		switch {
		case !o.isaCompiled && !opt.measureAsm:
			st.isaAsm++
		case len(o.sections) > 0:
			st.isaLinked = o.linked
			isaObject(whole, o, &st.isa)
		}
	}
	switch {
	case isaOnly:
		return o.arch, st, nil
	case !x86 && !arm || len(o.sections) == 0:
		st.skipped++
		return o.arch, st, nil
	case !o.linked && !o.compiled && !opt.measureAsm:
		st.asm++
		return o.arch, st, nil
	}
	st.objects++
	st.bounds = o.bounds

	// Deterministic sampling (see codeSliceBudget): every step-th
	// function, so the sample spans the whole object.
	total := 0
	for _, s := range o.sections {
		total += len(s.starts)
	}
	step := max(1, float64(total)/float64(limit))
	k, pick := 0, 0.0
	for _, s := range o.sections {
		code := whole[s.offset : s.offset+s.size]
		for j, start := range s.starts {
			k++
			if float64(k-1) < pick {
				continue
			}
			pick += step
			end, ok := s.end(j)
			if !ok {
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
			var f funcStats
			scan(code[start-s.addr:end-s.addr], opt.maxInsns, &f)
			st.addFunc(f)
		}
	}
	return o.arch, st, nil
}

// end is where the section's j-th function ends: its size where the format
// gives one (ELF), else (a Mach-O function, an ELF symbol of size 0:
// assembly without .size) the next function's start, else the section's
// end. ok is false for bounds that do not lie inside the section.
func (s *codeSection) end(j int) (end uint64, ok bool) {
	start := s.starts[j]
	end = s.addr + uint64(s.size)
	switch {
	case s.ends != nil && s.ends[j] > start:
		end = s.ends[j]
	case j+1 < len(s.starts):
		end = s.starts[j+1]
	}
	return end, end > start && start >= s.addr && end-s.addr <= uint64(s.size)
}

// maxObject bounds one object or linked image, which is held in memory
// whole: the largest real ones (a browser's framework) are a few hundred MB.
const maxObject = 2 << 30

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
func verdict(arch string, s codeStats) inspect.CodeVerdict {
	v := inspect.CodeVerdict{Arch: arch, Functions: s.funcs, Instructions: s.insns, Objects: s.objects,
		AsmObjects: s.asm, Skipped: s.skipped, Bounds: s.bounds, Class: inspect.CodeTooLittle}
	if s.funcs > 0 {
		n := float64(s.funcs)
		v.Score = float64(s.o0Funcs) / n
		v.Features = inspect.CodeFeatures{
			ArgSpill:   float64(s.argSpillFuncs) / n,
			Reload:     float64(s.reloadFuncs) / n,
			BranchNext: float64(s.branchNextFuncs) / n,
			FrameShare: float64(s.frameMem) / float64(s.insns),
		}
	}
	if s.isaArchX || s.isaArm {
		attribution := "members"
		if s.isaLinked {
			attribution = "linked"
		}
		v.ISA = isaEvidence(s.isa, attribution, s.isaAsm, s.isaArm && !s.isaArchX)
	}
	switch {
	case s.funcs < MinFunctions:
	case v.Score >= O0Threshold:
		v.Class = inspect.CodeO0
	default:
		v.Class = inspect.CodeOptimised
	}
	return v
}
