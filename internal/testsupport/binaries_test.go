package testsupport_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestNoTrackedBinaries keeps compiled executables and objects out of the
// repository: a built osslcheck was once committed at the root and shipped
// in every clone, referenced by nothing. Fixtures under a testdata/
// directory are exempt; they are there to be read by tests.
func TestNoTrackedBinaries(t *testing.T) {
	root := testfixture.RepoRoot()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("git ls-files in %s: %v (not a git checkout?)", root, err)
	}
	files := 0
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" || underTestdata(name) {
			continue
		}
		files++
		kind, err := binaryKind(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			// A file listed but deleted in the work tree is not a binary in it.
			if os.IsNotExist(err) {
				continue
			}
			t.Fatalf("reading tracked file %s: %v", name, err)
		}
		if kind != "" {
			t.Errorf("tracked file %s is a compiled %s binary: build outputs are not committed (fixtures belong under testdata/)", name, kind)
		}
	}
	// A listing that names nothing would pass vacuously.
	if files < 10 {
		t.Fatalf("git ls-files named %d files outside testdata/:\n%s", files, out)
	}
}

// TestBinaryKind shows the detector knows each format it guards against.
func TestBinaryKind(t *testing.T) {
	pe := make([]byte, 0x48)
	copy(pe, "MZ")
	binary.LittleEndian.PutUint32(pe[0x3c:], 0x40)
	copy(pe[0x40:], "PE\x00\x00")
	for _, tc := range []struct {
		name, content, want string
	}{
		{"elf", "\x7fELF\x02\x01\x01", "ELF"},
		{"macho64", "\xcf\xfa\xed\xfe\x0c\x00\x00\x01", "Mach-O"},
		{"macho32", "\xce\xfa\xed\xfe\x07\x00\x00\x00", "Mach-O"},
		{"macho-be", "\xfe\xed\xfa\xcf\x01\x00\x00\x07", "Mach-O"},
		{"fat", "\xca\xfe\xba\xbe\x00\x00\x00\x02", "fat Mach-O"},
		{"fat64", "\xca\xfe\xba\xbf\x00\x00\x00\x02", "fat Mach-O"},
		{"pe", string(pe), "PE"},
		{"mz-text", "MZ is not always a PE header\n", ""},
		{"text", "package main\n", ""},
		{"short", "\x7f", ""},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.name)
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := binaryKind(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("binaryKind(%q) = %q, want %q", tc.name, got, tc.want)
			}
		})
	}
}

func underTestdata(name string) bool {
	for _, part := range strings.Split(name, "/") {
		if part == "testdata" {
			return true
		}
	}
	return false
}

// binaryKind names the executable or object format whose magic number
// opens the file at path, or returns "" for anything else.
func binaryKind(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", nil // a symlink's target is judged where it is tracked
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 4)
	n, err := io.ReadFull(f, head)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	head = head[:n]
	switch {
	case bytes.Equal(head, []byte("\x7fELF")):
		return "ELF", nil
	case bytes.Equal(head, []byte{0xfe, 0xed, 0xfa, 0xce}), bytes.Equal(head, []byte{0xfe, 0xed, 0xfa, 0xcf}),
		bytes.Equal(head, []byte{0xce, 0xfa, 0xed, 0xfe}), bytes.Equal(head, []byte{0xcf, 0xfa, 0xed, 0xfe}):
		return "Mach-O", nil
	case bytes.Equal(head, []byte{0xca, 0xfe, 0xba, 0xbe}), bytes.Equal(head, []byte{0xca, 0xfe, 0xba, 0xbf}):
		return "fat Mach-O", nil
	case bytes.Equal(head[:2], []byte("MZ")):
		// "MZ" alone is two printable letters; a PE image also has the
		// "PE\0\0" signature where e_lfanew (at 0x3c) points.
		var off [4]byte
		if _, err := f.ReadAt(off[:], 0x3c); err != nil {
			return "", nil
		}
		var sig [4]byte
		if _, err := f.ReadAt(sig[:], int64(binary.LittleEndian.Uint32(off[:]))); err != nil {
			return "", nil
		}
		if string(sig[:]) == "PE\x00\x00" {
			return "PE", nil
		}
	}
	return "", nil
}
