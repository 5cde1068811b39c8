package inspect

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// BuildInfoKind says which OpenSSL build-info string was found.
type BuildInfoKind string

// The strings util/mkbuildinf.pl and crypto/cversion.c put into libcrypto
// (and the forks' OpenSSL_version() into theirs).
const (
	InfoCompiler   BuildInfoKind = "compiler"   // "compiler: cc -fPIC -arch arm64 -O3 ..."
	InfoPlatform   BuildInfoKind = "platform"   // "platform: darwin64-arm64-cc"
	InfoBuiltOn    BuildInfoKind = "built on"   // "built on: Thu Jan  1 00:00:00 1970 UTC"
	InfoVersion    BuildInfoKind = "version"    // "OpenSSL 4.0.2 25 Aug 2026" (OPENSSL_VERSION_TEXT), or a fork's; see FamilyOf
	InfoOpenSSLDir BuildInfoKind = "OPENSSLDIR" // `OPENSSLDIR: "/usr/local/ssl"`: leaks --openssldir
	InfoModulesDir BuildInfoKind = "MODULESDIR" // `MODULESDIR: "..."`: leaks --prefix
	InfoEnginesDir BuildInfoKind = "ENGINESDIR" // `ENGINESDIR: "..."` (or "N/A" from 4.0)
)

// BuildInfo is one build-info string and where it was found.
type BuildInfo struct {
	Kind      BuildInfoKind
	Text      string // the whole string, e.g. "compiler: cc -O3"
	Value     string // Text without its "compiler: "-style prefix (for InfoVersion, the same as Text)
	Member    string // archive member holding it, "" when the slice is not an archive
	Offset    int64  // offset in the scanned stream (Inspect: from the start of the file)
	Truncated bool   // the string was longer than MaxBuildInfoLen and was cut
}

// MaxBuildInfoLen bounds one build-info string. OpenSSL's compiler lines run
// to a few hundred bytes; anything near this limit is not a real one.
const MaxBuildInfoLen = 64 << 10

// Every prefix ends in a space: the scanner looks for spaces (one
// vectorised search over the bytes) and only then for a prefix ending there.
var infoPrefixes = []struct {
	prefix string
	kind   BuildInfoKind
}{
	{"compiler: ", InfoCompiler},
	{"platform: ", InfoPlatform},
	{"built on: ", InfoBuiltOn},
	{"OPENSSLDIR: ", InfoOpenSSLDir},
	{"MODULESDIR: ", InfoModulesDir},
	{"ENGINESDIR: ", InfoEnginesDir},
	{"OpenSSL ", InfoVersion},
	{"LibreSSL ", InfoVersion},
	{"AWS-LC ", InfoVersion}, // what AWS-LC's OpenSSL_version(OPENSSL_VERSION) returns
}

// maxPrefix is the longest prefix.
const maxPrefix = len("OPENSSLDIR: ")

// maxJunk is how many stray bytes may precede a prefix in its printable
// run; see junkBefore.
const maxJunk = 8

// lookback is how many bytes of the previous chunk a stream scan keeps: a
// prefix that straddles two reads, and the bytes before it, are still seen.
const lookback = maxPrefix + maxJunk + 1

// ScanBuildInfo reads r from start to end, as strings(1) would, and returns
// the OpenSSL build-info strings in it. A string is a run of printable ASCII
// (and tab) bytes; only runs that start with a known prefix are kept, so
// memory is bounded by MaxBuildInfoLen whatever the input.
func ScanBuildInfo(r io.Reader) ([]BuildInfo, error) {
	return new(scanner).scan(r)
}

// ScanBuildInfoBytes is ScanBuildInfo over bytes already in memory (a
// mapped file): nothing is copied but the strings found.
func ScanBuildInfoBytes(b []byte) []BuildInfo {
	var sc scanner
	sc.feed(b, 0, 0, true)
	return sc.found
}

// scanner finds build-info strings in a stream fed in chunks. Each byte is
// looked at once: a vectorised search for the next space, a look back of
// at most lookback bytes when a prefix ends there, and a walk forward over
// the string's own bytes, after which the search resumes past them.
type scanner struct {
	buf   []byte
	found []BuildInfo
	// A string whose run reached the end of a chunk: its bytes so far, the
	// stream offset where it starts, and whether it is past the limit
	// (then the rest of its run is skipped).
	open     bool
	cur      []byte
	curOff   int64
	curTrunc bool
}

func (sc *scanner) scan(r io.Reader) ([]BuildInfo, error) {
	if sc.buf == nil {
		sc.buf = make([]byte, lookback+64<<10)
	}
	sc.found, sc.open = nil, false
	var pos int64 // stream offset of the first new byte
	keep := 0     // bytes of the previous chunk at sc.buf[:keep]
	for {
		n, err := r.Read(sc.buf[keep:])
		if n > 0 {
			sc.feed(sc.buf[:keep+n], keep, pos-int64(keep), false)
			pos += int64(n)
			// Keep the last lookback bytes for the next chunk.
			end := keep + n
			k := min(end, lookback)
			copy(sc.buf, sc.buf[end-k:end])
			keep = k
		}
		if err == io.EOF {
			sc.feed(sc.buf[:keep], keep, pos-int64(keep), true)
			return sc.found, nil
		}
		if err != nil {
			return sc.found, fmt.Errorf("scan for build info at offset %d: %w", pos, err)
		}
	}
}

func isText(c byte) bool { return c >= 0x20 && c <= 0x7e || c == '\t' }

// feed scans data[from:]; data[:from] are earlier bytes kept for looking
// back, base is the stream offset of data[0] (so base 0 means data[0]
// starts the stream), final says no more bytes follow.
func (sc *scanner) feed(data []byte, from int, base int64, final bool) {
	i := from
	if sc.open {
		j := i
		for j < len(data) && isText(data[j]) {
			j++
		}
		if !sc.curTrunc {
			n := min(j-i, MaxBuildInfoLen-len(sc.cur))
			sc.cur = append(sc.cur, data[i:i+n]...)
			sc.curTrunc = n < j-i
		}
		if j == len(data) && !final {
			return // the run goes on in the next chunk
		}
		sc.emit(sc.cur, sc.curOff, sc.curTrunc)
		sc.open, sc.cur = false, sc.cur[:0]
		i = j
	}
	for i < len(data) {
		k := bytes.IndexByte(data[i:], ' ')
		if k < 0 {
			return
		}
		sp := i + k
		start := prefixEndingAt(data, sp)
		if start < 0 || !junkBefore(data, start) {
			i = sp + 1
			continue
		}
		// The string runs from start to the end of its printable run.
		j := sp + 1
		limit := min(len(data), start+MaxBuildInfoLen)
		for j < limit && isText(data[j]) {
			j++
		}
		switch {
		case j-start == MaxBuildInfoLen && j < len(data) && isText(data[j]):
			// Cut at the limit; skip the rest of the run.
			sc.emit(data[start:j], base+int64(start), true)
			for j < len(data) && isText(data[j]) {
				j++
			}
			if j == len(data) && !final {
				sc.open, sc.curTrunc, sc.cur = true, true, sc.cur[:0]
				return
			}
		case j == len(data) && !final:
			sc.open, sc.curTrunc, sc.curOff = true, false, base+int64(start)
			sc.cur = append(sc.cur[:0], data[start:j]...)
			return
		default:
			sc.emit(data[start:j], base+int64(start), false)
		}
		i = j
	}
}

// emit classifies a string found at off and keeps it when it is build info.
// A string already cut and emitted (open with curTrunc and no bytes) is not
// emitted twice.
func (sc *scanner) emit(s []byte, off int64, trunc bool) {
	if len(s) == 0 {
		return
	}
	if bi, ok := classify(string(s)); ok {
		bi.Offset, bi.Truncated = off, trunc
		sc.found = append(sc.found, bi)
	}
}

// prefixEndingAt returns where a known prefix ending with the space at sp
// starts, or -1.
func prefixEndingAt(data []byte, sp int) int {
	if sp == 0 {
		return -1
	}
	if c := data[sp-1]; c != ':' && c != 'L' && c != 'C' {
		return -1
	}
	for _, p := range infoPrefixes {
		start := sp + 1 - len(p.prefix)
		if start >= 0 && string(data[start:sp+1]) == p.prefix {
			return start
		}
	}
	return -1
}

// junkBefore reports whether what precedes a prefix in its printable run
// can be stray constant bytes rather than text: at most maxJunk bytes, none
// a letter, digit, space or tab ("$" passes; "the compiler: " and
// "xcompiler: " do not). A prefix need not start its run: clang places
// buildinf.h's compiler_flags array right after other constant data, and a
// printable byte before it (a jump table's '$' in 4.0.2's arm64
// cversion.o) joins the run, as it would for strings(1). A stream scan
// keeps lookback bytes before every chunk, so the walk back always ends
// inside data, or at the stream's first byte.
func junkBefore(data []byte, start int) bool {
	n := 0
	for k := start - 1; k >= 0 && isText(data[k]); k-- {
		c := data[k]
		if n == maxJunk || c == ' ' || c == '\t' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return false
		}
		n++
	}
	return true
}

func classify(s string) (BuildInfo, bool) {
	for _, p := range infoPrefixes {
		value, ok := strings.CutPrefix(s, p.prefix)
		if !ok {
			continue
		}
		if p.kind == InfoVersion {
			f, _ := FamilyOf(s)
			return BuildInfo{Kind: p.kind, Text: s, Value: s}, f != ""
		}
		return BuildInfo{Kind: p.kind, Text: s, Value: value}, true
	}
	return BuildInfo{}, false
}
