package testfixture

import (
	"debug/macho"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Hand-made and compiled inputs that inspect's and codeclass's tests and
// fuzzers share. This package cannot import inspect (inspect's own tests
// import it), so the Mach-O and ar numbers are written out here.

const (
	lcBuildVersion     macho.LoadCmd = 0x32
	lcVersionMinMacOSX macho.LoadCmd = 0x24
	platformMacOS                    = 1
	arMagic                          = "!<arch>\n"
)

// MachOObject is a minimal 64-bit little-endian arm64 MH_OBJECT with one
// deployment-target load command (ntools 0 for LC_BUILD_VERSION).
func MachOObject(t testing.TB, cmd macho.LoadCmd, platform, minos uint32) []byte {
	t.Helper()
	le := binary.LittleEndian
	var lc []byte
	switch cmd {
	case lcBuildVersion:
		lc = make([]byte, 24)
		le.PutUint32(lc[8:], platform)
		le.PutUint32(lc[12:], minos)
		le.PutUint32(lc[16:], 0x000e0000) // sdk 14.0
	default:
		lc = make([]byte, 16)
		le.PutUint32(lc[8:], minos)
	}
	le.PutUint32(lc[0:], uint32(cmd))
	le.PutUint32(lc[4:], uint32(len(lc)))
	h := make([]byte, 32)
	le.PutUint32(h[0:], macho.Magic64)
	le.PutUint32(h[4:], uint32(macho.CpuArm64))
	le.PutUint32(h[12:], uint32(macho.TypeObj))
	le.PutUint32(h[16:], 1)
	le.PutUint32(h[20:], uint32(len(lc)))
	return append(h, lc...)
}

// ArEntry is one member for BuildAr.
type ArEntry struct {
	Name string // written verbatim into the 16-byte name field
	Data []byte
}

// BuildAr writes an ar archive with the entries' names verbatim, 2-byte
// aligned with '\n' padding as ar does.
func BuildAr(entries ...ArEntry) []byte {
	b := []byte(arMagic)
	for _, e := range entries {
		b = append(b, fmt.Sprintf("%-16s%-12s%-6s%-6s%-8s%-10d`\n", e.Name, "0", "0", "0", "644", len(e.Data))...)
		b = append(b, e.Data...)
		if len(b)%2 == 1 {
			b = append(b, '\n')
		}
	}
	return b
}

// BigEndian32 is a 32-bit big-endian (PowerPC) object with LC_VERSION_MIN_MACOSX 10.4.
func BigEndian32() []byte {
	be := binary.BigEndian
	b := make([]byte, 28+16)
	be.PutUint32(b, macho.Magic32)
	be.PutUint32(b[4:], uint32(macho.CpuPpc))
	be.PutUint32(b[12:], uint32(macho.TypeObj))
	be.PutUint32(b[16:], 1)
	be.PutUint32(b[20:], 16)
	be.PutUint32(b[28:], uint32(lcVersionMinMacOSX))
	be.PutUint32(b[32:], 16)
	be.PutUint32(b[36:], 0x000a0400)
	return b
}

// RealSeeds compiles a universal static library, its thin archives (BSD and
// GNU) and the objects, when the cross toolchain is present. The fuzzers run
// without it on the synthetic seeds alone, so they never skip.
func RealSeeds(f *testing.F) (objs, archives, fats [][]byte) {
	for _, tool := range []string{"clang-14", "llvm-ar-14", "llvm-lipo-14"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, nil, nil
		}
	}
	tc := NeedToolchain(f)
	d := f.TempDir()
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	arm := tc.Compile(f, d, "arm64-apple-macos11", "cv", CVersionSrc(Arm64Line, "darwin64-arm64-cc"))
	x := filepath.Join(d, "x")
	if err := os.Mkdir(x, 0o755); err != nil {
		f.Fatal(err)
	}
	x86 := tc.Compile(f, x, "x86_64-apple-macos10.12", LongName, PlainSrc)
	bsdA := tc.Archive(f, "darwin", false, filepath.Join(d, "a.a"), arm)
	bsdX := tc.Archive(f, "darwin", true, filepath.Join(d, "x.a"), x86)
	gnu := tc.Archive(f, "gnu", false, filepath.Join(d, "g.a"), arm, x86)
	fat := tc.LipoCreate(f, filepath.Join(d, "fat.a"), bsdA, bsdX)
	return [][]byte{read(arm), read(x86)}, [][]byte{read(bsdA), read(bsdX), read(gnu)}, [][]byte{read(fat)}
}

// SynthArchives are hand-made ar archives: the bare magic, a BSD one with a
// "#1/N" long name, a GNU one with a "//" table and a member that is no
// object.
func SynthArchives(t testing.TB) [][]byte {
	obj := MachOObject(t, lcBuildVersion, platformMacOS, 0x000b0000)
	return [][]byte{
		[]byte(arMagic),
		BuildAr(ArEntry{"__.SYMDEF SORTED", []byte{0, 0, 0, 0}}, ArEntry{"#1/8", append([]byte("a.o\x00\x00\x00\x00\x00"), obj...)}),
		BuildAr(ArEntry{"/", []byte{0, 0, 0, 0}}, ArEntry{"//", []byte("long_member_name.o/\n")}, ArEntry{"/0", obj}, ArEntry{"b.o/", []byte("x")}),
	}
}
