// Package inspect reads the files osslbuild produces and reports facts about
// them: formats, architectures, deployment targets and the OpenSSL build-info
// strings embedded in them. It holds no policy; package validate does, and
// package codeclass, which classifies the machine code of what is parsed
// here, holds its threshold.
//
// Each format has exactly one parser here (ParseAr, ParseFat, ParseMachO,
// ParseELF, ScanBuildInfo, ParseCompilerLine). They read through an
// io.ReaderAt with a known size, check every offset and size against it, and
// allocate memory bounded by the real input rather than by header fields, so
// a hostile or truncated file yields a *FormatError, never a panic or a huge
// allocation.
package inspect

import (
	"bytes"
	"cmp"
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// Format is the container format of a file, slice or member.
type Format string

const (
	FormatUnknown Format = "unknown"
	FormatMachO   Format = "mach-o"    // a thin Mach-O file
	FormatFat     Format = "universal" // a Mach-O universal (fat) file
	FormatAr      Format = "ar"        // an ar archive (static library)
	FormatELF     Format = "elf"
)

// File is everything Inspect learnt about one file.
type File struct {
	Path   string
	Size   int64
	Format Format
	Slices []Slice // one per architecture; thin files have exactly one
}

// Slice is one architecture's part of a file: the whole file when thin.
type Slice struct {
	// Arch is the slice's architecture: for a fat slice, its fat_arch CPU
	// type; for a thin Mach-O or ELF file, its header's; for a thin archive,
	// the CPU of its objects when they agree, "" otherwise.
	Arch   string
	Format Format // FormatMachO, FormatAr or FormatELF
	Offset int64  // from the start of the file
	Size   int64
	// Objects are the slice's objects: the slice itself for Mach-O and ELF,
	// every non-index member, in order, for an archive.
	Objects []Object
	// BuildInfo is every build-info string in bytes the slice's format
	// loads, Offset from the start of the file; Unmapped are those found
	// in bytes it does not (appended past an image's end, an ELF section
	// no segment maps): reported, never evidence.
	BuildInfo []BuildInfo
	Unmapped  []Unmapped
	// Record is the slice's build information as chosen from BuildInfo by
	// layout (see RecordOf): the compiler line that is the build's own,
	// with the version, platform and date laid out beside it.
	Record Record
	// Code is what the slice's machine code says of how it was compiled,
	// once codeclass.Measure has run (codeclass.Inspect runs it); nil
	// before.
	Code *CodeVerdict
}

// Object is one object file: a thin file, or one archive member.
type Object struct {
	Member string // archive member name, "" when not in an archive
	Offset int64  // from the start of the file
	Size   int64
	Format Format
	Magic  []byte // the first (up to) 8 bytes, for messages about unknown members
	MachO  *MachO // set when Format is FormatMachO and it parsed
	ELF    *ELF   // set when Format is FormatELF and it parsed
	PE     *PE    // set when Format is FormatPE and it parsed
	// Signature is a linked Mach-O image's code signature, checked against
	// its pages (nil without LC_CODE_SIGNATURE); SignatureErr says why it
	// could not be read (a malformed signature, wrapping ErrSignature).
	Signature    *CodeSignature
	SignatureErr error
	// Err is why this object could not be parsed (a *FormatError naming the
	// file, slice and member). The rest of the file is still inspected so that
	// a validator can report every problem at once.
	Err error
}

// Arch is the object's CPU name ("" when unknown).
func (o Object) Arch() string {
	switch {
	case o.MachO != nil:
		return o.MachO.Arch
	case o.ELF != nil:
		return o.ELF.Arch
	case o.PE != nil:
		return o.PE.Arch
	}
	return ""
}

// format is one entry of the dispatch table: a magic test and the function
// that turns a file of that format into slices. A new format (zip,
// gzip-tar, ...) is one more entry.
type format struct {
	format Format
	match  func(magic []byte) bool
	slices func(c *inspector, f Format, r io.ReaderAt, size int64) ([]Slice, error)
}

var formats = []format{
	{FormatFat, isFat, (*inspector).fatSlices},
	{FormatMachO, isMachO, (*inspector).thinSlice},
	{FormatAr, isAr, (*inspector).thinSlice},
	{FormatELF, isELF, (*inspector).thinSlice},
	{FormatPE, isPE, (*inspector).thinSlice},
	{FormatZip, isZip, (*inspector).container},
	{FormatGzip, isGzip, (*inspector).container},
}

// container refuses a zip or tar.gz: it holds files, walked by WalkZip and
// WalkTarGz, not slices.
func (c *inspector) container(f Format, _ io.ReaderAt, _ int64) ([]Slice, error) {
	return nil, fmt.Errorf("inspect %s: %w (it is a %s file)", c.path, ErrContainer, f)
}

func isFat(b []byte) bool {
	return len(b) >= 4 && slices.Contains([]uint32{FatMagic, FatMagic64}, binary.BigEndian.Uint32(b))
}
func isMachO(b []byte) bool { _, _, ok := MachOByteOrder(b); return ok }
func isAr(b []byte) bool {
	return bytes.HasPrefix(b, []byte(ArMagic)) || bytes.HasPrefix(b, []byte("!<thin>\n"))
}
func isELF(b []byte) bool { return bytes.HasPrefix(b, []byte(elf.ELFMAG)) }

// Identify returns the format of the bytes that start a file.
func Identify(magic []byte) Format {
	for _, f := range formats {
		if f.match(magic) {
			return f.format
		}
	}
	return FormatUnknown
}

// Inspect opens path and inspects it; see InspectReader. Anything but a
// regular file is refused; a FIFO is opened without blocking to find out.
func Inspect(path string) (*File, error) {
	f, st, err := ctxio.OpenRegular(path, true)
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	defer f.Close()
	return InspectReader(path, f, st.Size())
}

// InspectReader identifies the format of the size bytes of r by magic
// number and inspects every slice. name is used in messages. Malformed
// containers (fat header, ar headers) are errors; a malformed object inside a
// container is recorded in its Object.Err so the rest is still reported.
func InspectReader(name string, r io.ReaderAt, size int64) (*File, error) {
	return inspectReader(&inspector{path: name}, r, size)
}

// InspectBytes is InspectReader over a file already in memory (a mapped
// file): the build-info search runs over b itself, without copying it, and
// the slices of a universal file are inspected at once, each on its own
// core. A fault on the memory (a mapped file truncated underneath) is an
// error naming the file, not a crash.
func InspectBytes(name string, b []byte) (f *File, err error) {
	err = GuardFault("inspect", name, func() error {
		f, err = inspectReader(&inspector{path: name, data: b}, bytes.NewReader(b), int64(len(b)))
		return err
	})
	return f, err
}

// GuardFault runs fn, which reads the mapped file name, turning a memory
// fault (SIGBUS when the file shrank underneath) into an error naming the
// file and what was being done (verb), instead of a crash.
func GuardFault(verb, name string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			// SetPanicOnFault's panic carries the faulting address.
			if re, ok := p.(interface {
				runtime.Error
				Addr() uintptr
			}); ok {
				err = fmt.Errorf("%s %s: the file changed while it was read (fault at %#x)", verb, name, re.Addr())
				return
			}
			panic(p)
		}
	}()
	return fn()
}

// Beside runs fn on a goroutine of its own and returns wait, which
// returns once fn has. A panic in fn (a fault of a mapped file cut short,
// which SetPanicOnFault turns into one, or a bug) goes on in wait's
// caller, where GuardFault turns the fault into an error.
func Beside(fn func()) (wait func()) {
	var p any
	var wg sync.WaitGroup
	wg.Go(func() {
		defer func() { p = recover() }()
		debug.SetPanicOnFault(true)
		fn()
	})
	return func() {
		if wg.Wait(); p != nil {
			panic(p)
		}
	}
}

// OnCPUs calls each(state, k) for every k from 0 to n-1 on every CPU,
// each worker with a state of its own from newState, and returns once all
// have; a panic goes on in the caller as Beside says.
func OnCPUs[S any](n int, newState func() S, each func(state S, k int)) {
	var next atomic.Int64
	waits := make([]func(), min(runtime.GOMAXPROCS(0), n))
	for w := range waits {
		waits[w] = Beside(func() {
			state := newState()
			for k := int(next.Add(1) - 1); k < n; k = int(next.Add(1) - 1) {
				each(state, k)
			}
		})
	}
	for _, wait := range waits {
		wait()
	}
}

func inspectReader(c *inspector, r io.ReaderAt, size int64) (*File, error) {
	name := c.path
	magic, err := ReadMagic(r, size)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", name, err)
	}
	for _, f := range formats {
		if !f.match(magic) {
			continue
		}
		slices, err := f.slices(c, f.format, r, size)
		if err != nil {
			return nil, err
		}
		return &File{Path: name, Size: size, Format: f.format, Slices: slices}, nil
	}
	return nil, fmt.Errorf("inspect %s: %w: expected the magic of a Mach-O, universal, ar or ELF file, found %x", name, ErrUnknownFormat, magic)
}

// ReadMagic returns the first (up to) 8 bytes of r, for Identify.
func ReadMagic(r io.ReaderAt, size int64) ([]byte, error) {
	magic := make([]byte, min(size, 8))
	if _, err := r.ReadAt(magic, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return magic, nil
}

// scanBeside is the size from which an image's build-information search
// runs beside its parse.
const scanBeside = 16 << 20

type inspector struct {
	path string
	data []byte // the whole file when in memory, else nil
	sc   scanner
}

// scan returns the build-info strings of the size bytes at off (from the
// start of the file; r reads them from 0), searching memory in place when
// the file is in memory.
func (c *inspector) scan(r io.ReaderAt, off, size int64) ([]BuildInfo, error) {
	if c.data != nil {
		return ScanBuildInfoBytes(c.data[off : off+size]), nil
	}
	return c.sc.scan(io.NewSectionReader(r, 0, size))
}

func (c *inspector) fatSlices(_ Format, r io.ReaderAt, size int64) ([]Slice, error) {
	_, arches, err := ParseFat(r, size)
	if err != nil {
		return nil, Annotate(err, c.path, "", "", 0)
	}
	formats := make([]Format, len(arches))
	for i, a := range arches {
		magic, err := ReadMagic(io.NewSectionReader(r, a.Offset, a.Size), a.Size)
		if err != nil {
			return nil, Annotate(err, c.path, a.Arch(), "", 0)
		}
		switch {
		case isMachO(magic):
			formats[i] = FormatMachO
		case isAr(magic):
			formats[i] = FormatAr
		default:
			return nil, &FormatError{Path: c.path, Slice: a.Arch(), Offset: a.Offset,
				Msg: fmt.Sprintf("slice content: expected a Mach-O file or an ar archive, found magic %x", magic)}
		}
	}
	out := make([]Slice, len(arches))
	errs := make([]error, len(arches))
	one := func(i int) {
		a := arches[i]
		s, err := c.slice(formats[i], io.NewSectionReader(r, a.Offset, a.Size), a.Offset, a.Size, a.Arch())
		s.Arch = a.Arch()
		out[i], errs[i] = s, err
	}
	if c.data != nil {
		// In memory, slices share nothing: each on its own core.
		var wg sync.WaitGroup
		for i := range arches {
			wg.Go(func() {
				if err := GuardFault("inspect", c.path, func() error { one(i); return nil }); err != nil {
					errs[i] = err
				}
			})
		}
		wg.Wait()
	} else {
		for i := range arches {
			one(i) // the stream scanner's buffer is one
		}
	}
	if i := slices.IndexFunc(errs, func(err error) bool { return err != nil }); i >= 0 {
		return nil, errs[i]
	}
	return out, nil
}

func (c *inspector) thinSlice(f Format, r io.ReaderAt, size int64) ([]Slice, error) {
	s, err := c.slice(f, r, 0, size, "")
	if err != nil {
		return nil, err
	}
	return []Slice{s}, nil
}

// slice inspects one slice of format f: r holds just the slice, base is its
// offset in the file, arch its name in a universal file ("" when thin).
func (c *inspector) slice(f Format, r io.ReaderAt, base, size int64, arch string) (Slice, error) {
	s := Slice{Format: f, Offset: base, Size: size}
	// The parts read as objects: an archive's members, else the whole slice.
	parts := []ArMember{{Size: size}}
	if f == FormatAr {
		a, err := ParseAr(r, size)
		if err != nil {
			return s, Annotate(err, c.path, arch, "", base)
		}
		parts = a.Members
	}
	for _, m := range parts {
		mr := io.NewSectionReader(r, m.Offset, m.Size)
		var bi []BuildInfo
		var err error
		scan := func() { bi, err = c.scan(mr, base+m.Offset, m.Size) }
		// A large image in memory is searched for its build information
		// on another CPU while its object is parsed and its signature's
		// pages hashed.
		wait, beside := func() {}, c.data != nil && m.Size >= scanBeside
		if beside {
			wait = Beside(scan)
		}
		o := c.object(mr, m.Size, arch, m.Name, base+m.Offset)
		wait()
		if o.Err != nil && o.Format == f && f != FormatAr {
			// A thin file that is itself malformed has nothing else to report.
			return s, o.Err
		}
		s.Objects = append(s.Objects, o)
		if !beside {
			scan()
		}
		if err != nil {
			return s, Annotate(err, c.path, arch, m.Name, 0)
		}
		for _, b := range bi {
			b.Member, b.Offset = m.Name, b.Offset+base+m.Offset
			s.BuildInfo = append(s.BuildInfo, b)
		}
	}
	s.Arch = commonArch(s.Objects)
	// Keep the build information that lies in bytes the format loads (the
	// rest goes to Unmapped), choose the Record from it, and name the
	// library by a source path when nothing else shows its code is there.
	lm := &loadMap{objs: s.Objects, r: r, base: base, cache: map[int]loaded{}}
	s.BuildInfo, s.Unmapped = lm.split(s.BuildInfo)
	s.Record = RecordOf(s.BuildInfo)
	if err := c.markFamily(&s, r, size, lm); err != nil {
		return s, Annotate(err, c.path, arch, "", base)
	}
	return s, nil
}

// markFamily names the library of a slice that has no version string, or
// one without libcrypto's build information or a compiler line, but
// carries source paths of the library's own (see familyByMarker): a
// BoringSSL build that recorded nothing is reported as BoringSSL, not as
// no OpenSSL at all, and OpenSSL 1.0.2's libssl, whose only build string
// is the version it was compiled against, as OpenSSL's code, not a
// program built against its headers. Only paths in bytes the format
// loads count; one found elsewhere is reported as Unmapped. A slice
// with libcrypto's build information is not read again.
func (c *inspector) markFamily(s *Slice, r io.ReaderAt, size int64, lm *loadMap) error {
	if s.Record.Version != nil && (s.Record.Compiler() != nil || HoldsLibcryptoInfo(s.BuildInfo)) {
		return nil
	}
	ok := func(off int64, n int) bool { in, _ := lm.loads(s.Offset+off, n); return in }
	var f Family
	var m string
	var refused *markerHit
	if c.data != nil {
		f, m, refused = familyByMarker(c.data[s.Offset:s.Offset+size], func(off, n int) bool { return ok(int64(off), n) })
	} else {
		var err error
		if f, m, refused, err = familyByMarkerAt(r, size, make([]byte, 1<<20), ok); err != nil {
			return fmt.Errorf("search for a fork's marker: %w", err)
		}
	}
	if refused != nil {
		_, u := lm.loads(s.Offset+int64(refused.Off), refused.N)
		s.Unmapped = addUnmapped(s.Unmapped, u, FoundSourcePath+refused.Text)
	}
	if f == "" {
		return nil
	}
	s.Record.Family = cmp.Or(s.Record.Family, f)
	s.Record.FamilyMarker = m
	return nil
}

// HoldsLibcryptoInfo reports whether infos hold a string only libcrypto's
// OpenSSL_version returns (platform, built on, the directories), with or
// without a compiler line; a version string alone does not count (see
// attesting).
func HoldsLibcryptoInfo(infos []BuildInfo) bool {
	return slices.ContainsFunc(infos, func(b BuildInfo) bool { return attesting[b.Kind] })
}

// object identifies and parses one object; parse failures land in Err.
func (c *inspector) object(r io.ReaderAt, size int64, arch, member string, base int64) Object {
	o := Object{Member: member, Offset: base, Size: size, Format: FormatUnknown}
	magic, err := ReadMagic(r, size)
	if err != nil {
		o.Err = Annotate(err, c.path, arch, member, 0)
		return o
	}
	o.Magic = magic
	switch {
	case isMachO(magic):
		o.Format = FormatMachO
		var data []byte
		if c.data != nil {
			data = c.data[base : base+size]
		}
		o.MachO, err = parseMachO(r, size, data)
		if err == nil && o.MachO.Type != macho.TypeObj {
			o.Signature, o.SignatureErr = readCodeSignature(r, 0, o.MachO, data)
		}
	case isPE(magic):
		o.Format = FormatPE
		o.PE, err = ParsePE(r, size)
	case isELF(magic):
		o.Format = FormatELF
		o.ELF, err = ParseELF(r, size)
	case isFat(magic):
		o.Format = FormatFat
		err = Malformed(0, "nested universal file: expected a Mach-O or ELF object")
	case isAr(magic):
		o.Format = FormatAr
		err = Malformed(0, "nested ar archive: expected a Mach-O or ELF object")
	}
	if err != nil {
		o.Err = Annotate(err, c.path, arch, member, base)
	}
	return o
}

// commonArch is the CPU all objects share, or "".
func commonArch(objs []Object) string {
	arch := ""
	for _, o := range objs {
		a := o.Arch()
		if a == "" || (arch != "" && a != arch) {
			return ""
		}
		arch = a
	}
	return arch
}
