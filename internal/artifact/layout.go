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
	"path/filepath"
	"strings"
)

// Libraries are the static libraries every artifact holds under lib/.
var Libraries = []string{"libcrypto.a", "libssl.a"}

// Layout copies the installed tree stage+prefix into dst (which must not
// exist), keeping only include/ and lib/ (libraries, pkgconfig, cmake), and
// rewrites pkgconfig files to be relocatable. It returns the relative paths
// copied.
func Layout(stage, prefix, dst string) ([]string, error) {
	root := filepath.Join(stage, prefix)
	if _, err := os.Stat(filepath.Join(root, "lib", "libcrypto.a")); err != nil {
		return nil, fmt.Errorf("artifact layout: staged install has no lib/libcrypto.a under %s: %w", root, err)
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
			out := filepath.Join(dst, rel)
			if d.IsDir() {
				return os.MkdirAll(out, 0o755)
			}
			if !d.Type().IsRegular() {
				return fmt.Errorf("artifact layout: %s is not a regular file", rel)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if strings.HasSuffix(p, ".pc") {
				if b, err = RelocatePC(b, prefix); err != nil {
					return fmt.Errorf("artifact layout: %s: %w", rel, err)
				}
			}
			files = append(files, filepath.ToSlash(rel))
			return os.WriteFile(out, b, 0o644)
		})
		if err != nil {
			return nil, fmt.Errorf("artifact layout: %w", err)
		}
	}
	return files, nil
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
	var b strings.Builder
	for {
		i := strings.Index(line, prefix)
		if i < 0 {
			b.WriteString(line)
			return b.String()
		}
		end := i + len(prefix)
		if end == len(line) || strings.ContainsRune("/\"' \n\t", rune(line[end])) {
			b.WriteString(line[:i] + "${prefix}")
		} else {
			b.WriteString(line[:end])
		}
		line = line[end:]
	}
}

// SBOMName is the CycloneDX SBOM's file name inside an artifact (package
// sbom writes it).
const SBOMName = "sbom.json"
