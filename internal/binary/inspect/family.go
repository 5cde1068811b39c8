package inspect

import (
	"bytes"
	"io"
	"path"
	"regexp"
	"strings"

	"github.com/osslbuild/osslbuild/internal/osslver"
)

// Family is the library an OpenSSL-compatible version string names.
type Family string

const (
	FamilyOpenSSL   Family = "OpenSSL"
	FamilyBoringSSL Family = "BoringSSL"
	FamilyLibreSSL  Family = "LibreSSL"
	FamilyAWSLC     Family = "AWS-LC"
)

// families match the version strings each library compiles in, forks
// first: BoringSSL and AWS-LC define OPENSSL_VERSION_TEXT as "OpenSSL 1.1.1
// (compatible; ...)", which is not an OpenSSL release. Group 1 is the
// OpenSSL version number the string states, when it states one, held to
// osslver's grammar (a release's for a fork); own is the group of the
// library's own version number, 0 when it has none.
var families = []struct {
	re      *regexp.Regexp
	family  Family
	openssl bool // group 1 is an OpenSSL version number
	own     int
}{
	{regexp.MustCompile(`^OpenSSL (\S+) \(compatible; BoringSSL\)$`), FamilyBoringSSL, true, 0},
	{regexp.MustCompile(`^OpenSSL (\S+) \(compatible; AWS-LC (?:FIPS )?([0-9]+\.[0-9]+\.[0-9]+)\)$`), FamilyAWSLC, true, 2},
	{regexp.MustCompile(`^AWS-LC (?:FIPS )?([0-9]+\.[0-9]+\.[0-9]+)$`), FamilyAWSLC, false, 1},
	{regexp.MustCompile(`^LibreSSL ([0-9]+\.[0-9]+\.[0-9]+)$`), FamilyLibreSSL, false, 1},
	// OPENSSL_VERSION_TEXT: "OpenSSL {full_version} {release_date}", with
	// full_version MAJOR.MINOR.PATCH[-pre][+build] (1.1.1 style letter
	// suffixes too) and release_date "25 Aug 2026" or "xx XXX xxxx" in dev
	// trees. 1.1.1 put two spaces before a one-digit day, hence " +".
	{regexp.MustCompile(`^OpenSSL (\S+) +(?:[0-9]{1,2} [A-Z][a-z]{2} [0-9]{4}|xx XXX xxxx)$`), FamilyOpenSSL, true, 1},
}

// FamilyOf returns the library a version string names and that library's
// own version number ("4.0.2" for "OpenSSL 4.0.2 25 Aug 2026", "1.29.0"
// for AWS-LC, "" for BoringSSL, which has none). Family is "" when s is no
// version string.
func FamilyOf(s string) (Family, string) {
	for _, f := range families {
		m := f.re.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		if f.openssl {
			parse := osslver.Parse
			if f.family != FamilyOpenSSL {
				parse = osslver.ParseRelease
			}
			if _, err := parse(m[1]); err != nil {
				continue
			}
		}
		if f.own == 0 {
			return f.family, ""
		}
		return f.family, m[f.own]
	}
	return "", ""
}

// familyMarkers are directories only a fork's sources have, for a slice
// whose version string is gone: a program that never calls
// OpenSSL_version() lets the linker drop OPENSSL_VERSION_TEXT (Bun,
// WebRTC's Node-API modules). BoringSSL and AWS-LC record their source
// file names for OPENSSL_PUT_ERROR: ".../boringssl/crypto/...",
// ".../third_party/boringssl/src/crypto/...", ".../aws-lc/crypto/...",
// and under Bazel's modules "external/boringssl+/crypto/..." (Bazel 8) or
// "external/boringssl~/..." (Bazel 7; "boringssl~0.2024..." before). A
// marker is the fork's directory, whole (a "/" or no path byte before
// it), followed by one of its source directories and a whole C source
// path, so a string that merely names the fork (this program's own
// table, an error message, "notboringssl/") is not one.
var familyMarkers = []struct {
	dir    string
	family Family
}{
	{"boringssl", FamilyBoringSSL},
	{"aws-lc", FamilyAWSLC},
}

// forkSourceDirs may follow a fork's directory in a source path.
var forkSourceDirs = []string{"crypto/", "ssl/", "src/crypto/", "src/ssl/"}

// cSourcePath reports whether b starts with the rest of a C or C++ source
// file's path as __FILE__ puts it into a C binary: path bytes, a source
// extension, then the string's terminating NUL. (Go lays its string
// constants end to end with no NUL, so a program that merely holds the
// pieces of a marker, as this one does, has none.)
func cSourcePath(b []byte) bool {
	i := 0
	for i < len(b) && i < 256 && (pathByte(b[i]) || b[i] == '\\') {
		i++
	}
	if i == len(b) || b[i] != 0 {
		return false
	}
	p := b[:i]
	return bytes.HasSuffix(p, []byte(".c")) || bytes.HasSuffix(p, []byte(".cc")) || bytes.HasSuffix(p, []byte(".inc")) || bytes.HasSuffix(p, []byte(".h"))
}

// openSSLSources are files of OpenSSL's own tree whose names OpenSSL
// records for ERR_raise (OPENSSL_FILE): libssl.3.dylib, libssl.a and a
// program that links either statically hold "ssl/ssl_lib.c" though they
// hold no version string. Each is a path no other project has (statem is
// OpenSSL's state machine; BoringSSL's files are C++, .cc). Only a whole
// path counts: a NUL after it, and before it a "/" or a byte no path holds
// (a NUL, or, where the path opens GCC's string section in an ELF object,
// the last byte of the code before it).
//
// OpenSSL 1.0.2's makefiles compile each directory's files from inside
// it, so its __FILE__ names are bare ("s3_clnt.c", "ssl_lib.c"); its
// Windows makefiles compile from the top (".\ssl\s3_clnt.c"). The entries
// marked bare are files of 1.0.2's tree no other project has, and count
// bare too: libssl's SSLv3 state machine (s3_clnt.c, s3_srvr.c,
// s23_clnt.c, gone in 1.1.0) and ssl_lib.c, libcrypto's ENGINE core
// (eng_lib.c) and 1.0.x's FIPS switch (o_fips.c). (LibreSSL, forked from
// 1.0.1, kept some of them.) Every path counts with Windows' backslashes
// too.
var openSSLSources = []struct {
	path string
	bare bool
}{
	{"ssl/ssl_lib.c", true}, {"ssl/statem/statem.c", false}, {"crypto/cryptlib.c", false}, {"crypto/evp/evp_enc.c", false}, {"crypto/err/err.c", false},
	{"ssl/s3_clnt.c", true}, {"ssl/s3_srvr.c", true}, {"ssl/s23_clnt.c", true}, {"crypto/engine/eng_lib.c", true}, {"crypto/o_fips.c", true},
}

// sourceNeedle is one spelling of an openSSLSources path to search for,
// its terminating NUL included.
type sourceNeedle struct {
	needle []byte
	bare   bool // the file name alone: nothing of a path may precede it
}

var sourceNeedles = func() []sourceNeedle {
	var out []sourceNeedle
	for _, p := range openSSLSources {
		out = append(out, sourceNeedle{needle: []byte(p.path + "\x00")},
			sourceNeedle{needle: []byte(strings.ReplaceAll(p.path, "/", "\\") + "\x00")})
		if p.bare {
			out = append(out, sourceNeedle{needle: []byte(path.Base(p.path) + "\x00"), bare: true})
		}
	}
	return out
}()

// pathByte reports whether c may be part of a source path as builds write
// them.
func pathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/'
}

// markerHit is a marker found at Off in the bytes searched, N bytes long.
type markerHit struct {
	Off  int
	N    int
	Text string
}

// familyByMarker returns the library whose source paths b holds, with the
// path's start ("boringssl/crypto/", or OpenSSL's "ssl/ssl_lib.c"), or ""
// when none does; a fork's marker wins over OpenSSL's own paths, which
// forks keep. It is for slices without a version string, or whose version
// string alone does not show the library's code is there (libssl); one
// with libcrypto's build information is named by FamilyOf. It takes only
// markers whose bytes ok accepts (nil: all); the first it refused is
// returned too, when no marker was taken.
func familyByMarker(b []byte, ok func(off, n int) bool) (Family, string, *markerHit) {
	var refused *markerHit
	take := func(off, n int, text string) bool {
		if ok == nil || ok(off, n) {
			return true
		}
		if refused == nil {
			refused = &markerHit{Off: off, N: n, Text: text}
		}
		return false
	}
	// A fork's marker first: forks keep OpenSSL's paths.
	for _, m := range familyMarkers {
		dir := []byte(m.dir)
		for off := 0; ; {
			i := bytes.Index(b[off:], dir)
			if i < 0 {
				break
			}
			i += off
			off = i + 1
			if i > 0 && b[i-1] != '/' && b[i-1] != '\\' && pathByte(b[i-1]) {
				continue // "notboringssl/"
			}
			rest := b[i+len(dir):]
			n := bazelSuffix(rest)
			if n >= len(rest) || rest[n] != '/' && rest[n] != '\\' {
				continue
			}
			// Windows builds (MSVC's __FILE__) separate with backslashes.
			sep := rest[n]
			spelled := string(b[i : i+len(dir)+n+1])
			rest = rest[n+1:]
			for _, sub := range forkSourceDirs {
				sub = strings.ReplaceAll(sub, "/", string(sep))
				if bytes.HasPrefix(rest, []byte(sub)) && cSourcePath(rest) {
					end := bytes.IndexByte(rest, 0)
					if take(i, len(dir)+n+1+end, spelled+string(rest[:end])) {
						return m.family, spelled + sub, nil
					}
					break
				}
			}
		}
	}
	for _, p := range sourceNeedles {
		text := string(p.needle[:len(p.needle)-1])
		for off := 0; ; {
			i := bytes.Index(b[off:], p.needle)
			if i < 0 {
				break
			}
			i += off
			off = i + 1
			if i == 0 || pathByte(b[i-1]) && (p.bare || b[i-1] != '/') || p.bare && b[i-1] == '\\' {
				continue // inside a longer name or path
			}
			if take(i, len(text), text) {
				return FamilyOpenSSL, text, nil
			}
		}
	}
	return "", "", refused
}

// bazelSuffix is the length of the canonical-name suffix Bazel's modules
// add to a repository's directory ("+", "~", "~0.20240530.0", "+ext+x"),
// 0 when b starts with none.
func bazelSuffix(b []byte) int {
	if len(b) == 0 || b[0] != '+' && b[0] != '~' {
		return 0
	}
	n := 0
	for n < len(b) && n < 128 && (pathByte(b[n]) || b[n] == '+' || b[n] == '~') && b[n] != '/' {
		n++
	}
	return n
}

// familyByMarkerAt is familyByMarker over r, read in chunks that overlap
// by a needle's length, so a marker across two reads is still seen; ok
// and the hit refused take offsets from the start of r.
func familyByMarkerAt(r io.ReaderAt, size int64, buf []byte, ok func(off int64, n int) bool) (Family, string, *markerHit, error) {
	const overlap = 512 // longer than a marker and the path after it
	var refused *markerHit
	for off := int64(0); off < size; off += int64(len(buf) - overlap) {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if err != nil && err != io.EOF {
			return "", "", nil, err
		}
		var chunkOK func(int, int) bool
		if ok != nil {
			chunkOK = func(i, k int) bool { return ok(off+int64(i), k) }
		}
		f, m, h := familyByMarker(buf[:n], chunkOK)
		if f != "" {
			return f, m, nil, nil
		}
		if h != nil && refused == nil {
			refused = &markerHit{Off: int(off) + h.Off, N: h.N, Text: h.Text}
		}
		if off+int64(n) >= size {
			break
		}
	}
	return "", "", refused, nil
}
