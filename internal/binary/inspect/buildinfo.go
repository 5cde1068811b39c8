package inspect

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// BuildInfoKind says which OpenSSL build-info string was found.
type BuildInfoKind string

// The strings util/mkbuildinf.pl and crypto/cversion.c put into libcrypto.
const (
	InfoCompiler   BuildInfoKind = "compiler"   // "compiler: cc -fPIC -arch arm64 -O3 ..."
	InfoPlatform   BuildInfoKind = "platform"   // "platform: darwin64-arm64-cc"
	InfoBuiltOn    BuildInfoKind = "built on"   // "built on: Thu Jan  1 00:00:00 1970 UTC"
	InfoVersion    BuildInfoKind = "version"    // "OpenSSL 4.0.2 25 Aug 2026" (OPENSSL_VERSION_TEXT)
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
}

// maxPrefix is the longest prefix: a sliding window keeps this many bytes.
const maxPrefix = len("OPENSSLDIR: ")

// versionRE is OPENSSL_VERSION_TEXT: "OpenSSL {full_version} {release_date}",
// with full_version MAJOR.MINOR.PATCH[-pre][+build] (1.1.1 style letter
// suffixes too) and release_date "25 Aug 2026" or "xx XXX xxxx" in dev trees.
// 1.1.1 put two spaces before a one-digit day, hence " +".
var versionRE = regexp.MustCompile(`^OpenSSL [0-9]+\.[0-9]+\.[0-9]+[a-z]{0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)? +([0-9]{1,2} [A-Z][a-z]{2} [0-9]{4}|xx XXX xxxx)$`)

// ScanBuildInfo reads r from start to end, as strings(1) would, and returns
// the OpenSSL build-info strings in it. A string is a run of printable ASCII
// (and tab) bytes; only runs that start with a known prefix are kept, so
// memory is bounded by MaxBuildInfoLen whatever the input.
func ScanBuildInfo(r io.Reader) ([]BuildInfo, error) {
	return new(scanner).scan(r)
}

// scanner holds the read buffer so that scanning the thousand members of a
// libcrypto.a reuses one buffer instead of allocating one per member.
type scanner struct {
	buf, run []byte
}

func (sc *scanner) scan(r io.Reader) ([]BuildInfo, error) {
	if sc.buf == nil {
		sc.buf, sc.run = make([]byte, 64<<10), make([]byte, 0, 256)
	}
	var (
		found  []BuildInfo
		run    = sc.run[:0]
		runOff int64 // file offset of run[0]
		inRun  bool
		trunc  bool
		pos    int64
	)
	flush := func() {
		if len(run) > 0 {
			if bi, at, ok := find(run); ok {
				bi.Offset, bi.Truncated = runOff+int64(at), trunc
				found = append(found, bi)
			}
		}
		run, inRun, trunc = run[:0], false, false
	}
	defer func() { sc.run = run[:0] }()
	for {
		n, err := r.Read(sc.buf)
		for i, c := range sc.buf[:n] {
			if c >= 0x20 && c <= 0x7e || c == '\t' {
				if !inRun {
					inRun, runOff = true, pos+int64(i)
				}
				if trunc {
					continue
				}
				if len(run) >= MaxBuildInfoLen {
					// Too long: if a prefix is in it, keep what we have and
					// mark it cut; if not, slide the window so a prefix that
					// straddles the cut can still be seen.
					if _, _, ok := find(run); ok {
						trunc = true
						continue
					}
					keep := maxPrefix - 1
					runOff += int64(len(run) - keep)
					run = append(run[:0], run[len(run)-keep:]...)
				}
				run = append(run, c)
				continue
			}
			if inRun {
				flush()
			}
		}
		pos += int64(n)
		if err == io.EOF {
			if inRun {
				flush()
			}
			return found, nil
		}
		if err != nil {
			return found, fmt.Errorf("scan for build info at offset %d: %w", pos, err)
		}
	}
}

// find locates the first build-info string inside a printable run. A prefix
// need not start the run: clang places buildinf.h's compiler_flags array
// right after other constant data, and a printable byte before it (a jump
// table's '$' in 4.0.2's arm64 cversion.o) joins the run, as it would for
// strings(1). See junkBefore for what may precede it.
func find(run []byte) (BuildInfo, int, bool) {
	s := string(run)
	for off := 0; off < len(s); {
		best := -1
		for _, p := range infoPrefixes {
			if i := strings.Index(s[off:], p.prefix); i >= 0 && (best < 0 || i < best) {
				best = i
			}
		}
		if best < 0 {
			return BuildInfo{}, 0, false
		}
		at := off + best
		if junkBefore(s[:at]) {
			if bi, ok := classify(s[at:]); ok {
				return bi, at, true
			}
		}
		off = at + 1
	}
	return BuildInfo{}, 0, false
}

func classify(s string) (BuildInfo, bool) {
	for _, p := range infoPrefixes {
		if !strings.HasPrefix(s, p.prefix) {
			continue
		}
		if p.kind == InfoVersion {
			if !versionRE.MatchString(s) {
				return BuildInfo{}, false
			}
			return BuildInfo{Kind: p.kind, Text: s, Value: s}, true
		}
		return BuildInfo{Kind: p.kind, Text: s, Value: s[len(p.prefix):]}, true
	}
	return BuildInfo{}, false
}

// junkBefore reports whether what precedes a prefix in its run can be
// stray constant bytes rather than text: a few bytes, none a letter, digit
// or space ("$" passes; "the compiler: " and "xcompiler: " do not).
func junkBefore(pre string) bool {
	if len(pre) > 8 {
		return false
	}
	for _, c := range pre {
		if c == ' ' || c == '\t' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return false
		}
	}
	return true
}
