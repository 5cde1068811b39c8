package inspect

import (
	"cmp"
	"errors"
	"fmt"
)

// ErrMalformed is matched (errors.Is) by every *FormatError: the bytes do not
// form the format their magic number announced.
var ErrMalformed = errors.New("malformed file")

// ErrUnknownFormat is returned when a file's magic number matches none of the
// formats Inspect understands.
var ErrUnknownFormat = errors.New("unrecognised file format")

// FormatError says where a file is malformed and what was expected vs found.
// The parsers fill Offset, Member and Msg; Inspect adds Path and Slice, so the
// message names the file, the architecture slice and the archive member.
type FormatError struct {
	Path   string // file path, as given to Inspect
	Slice  string // architecture slice of a universal file, "" for thin files
	Member string // archive member name, "" outside archives
	Offset int64  // byte offset in the file (or in the parsed stream) where the problem is
	Msg    string // what was expected and what was found
	notTar bool   // a gzip stream without a single tar header (see ErrNotTar)
}

// ErrNotTar is matched (errors.Is) by the error of a gzip file that holds
// no tar archive at all: data someone compressed (a .json.gz), which a
// directory walk skips, where a tarball broken after its first entry is a
// malformed file.
var ErrNotTar = errors.New("a gzip file that holds no tar archive")

func (e *FormatError) Error() string {
	return fmt.Sprintf("inspect %s: at offset %d: %s", location(e.Path, e.Member, e.Slice), e.Offset, e.Msg)
}

// Is lets callers test errors.Is(err, ErrMalformed).
func (e *FormatError) Is(target error) bool {
	return target == ErrMalformed || target == ErrNotTar && e.notTar
}

// location renders "file(member)" as ar, nm and ld print it, then the
// slice of a universal file: "file(member) [arm64 slice]".
func location(path, member, slice string) string {
	path = cmp.Or(path, "<input>")
	if member != "" {
		path += "(" + member + ")"
	}
	if slice != "" {
		path += " [" + slice + " slice]"
	}
	return path
}

// Malformed is the *FormatError of a parser (here or in package codeclass)
// that found bytes unlike their format at off; Annotate adds where.
func Malformed(off int64, format string, args ...any) *FormatError {
	return &FormatError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// Annotate fills in the context a low-level parser could not know. It only
// touches *FormatError values (from Malformed); other errors (I/O) are
// wrapped with the location instead.
func Annotate(err error, path, slice, member string, base int64) error {
	if err == nil {
		return nil
	}
	if fe, ok := errors.AsType[*FormatError](err); ok {
		fe.Path = cmp.Or(fe.Path, path)
		fe.Slice = cmp.Or(fe.Slice, slice)
		fe.Member = cmp.Or(fe.Member, member)
		fe.Offset += base
		return err
	}
	return fmt.Errorf("inspect %s: %w", location(path, member, slice), err)
}

// shift moves a *FormatError's offset from a sub-stream to its parent.
func shift(err error, base int64) error {
	if fe, ok := errors.AsType[*FormatError](err); ok {
		fe.Offset += base
	}
	return err
}
