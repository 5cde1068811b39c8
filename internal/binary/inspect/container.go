package inspect

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
)

// Containers: a zip (Python wheel) or a gzip stream (an osslbuild .tar.gz)
// holds files, not architecture slices, so Inspect refuses them with
// ErrContainer and WalkZip / WalkTarGz hand their members, one at a time, to
// the caller. Members arrive as bounded streams: nothing here reads a member
// into memory, and every decompressed byte counts against Limits, so a zip
// bomb or a tar with a terabyte member costs at most the limits' worth of
// CPU before it is refused.

const (
	FormatZip  Format = "zip"  // a zip archive, e.g. a Python wheel
	FormatGzip Format = "gzip" // a gzip stream; Walk reads it as a tar.gz
)

// ErrContainer is returned by Inspect for a zip or gzip file. It matches
// errors.Is(err, ErrUnknownFormat) too: a container is not a binary.
var ErrContainer = fmt.Errorf("%w: an archive of files (zip or tar.gz), inspect its members", ErrUnknownFormat)

// ErrLimit is matched by every error saying an archive broke a Limits bound.
var ErrLimit = errors.New("archive exceeds a safety limit")

// Limits bound what walking one container may cost. Zero fields take the
// defaults below.
type Limits struct {
	MaxMembers     int   // entries in the archive
	MaxMemberBytes int64 // decompressed bytes of one member
	MaxTotalBytes  int64 // decompressed bytes of the whole archive (tar.gz: skipped members too, gunzip must inflate them)
	// MaxRatio bounds decompressed/compressed bytes once more than
	// RatioFloor bytes came out: binaries deflate 2-5x, deflate's ceiling
	// is about 1030x, so 100x is a bomb, not a library.
	MaxRatio int64
}

// Defaults: a 100 MB wheel or an 80 MB artifact tarball are far inside them.
const (
	DefaultMaxMembers     = 100_000
	DefaultMaxMemberBytes = 1 << 30
	DefaultMaxTotalBytes  = 4 << 30
	DefaultMaxRatio       = 100
	// RatioFloor: below this many decompressed bytes the ratio is not
	// judged (a small, very regular text file may well deflate 200x).
	RatioFloor = 16 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxMembers <= 0 {
		l.MaxMembers = DefaultMaxMembers
	}
	if l.MaxMemberBytes <= 0 {
		l.MaxMemberBytes = DefaultMaxMemberBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = DefaultMaxRatio
	}
	return l
}

// Member is one entry of a container, as WalkZip and WalkTarGz offer it:
// a regular file, or (Type set, no bytes) a link or special file, so that
// a caller verifying the archive's contents sees it. Directories are not
// offered.
type Member struct {
	Name string // as stored in the archive
	Size int64  // declared uncompressed size (the stream is still bounded by Limits)
	// Tar is the whole header of a tar entry (type, mode, times, owner,
	// PAX records), nil for other containers.
	Tar *tar.Header
	// Type is "" for a regular file, else what the entry is ("symlink to
	// /etc/hostname", "hard link to a/b", "named pipe (FIFO)", ...); such
	// an entry has no bytes.
	Type string
}

// WalkFunc receives each member with a stream of its bytes. It may read
// any prefix (for instance 8 bytes of magic) and return: the rest is
// skipped. An error stops the walk and is returned as is.
type WalkFunc func(m Member, r io.Reader) error

// memberReader counts one member's bytes against the per-member and total
// limits, and the ratio against its compressed size when known.
type memberReader struct {
	r          io.Reader
	ctx        context.Context
	where      string // "file(member)" for messages
	lim        Limits
	n          int64  // bytes read from this member
	total      *int64 // bytes read from every member
	compressed int64  // compressed size, <= 0 when not judged per member
}

func (m *memberReader) Read(p []byte) (int, error) {
	if err := m.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := m.r.Read(p)
	m.n += int64(n)
	*m.total += int64(n)
	switch {
	case m.n > m.lim.MaxMemberBytes:
		return n, fmt.Errorf("inspect %s: %w: member decompresses to more than %d bytes (per-member limit)", m.where, ErrLimit, m.lim.MaxMemberBytes)
	case *m.total > m.lim.MaxTotalBytes:
		return n, fmt.Errorf("inspect %s: %w: archive decompresses to more than %d bytes (total limit)", m.where, ErrLimit, m.lim.MaxTotalBytes)
	case m.compressed > 0 && m.n > RatioFloor && m.n/m.compressed > m.lim.MaxRatio:
		return n, fmt.Errorf("inspect %s: %w: member inflates %d compressed bytes to more than %d (ratio above %d:1, a zip bomb?)", m.where, ErrLimit, m.compressed, m.n, m.lim.MaxRatio)
	}
	return n, err
}
