// Package artifact turns a staged install into an osslbuild artifact: pyca's
// layout (include/, lib/libcrypto.a, lib/libssl.a, lib/pkgconfig/*.pc,
// lib/cmake/OpenSSL/*), relocatable metadata, a manifest, a deterministic
// tarball with its .sha256, published atomically into the output directory.
package artifact

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/osslbuild/osslbuild/internal/platform"
)

// Libraries are the static libraries an artifact of static libraries
// holds under lib/ (platform.Slice.Libraries names a slice's own).
var Libraries = platform.StaticLibraries

// Layout copies the installed tree stage+prefix into dst (which must not
// exist), keeping only include/ and lib/ (libraries, pkgconfig, cmake), and
// rewrites pkgconfig files to be relocatable. It returns the relative paths
// copied.
//
// For a slice of shared libraries the versioned dylibs are copied and the
// unversioned names OpenSSL installs as links (libcrypto.dylib) are not:
// an artifact holds no links, since a tarball, a zip or a wheel carries
// them badly and delocate copies files. The .pc files then name the
// dylibs by path instead of -lcrypto, which without the link would find
// nothing (or the static archive); the static archives are left out unless
// the recipe ships them too.
func Layout(stage, prefix, dst string, s platform.Slice) ([]string, error) {
	root := filepath.Join(stage, prefix)
	libs := s.Libraries()
	for _, lib := range libs {
		if fi, err := os.Lstat(filepath.Join(root, "lib", lib)); err != nil || !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("artifact layout: staged install has no lib/%s under %s (a regular file)", lib, root)
		}
	}
	// libcrypto.dylib -> libcrypto.3.dylib, libcrypto.so -> libcrypto.so.3:
	// the links OpenSSL installs in lib/.
	unversioned := map[string]string{}
	if s.Shared != nil {
		f := s.Format()
		for _, n := range []string{"libcrypto", "libssl"} {
			unversioned[f.SharedLink(n)] = f.SharedFile(n, s.Shared.Version)
		}
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return nil, fmt.Errorf("artifact layout: %w", err)
	}
	var files []string
	for _, top := range []string{"include", "lib"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			slash := filepath.ToSlash(rel)
			out := filepath.Join(dst, rel)
			if d.IsDir() {
				return os.MkdirAll(out, 0o755)
			}
			if want, ok := unversioned[strings.TrimPrefix(slash, "lib/")]; ok && d.Type()&fs.ModeSymlink != 0 {
				if to, err := os.Readlink(p); err != nil || to != want {
					return fmt.Errorf("artifact layout: %s links to %q, want %s", rel, to, want)
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return fmt.Errorf("artifact layout: %s is not a regular file", rel)
			}
			if s.Shared != nil && !s.Shared.Static && strings.HasPrefix(slash, "lib/") && strings.HasSuffix(slash, ".a") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if strings.HasSuffix(p, ".pc") {
				if b, err = RelocatePC(b, prefix); err != nil {
					return fmt.Errorf("artifact layout: %s: %w", rel, err)
				}
				if s.Shared != nil {
					b = sharedPC(b, s)
				}
			}
			if s.Shared != nil && strings.HasPrefix(slash, "lib/cmake/") {
				// OpenSSL's CMake config imports the unversioned names,
				// which an artifact does not hold.
				for from, to := range unversioned {
					b = replaceName(b, "/"+from, "/"+to)
				}
			}
			files = append(files, slash)
			mode := fs.FileMode(0o644)
			if s.IsShared(path.Base(slash)) {
				mode = 0o755
			}
			return os.WriteFile(out, b, mode)
		})
		if err != nil {
			return nil, fmt.Errorf("artifact layout: %w", err)
		}
	}
	return files, nil
}

// sharedPC names the shared libraries by path on a .pc file's Libs line:
// "-L${libdir} -lcrypto" becomes "${libdir}/libcrypto.3.dylib" (or
// "${libdir}/libcrypto.so.3").
func sharedPC(b []byte, s platform.Slice) []byte {
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Libs:"); ok {
			var words []string
			for _, w := range strings.Fields(rest) {
				switch w {
				case "-L${libdir}":
					continue
				case "-lcrypto", "-lssl":
					w = "${libdir}/" + s.Format().SharedFile("lib"+strings.TrimPrefix(w, "-l"), s.Shared.Version)
				}
				words = append(words, w)
			}
			line = "Libs: " + strings.Join(words, " ") + "\n"
		}
		out.WriteString(line)
	}
	return out.Bytes()
}

// replaceName replaces the file name from where it stands whole: not
// where it begins a longer name ("/libcrypto.so" in "/libcrypto.so.3").
func replaceName(b []byte, from, to string) []byte {
	return []byte(replaceWhole(string(b), from, to, func(c byte) bool { return !nameByte(c) }))
}

func nameByte(c byte) bool {
	return c == '.' || c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// RelocatePC rewrites a pkg-config file installed under prefix so that its
// prefix is computed from the file's own location (lib/pkgconfig/x.pc ->
// ${pcfiledir}/../..). Any other absolute mention of prefix becomes
// ${prefix}; OPENSSLDIR-style paths outside the prefix are left alone.
func RelocatePC(b []byte, prefix string) ([]byte, error) {
	var out bytes.Buffer
	found := false
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "prefix="); ok {
			if strings.TrimSpace(v) != prefix {
				return nil, fmt.Errorf("prefix is %q, want %q", strings.TrimSpace(v), prefix)
			}
			found = true
			out.WriteString("prefix=${pcfiledir}/../..\n")
			continue
		}
		out.WriteString(replacePrefix(line, prefix))
	}
	if !found {
		return nil, fmt.Errorf("no prefix= line")
	}
	return out.Bytes(), nil
}

// replacePrefix replaces prefix when it appears as a whole path (followed
// by "/", quote, space or end of line).
func replacePrefix(line, prefix string) string {
	return replaceWhole(line, prefix, "${prefix}", func(c byte) bool { return strings.ContainsRune("/\"' \n\t", rune(c)) })
}

// replaceWhole replaces each from in s by to where it stands whole: at the
// end of s, or followed by a byte that ends accepts.
func replaceWhole(s, from, to string, ends func(c byte) bool) string {
	var b strings.Builder
	for {
		i := strings.Index(s, from)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(from)
		if end == len(s) || ends(s[end]) {
			b.WriteString(s[:i] + to)
		} else {
			b.WriteString(s[:end])
		}
		s = s[end:]
	}
}

// SBOMName is the CycloneDX SBOM's file name inside an artifact (package
// sbom writes it).
const SBOMName = "sbom.json"
