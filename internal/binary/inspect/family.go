package inspect

import (
	"bytes"
	"io"
	"regexp"
	"strings"
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
// library's own version number, when it has one.
var families = []struct {
	re     *regexp.Regexp
	family Family
}{
	{regexp.MustCompile(`^OpenSSL [0-9]+\.[0-9]+\.[0-9]+[a-z]{0,2} \(compatible; BoringSSL\)()$`), FamilyBoringSSL},
	{regexp.MustCompile(`^OpenSSL [0-9]+\.[0-9]+\.[0-9]+[a-z]{0,2} \(compatible; AWS-LC (?:FIPS )?([0-9]+\.[0-9]+\.[0-9]+)\)$`), FamilyAWSLC},
	{regexp.MustCompile(`^AWS-LC (?:FIPS )?([0-9]+\.[0-9]+\.[0-9]+)$`), FamilyAWSLC},
	{regexp.MustCompile(`^LibreSSL ([0-9]+\.[0-9]+\.[0-9]+)$`), FamilyLibreSSL},
	// OPENSSL_VERSION_TEXT: "OpenSSL {full_version} {release_date}", with
	// full_version MAJOR.MINOR.PATCH[-pre][+build] (1.1.1 style letter
	// suffixes too) and release_date "25 Aug 2026" or "xx XXX xxxx" in dev
	// trees. 1.1.1 put two spaces before a one-digit day, hence " +".
	{regexp.MustCompile(`^OpenSSL ([0-9]+\.[0-9]+\.[0-9]+[a-z]{0,2}(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?) +(?:[0-9]{1,2} [A-Z][a-z]{2} [0-9]{4}|xx XXX xxxx)$`), FamilyOpenSSL},
}

// FamilyOf returns the library a version string names and that library's
// own version number ("4.0.2" for "OpenSSL 4.0.2 25 Aug 2026", "1.29.0"
// for AWS-LC, "" for BoringSSL, which has none). Family is "" when s is no
// version string.
func FamilyOf(s string) (Family, string) {
	for _, f := range families {
		if m := f.re.FindStringSubmatch(s); m != nil {
			return f.family, m[1]
		}
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
	for i < len(b) && i < 256 {
		if !pathByte(b[i]) && b[i] != '\\' {
			break
		}
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
var openSSLSources = []string{"ssl/ssl_lib.c", "ssl/statem/statem.c", "crypto/cryptlib.c", "crypto/evp/evp_enc.c", "crypto/err/err.c"}

// pathByte reports whether c may be part of a source path as builds write
// them.
func pathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/'
}

// FamilyByMarker returns the library whose source paths b holds, with the
// path's start ("boringssl/crypto/", or OpenSSL's "ssl/ssl_lib.c"), or ""
// when none does; a fork's marker wins over OpenSSL's own paths, which
// forks keep. It is for slices without a version string; one that has one
// is named by FamilyOf.
func FamilyByMarker(b []byte) (Family, string) {
	if f, m := forkByMarker(b); f != "" {
		return f, m
	}
	for _, p := range openSSLSources {
		needle := []byte(p + "\x00")
		for off := 0; ; {
			i := bytes.Index(b[off:], needle)
			if i < 0 {
				break
			}
			i += off
			if i > 0 && (b[i-1] == '/' || !pathByte(b[i-1])) {
				return FamilyOpenSSL, p
			}
			off = i + 1
		}
	}
	return "", ""
}

func forkByMarker(b []byte) (Family, string) {
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
					return m.family, spelled + sub
				}
			}
		}
	}
	return "", ""
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

// familyByMarkerAt is FamilyByMarker over r, read in chunks that overlap by
// a needle's length, so a marker across two reads is still seen.
func familyByMarkerAt(r io.ReaderAt, size int64, buf []byte) (Family, string, error) {
	const overlap = 512 // longer than a marker and the path after it
	for off := int64(0); off < size; off += int64(len(buf) - overlap) {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if err != nil && err != io.EOF {
			return "", "", err
		}
		if f, m := FamilyByMarker(buf[:n]); f != "" {
			return f, m, nil
		}
		if off+int64(n) >= size {
			break
		}
	}
	return "", "", nil
}
