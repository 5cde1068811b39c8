package codeclass

import (
	"cmp"
	"context"
	"io"
	"runtime/debug"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// Measure runs the code classifier over a file Inspect has already
// parsed and sets the Code of each slice keep accepts (every slice, with
// keep nil); the others' Code stays nil (not measured): a caller that
// judges only some slices (check: those holding OpenSSL) spares the
// others the decoding. It walks the slices and archive members Inspect
// found (one fat and one ar parser for both), so the classifier reads
// only the objects themselves; r holds the file's bytes at the offsets
// Inspect recorded. Objects Inspect could not parse, or the classifier
// cannot read, are left out (validate reports the former); a slice with
// no objects it can measure has too little evidence.
func Measure(ctx context.Context, f *inspect.File, r io.ReaderAt, keep func(inspect.Slice) bool) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer catchFault(&err, f.Path)
	slices := make([]codeSlice, len(f.Slices))
	skip := make([]bool, len(f.Slices))
	for i, s := range f.Slices {
		if keep != nil && !keep(s) || s.Format == inspect.FormatPE {
			// PE/COFF: no classifier reads Windows code yet; the slice's
			// Code stays nil, "not measured", not "too little evidence".
			skip[i] = true
			continue
		}
		cs := codeSlice{arch: s.Arch, base: s.Offset, size: s.Size}
		for _, o := range s.Objects {
			if o.Err != nil || (o.MachO == nil && o.ELF == nil) {
				continue
			}
			cs.units = append(cs.units, codeUnit{slice: i, member: o.Member, base: o.Offset,
				r: io.NewSectionReader(r, o.Offset, o.Size), size: o.Size, macho: o.MachO, elf: o.ELF})
		}
		slices[i] = cs
	}
	vs, err := measureSlices(ctx, f.Path, r, slices, defaultCodeOptions, true)
	if err != nil {
		return err
	}
	for i := range f.Slices {
		if skip[i] {
			continue
		}
		v := vs[i]
		v.Arch = cmp.Or(f.Slices[i].Arch, v.Arch)
		f.Slices[i].Code = &v
	}
	return nil
}

// MeasureBytesOf is Measure over the file's bytes in memory.
func MeasureBytesOf(ctx context.Context, f *inspect.File, b []byte, keep func(inspect.Slice) bool) error {
	return Measure(ctx, f, memReaderAt(b), keep)
}

// Inspect inspects the file at path and measures its machine code,
// reading it once: the file is mapped (or, where it cannot be, read whole)
// and both passes run over the same bytes.
func Inspect(ctx context.Context, path string) (*inspect.File, error) {
	r, size, b, done, err := readWhole(path, "inspect")
	if err != nil {
		return nil, err
	}
	defer done()
	var f *inspect.File
	if b == nil {
		f, err = inspect.InspectReader(path, r, size)
	} else {
		f, err = inspect.InspectBytes(path, b)
	}
	if err != nil {
		return nil, err
	}
	// Over the bytes in memory where they are (a mapped file, as
	// InspectBytes takes it): objects are measured in place, not copied.
	if err := Measure(ctx, f, r, nil); err != nil {
		return nil, err
	}
	return f, nil
}
