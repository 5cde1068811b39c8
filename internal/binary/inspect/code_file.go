package inspect

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"syscall"
)

// MeasureCode runs the code classifier over a file Inspect has already
// parsed and sets each slice's Code. It walks the slices and archive
// members Inspect found (one fat and one ar parser for both), so the
// classifier reads only the objects themselves; r holds the file's bytes
// at the offsets Inspect recorded. Objects Inspect could not parse, or the
// classifier cannot read, are left out (validate reports the former); a
// slice with no objects it can measure has too little evidence.
func MeasureCode(ctx context.Context, f *File, r io.ReaderAt) (err error) {
	return measureCode(ctx, f, r, nil, defaultCodeOptions)
}

// MeasureCodeBytes is MeasureCode over the file's bytes in memory (a
// mapped file, as InspectBytes takes it): objects are measured in place,
// not copied.
func MeasureCodeBytes(ctx context.Context, f *File, b []byte) error {
	return measureCode(ctx, f, memReaderAt(b), nil, defaultCodeOptions)
}

// MeasureCodeOf is MeasureCode for the slices keep accepts; the others'
// Code stays nil (not measured). A caller that judges only some slices
// (check: those holding OpenSSL) spares the others the decoding.
func MeasureCodeOf(ctx context.Context, f *File, r io.ReaderAt, keep func(Slice) bool) error {
	return measureCode(ctx, f, r, keep, defaultCodeOptions)
}

// MeasureCodeBytesOf is MeasureCodeOf over the file's bytes in memory.
func MeasureCodeBytesOf(ctx context.Context, f *File, b []byte, keep func(Slice) bool) error {
	return measureCode(ctx, f, memReaderAt(b), keep, defaultCodeOptions)
}

func measureCode(ctx context.Context, f *File, r io.ReaderAt, keep func(Slice) bool, opt codeOptions) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer catchFault(&err, f.Path)
	slices := make([]codeSlice, len(f.Slices))
	skip := make([]bool, len(f.Slices))
	for i, s := range f.Slices {
		if keep != nil && !keep(s) {
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
	vs, err := measureSlices(ctx, f.Path, r, slices, opt, true)
	if err != nil {
		return err
	}
	for i := range f.Slices {
		if skip[i] {
			continue
		}
		v := vs[i]
		if f.Slices[i].Arch != "" {
			v.Arch = f.Slices[i].Arch
		}
		f.Slices[i].Code = &v
	}
	return nil
}

// InspectCode inspects the file at path and measures its machine code,
// reading it once: the file is mapped (or, where it cannot be, read whole)
// and both passes run over the same bytes.
func InspectCode(ctx context.Context, path string) (*File, error) {
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("inspect %s: expected a regular file, found %s", path, st.Mode().Type())
	}
	b, unmap, ok := mapFile(fd, st.Size())
	if !ok {
		if st.Size() > maxInMemoryFile {
			f, err := InspectReader(path, fd, st.Size())
			if err != nil {
				return nil, err
			}
			return f, MeasureCode(ctx, f, fd)
		}
		b, unmap = make([]byte, st.Size()), func() {}
		if _, err := io.ReadFull(fd, b); err != nil {
			return nil, fmt.Errorf("inspect %s: %w", path, err)
		}
	}
	defer unmap()
	f, err := InspectBytes(path, b)
	if err != nil {
		return nil, err
	}
	if err := MeasureCodeBytes(ctx, f, b); err != nil {
		return nil, err
	}
	return f, nil
}
