package inspect

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ArMagic starts every ar archive (BSD and GNU/SysV alike).
const ArMagic = "!<arch>\n"

const (
	arHeaderSize = 60
	// maxLongNames caps the GNU "//" long-name table we hold in memory. Real
	// tables are a few KiB (one line per long member name); this bounds the
	// allocation on hostile input while staying far above any real archive.
	maxLongNames = 16 << 20
	// maxBSDName caps a BSD "#1/N" name, which is read into memory.
	maxBSDName = 4096
)

// ArMember is one member of an archive. Offsets are relative to the reader
// given to ParseAr.
type ArMember struct {
	Name        string
	Offset      int64 // where the member's data starts (after any BSD long name)
	Size        int64 // size of the data, excluding any BSD long name
	SymbolTable bool  // __.SYMDEF*, "/" or "/SYM64/": an index, not an object
}

// Archive lists an ar archive's members. Symbol-table and long-name-table
// members are kept apart from Members so callers iterate objects only.
type Archive struct {
	Members      []ArMember // object members, in archive order
	SymbolTables []ArMember // __.SYMDEF, __.SYMDEF SORTED, __.SYMDEF_64, /, /SYM64/
}

// isBSDSymdef reports the Darwin/BSD symbol table names ranlib and llvm-ar write.
func isBSDSymdef(name string) bool {
	return slices.Contains([]string{"__.SYMDEF", "__.SYMDEF SORTED", "__.SYMDEF_64", "__.SYMDEF_64 SORTED"}, name)
}

// ParseAr reads the member table of an ar archive of the given size. It
// reads headers and names only, never member data, so memory stays bounded
// by the number of members; every size and offset is checked against size.
func ParseAr(r io.ReaderAt, size int64) (*Archive, error) {
	var magic [8]byte
	if size < int64(len(magic)) {
		return nil, Malformed(0, "archive is %d bytes, shorter than the %q magic", size, ArMagic)
	}
	if _, err := r.ReadAt(magic[:], 0); err != nil {
		return nil, fmt.Errorf("read ar magic: %w", err)
	}
	if string(magic[:]) != ArMagic {
		if string(magic[:]) == "!<thin>\n" {
			return nil, Malformed(0, "thin archive (members stored outside the file) is not supported")
		}
		return nil, Malformed(0, "expected ar magic %q, found %q", ArMagic, magic[:])
	}

	a := &Archive{}
	var longNames []byte // GNU "//" table
	var hdr [arHeaderSize]byte
	off := int64(len(magic))
	for off < size {
		// Members are 2-byte aligned; a lone trailing pad byte ends the archive.
		if size-off == 1 {
			break
		}
		if size-off < arHeaderSize {
			return nil, Malformed(off, "truncated member header: expected %d bytes, found %d before end of archive (%d bytes)", arHeaderSize, size-off, size)
		}
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return nil, fmt.Errorf("read ar member header at offset %d: %w", off, err)
		}
		rawName := strings.TrimRight(string(hdr[0:16]), " ")
		dataOff := off + arHeaderSize
		// Name the member in errors as ar t would, even when its size is bad.
		who := func() string {
			name, _, _ := memberName(r, off, rawName, size-dataOff, longNames)
			return printable(cmp.Or(name, rawName))
		}
		if hdr[58] != '`' || hdr[59] != '\n' {
			return nil, &FormatError{Member: who(), Offset: off + 58,
				Msg: fmt.Sprintf("bad member header terminator: expected \"`\\n\", found %q", hdr[58:60])}
		}
		sizeField := strings.TrimRight(string(hdr[48:58]), " ")
		msize, err := strconv.ParseInt(sizeField, 10, 64)
		if err != nil || msize < 0 {
			return nil, &FormatError{Member: who(), Offset: off + 48,
				Msg: fmt.Sprintf("member size field: expected a decimal number, found %q", sizeField)}
		}
		// Compare as remaining-bytes so that a huge size cannot overflow.
		if msize > size-dataOff {
			return nil, &FormatError{Member: who(), Offset: off + 48,
				Msg: fmt.Sprintf("member size %d runs past the end of the archive: expected at most %d bytes after the header at offset %d (archive is %d bytes)", msize, size-dataOff, off, size)}
		}

		m := ArMember{Name: rawName, Offset: dataOff, Size: msize}
		switch {
		case isBSDSymdef(rawName), rawName == "/" || rawName == "/SYM64/":
			m.SymbolTable = true
		case rawName == "//":
			if msize > maxLongNames {
				return nil, &FormatError{Member: "//", Offset: off,
					Msg: fmt.Sprintf("long-name table of %d bytes exceeds the %d-byte limit", msize, maxLongNames)}
			}
			longNames = make([]byte, msize)
			if _, err := r.ReadAt(longNames, dataOff); err != nil {
				return nil, fmt.Errorf("read ar long-name table at offset %d: %w", off, err)
			}
			off = next(dataOff, msize)
			continue
		default:
			name, n, err := memberName(r, off, rawName, msize, longNames)
			if err != nil {
				return nil, err
			}
			m.Name, m.Offset, m.Size = name, dataOff+n, msize-n
			m.SymbolTable = n > 0 && isBSDSymdef(name) // a BSD long name may name one
		}
		if m.SymbolTable {
			a.SymbolTables = append(a.SymbolTables, m)
		} else {
			a.Members = append(a.Members, m)
		}
		off = next(dataOff, msize)
	}
	return a, nil
}

// next returns the header offset following a member: data end, 2-byte aligned.
func next(dataOff, size int64) int64 {
	end := dataOff + size
	return end + end&1
}

// gnuLongName resolves "/N": an offset into the "//" table, whose entries end in "/\n".
func gnuLongName(table []byte, raw string) (string, error) {
	if table == nil {
		return "", fmt.Errorf("long name %q: expected a preceding \"//\" long-name table, found none", raw)
	}
	n, err := strconv.ParseInt(raw[1:], 10, 64)
	if err != nil || n < 0 || n >= int64(len(table)) {
		return "", fmt.Errorf("long name %q: expected an offset below %d (long-name table size)", raw, len(table))
	}
	rest := table[n:]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimSuffix(string(rest), "/"), nil
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// printable quotes non-printable names so error messages stay one line.
func printable(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
		return strconv.Quote(s)
	}
	return s
}

// memberName resolves the raw name of the member whose header is at off,
// as ar t prints it: a BSD "#1/N" name is the first N bytes of its data
// (avail of them there), NUL-padded, n is N; a GNU "/N" name is an offset
// into the "//" table, longNames; a GNU short name ends in "/".
func memberName(r io.ReaderAt, off int64, raw string, avail int64, longNames []byte) (name string, n int64, err error) {
	switch {
	case strings.HasPrefix(raw, "#1/"):
		n, err := strconv.ParseInt(raw[3:], 10, 64)
		if err != nil || n < 0 || n > avail || n > maxBSDName {
			return "", 0, &FormatError{Member: printable(raw), Offset: off,
				Msg: fmt.Sprintf("BSD long name length: expected a number from 0 to %d (member size), found %q", min(avail, maxBSDName), raw[3:])}
		}
		buf := make([]byte, n)
		if _, err := r.ReadAt(buf, off+arHeaderSize); err != nil {
			return "", 0, fmt.Errorf("read BSD long name of member at offset %d: %w", off, err)
		}
		return string(bytes.TrimRight(buf, "\x00")), n, nil
	case len(raw) > 1 && raw[0] == '/' && isDigits(raw[1:]):
		name, err := gnuLongName(longNames, raw)
		if err != nil {
			return "", 0, &FormatError{Member: raw, Offset: off, Msg: err.Error()}
		}
		return name, 0, nil
	case len(raw) > 1 && strings.HasSuffix(raw, "/"):
		return strings.TrimSuffix(raw, "/"), 0, nil
	}
	return raw, 0, nil
}
