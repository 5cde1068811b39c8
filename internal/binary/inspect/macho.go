package inspect

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"slices"
)

// Load commands debug/macho leaves undecoded.
const (
	LCVersionMinMacOSX   macho.LoadCmd = 0x24
	LCVersionMinIPhoneOS macho.LoadCmd = 0x25
	LCVersionMinTVOS     macho.LoadCmd = 0x2f
	LCVersionMinWatchOS  macho.LoadCmd = 0x30
	LCBuildVersion       macho.LoadCmd = 0x32

	// Where the code classifier (package codeclass) finds function starts
	// and the data inside code.
	lcFunctionStarts macho.LoadCmd = 0x26
	lcDataInCode     macho.LoadCmd = 0x29

	// What a linked image says of itself and what it loads: its install
	// name, the dylibs it needs, its run-path list and its code signature.
	lcCodeSignature  macho.LoadCmd = 0x1d
	lcIDDylib        macho.LoadCmd = 0xd
	lcLoadDylib      macho.LoadCmd = 0xc
	lcLoadWeakDylib  macho.LoadCmd = 0x80000018
	lcReexportDylib  macho.LoadCmd = 0x8000001f
	lcLazyLoadDylib  macho.LoadCmd = 0x20
	lcLoadUpwardDyld macho.LoadCmd = 0x80000023
	lcRpath          macho.LoadCmd = 0x8000001c
)

// Dylib is a dylib as a load command names it: LC_ID_DYLIB (the image's
// own install name) or one it loads.
type Dylib struct {
	Cmd           string // "LC_ID_DYLIB", "LC_LOAD_DYLIB", "LC_LOAD_WEAK_DYLIB", ...
	Name          string
	Current       Version
	Compatibility Version
}

var dylibCmds = map[macho.LoadCmd]string{
	lcIDDylib: "LC_ID_DYLIB", lcLoadDylib: "LC_LOAD_DYLIB", lcLoadWeakDylib: "LC_LOAD_WEAK_DYLIB",
	lcReexportDylib: "LC_REEXPORT_DYLIB", lcLazyLoadDylib: "LC_LAZY_LOAD_DYLIB", lcLoadUpwardDyld: "LC_LOAD_UPWARD_DYLIB",
}

// maxSizeofcmds caps the load-command area we walk. Real objects have a few
// KiB of load commands, large dylibs some tens of KiB.
const maxSizeofcmds = 16 << 20

// Platform is a Mach-O build platform (PLATFORM_* in <mach-o/loader.h>).
type Platform uint32

// The values run from 1 without a gap, as <mach-o/loader.h> numbers them;
// platformNames names them all.
const (
	PlatformMacOS Platform = iota + 1
	PlatformIOS
	PlatformTVOS
	PlatformWatchOS
)

var platformNames = []string{1: "macOS", "iOS", "tvOS", "watchOS", "bridgeOS", "macCatalyst",
	"iOS simulator", "tvOS simulator", "watchOS simulator", "DriverKit", "visionOS", "visionOS simulator"}

func (p Platform) String() string {
	if p > 0 && int(p) < len(platformNames) {
		return platformNames[p]
	}
	return fmt.Sprintf("platform(%d)", uint32(p))
}

// Version is a Mach-O packed version, xxxx.yy.zz in nibbles: 0x000b0000 is 11.0.
type Version uint32

// String prints "11.0", "10.12", or "10.12.1" when the patch is non-zero,
// the way otool and vtool print minos and sdk.
func (v Version) String() string {
	if v == 0 {
		return "n/a"
	}
	s := fmt.Sprintf("%d.%d", v>>16, (v>>8)&0xff)
	if p := v & 0xff; p != 0 {
		s += fmt.Sprintf(".%d", p)
	}
	return s
}

// BuildVersion is a deployment target: an LC_BUILD_VERSION or an
// LC_VERSION_MIN_* command (the latter's platform is implied by its cmd).
type BuildVersion struct {
	Cmd      macho.LoadCmd
	Platform Platform
	MinOS    Version
	SDK      Version
}

var cmdNames = map[macho.LoadCmd]string{
	LCBuildVersion: "LC_BUILD_VERSION", LCVersionMinMacOSX: "LC_VERSION_MIN_MACOSX",
	LCVersionMinIPhoneOS: "LC_VERSION_MIN_IPHONEOS", LCVersionMinTVOS: "LC_VERSION_MIN_TVOS",
	LCVersionMinWatchOS: "LC_VERSION_MIN_WATCHOS",
}

// CmdName is "LC_BUILD_VERSION", "LC_VERSION_MIN_MACOSX", ...
func (b BuildVersion) CmdName() string {
	if s, ok := cmdNames[b.Cmd]; ok {
		return s
	}
	return fmt.Sprintf("LC(%#x)", uint32(b.Cmd))
}

// MachO holds the facts of one thin Mach-O file.
type MachO struct {
	Arch     string // "arm64", "x86_64", "arm64e", ...: the header's CPU type and subtype
	Type     macho.Type
	Is64     bool
	NCmds    uint32
	Flags    uint32         // the header's flags (MH_SUBSECTIONS_VIA_SYMBOLS, ...)
	Versions []BuildVersion // in load-command order
	Sections []Section      // of every LC_SEGMENT/LC_SEGMENT_64, in order: Sections[i] is n_sect i+1
	// Segments are the LC_SEGMENT/LC_SEGMENT_64 commands, in order: what
	// of the file the loader maps (a linked image's; an object has one
	// unnamed segment holding every section).
	Segments []Segment
	// TextAddr is the __TEXT segment's address (HasText): LC_FUNCTION_STARTS
	// and LC_DATA_IN_CODE count from it.
	TextAddr uint64
	HasText  bool
	// Symtab, FunctionStarts and DataInCode are where LC_SYMTAB's symbols
	// (Count: nsyms) and the other two commands' data (Count: bytes) lie in
	// the file; Present says the command was there.
	Symtab, FunctionStarts, DataInCode LinkEdit
	// Strtab is where LC_SYMTAB's string table lies (Count: bytes).
	Strtab LinkEdit
	// CodeSignature is where LC_CODE_SIGNATURE's blob lies (Count: bytes).
	CodeSignature LinkEdit
	// ID is the image's LC_ID_DYLIB (a dylib's install name), nil if none;
	// Loads the dylibs it loads, in order; Rpaths its LC_RPATH entries.
	ID     *Dylib
	Loads  []Dylib
	Rpaths []string
}

// LinkEdit locates a load command's table in the file.
type LinkEdit struct {
	Offset, Count uint32
	Present       bool
}

// Segment is one segment command: the file bytes it maps, at VMAddr.
type Segment struct {
	Name              string
	VMAddr            uint64
	FileOff, FileSize uint64
}

// Section is one Mach-O section header: where its bytes are in the file.
type Section struct {
	Segment, Name string
	Offset        uint32 // file offset; 0 for zero-fill sections
	Size          uint64
	Addr          uint64 // address (in an object, from 0)
	Flags         uint32 // type and attributes (S_ATTR_PURE_INSTRUCTIONS, ...)
	// RelOff and NReloc locate an object's relocations of the section
	// (8 bytes each): what a stripped object's __compact_unwind entries
	// point at.
	RelOff, NReloc uint32
}

var typeNames = map[macho.Type]string{
	macho.TypeObj: "object", macho.TypeExec: "executable", macho.TypeDylib: "dylib", macho.TypeBundle: "bundle",
	9: "dylib stub", 10: "dSYM",
}

// TypeName is "object", "dylib", "executable", ...
func (m *MachO) TypeName() string {
	if s, ok := typeNames[m.Type]; ok {
		return s
	}
	return fmt.Sprintf("filetype(%d)", uint32(m.Type))
}

// ArchNames are the architecture names Inspect gives slices: Mach-O's as
// lipo and -arch spell them, ELF's as the toolchains do.
func ArchNames() []string {
	names := append([]string{"arm64", "arm64e", "arm64_32", "x86_64", "x86_64h", "i386", "arm", "ppc", "ppc64"}, slices.Collect(maps.Values(elfArch))...)
	slices.Sort(names)
	return slices.Compact(names)
}

var cpuNames = map[macho.Cpu]string{
	macho.CpuArm64: "arm64", macho.CpuAmd64: "x86_64", macho.Cpu386: "i386", macho.CpuArm: "arm",
	0x0200000c: "arm64_32", macho.CpuPpc: "ppc", macho.CpuPpc64: "ppc64",
}

// CPUName names a Mach-O CPU type the way lipo and -arch do.
func CPUName(cpu macho.Cpu, sub uint32) string {
	sub &= 0x00ffffff // high byte holds capability bits (CPU_SUBTYPE_LIB64, ptrauth ABI)
	switch name, ok := cpuNames[cpu]; {
	case cpu == macho.CpuArm64 && sub == 2:
		return "arm64e"
	case cpu == macho.CpuAmd64 && sub == 8:
		return "x86_64h"
	case ok:
		return name
	}
	return fmt.Sprintf("cpu(%#x)", uint32(cpu))
}

// MachOByteOrder recognises the four thin Mach-O magics: the byte order,
// whether the file is 64-bit, and whether b starts with one at all.
func MachOByteOrder(b []byte) (binary.ByteOrder, bool, bool) {
	if len(b) < 4 {
		return nil, false, false
	}
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		switch bo.Uint32(b) {
		case macho.Magic32:
			return bo, false, true
		case macho.Magic64:
			return bo, true, true
		}
	}
	return nil, false, false
}

// ParseMachO reads a thin Mach-O header and walks its load commands,
// decoding the deployment-target commands. It reads the header and the
// load-command area (sizeofcmds bytes, checked against the file's size and
// maxSizeofcmds first), nothing else.
func ParseMachO(r io.ReaderAt, size int64) (*MachO, error) { return parseMachO(r, size, nil) }

// ParseMachOBytes is ParseMachO over an object in memory: the load
// commands are read in place, not copied.
func ParseMachOBytes(b []byte) (*MachO, error) {
	return parseMachO(bytes.NewReader(b), int64(len(b)), b)
}

// parseMachO is ParseMachO; data, when not nil, holds the object in memory
// (r reads the same bytes) and the load commands are read there in place.
func parseMachO(r io.ReaderAt, size int64, data []byte) (*MachO, error) {
	var hdr [32]byte
	if size < 28 {
		return nil, Malformed(0, "truncated Mach-O header: expected at least 28 bytes, found %d", size)
	}
	if _, err := r.ReadAt(hdr[:min(size, 32)], 0); err != nil {
		return nil, fmt.Errorf("read Mach-O header: %w", err)
	}
	bo, is64, ok := MachOByteOrder(hdr[:])
	if !ok {
		return nil, Malformed(0, "expected Mach-O magic 0xfeedface or 0xfeedfacf, found %#x", binary.BigEndian.Uint32(hdr[:]))
	}
	hdrSize := int64(28)
	if is64 {
		hdrSize = 32
		if size < hdrSize {
			return nil, Malformed(0, "truncated 64-bit Mach-O header: expected 32 bytes, found %d", size)
		}
	}
	m := &MachO{
		Arch:  CPUName(macho.Cpu(bo.Uint32(hdr[4:])), bo.Uint32(hdr[8:])),
		Type:  macho.Type(bo.Uint32(hdr[12:])),
		Is64:  is64,
		NCmds: bo.Uint32(hdr[16:]),
	}
	sizeofcmds := int64(bo.Uint32(hdr[20:]))
	if sizeofcmds > size-hdrSize {
		return nil, Malformed(20, "sizeofcmds %d runs past end of file: expected at most %d", sizeofcmds, size-hdrSize)
	}
	if sizeofcmds > maxSizeofcmds {
		return nil, Malformed(20, "sizeofcmds %d exceeds the %d-byte limit", sizeofcmds, maxSizeofcmds)
	}
	if int64(m.NCmds) > sizeofcmds/8 {
		return nil, Malformed(16, "ncmds %d cannot fit in sizeofcmds %d (each load command is at least 8 bytes)", m.NCmds, sizeofcmds)
	}
	var cmds []byte
	if data != nil && int64(len(data)) >= hdrSize+sizeofcmds {
		cmds = data[hdrSize : hdrSize+sizeofcmds]
	} else {
		cmds = make([]byte, sizeofcmds)
		// A ReaderAt may return io.EOF with every byte read (none, for an
		// empty load-command area at the end of the file).
		if n, err := r.ReadAt(cmds, hdrSize); err != nil && (err != io.EOF || n < len(cmds)) {
			return nil, fmt.Errorf("read Mach-O load commands: %w", err)
		}
	}
	m.Flags = bo.Uint32(hdr[24:])
	if err := loadCommands(m, cmds, bo); err != nil {
		return nil, shift(err, hdrSize)
	}
	return m, nil
}

// loadCommands decodes, among m.NCmds load commands in cmds (the
// sizeofcmds bytes that hold them), the deployment-target commands, the
// segments and their sections, and where the symbol table, function starts
// and data in code lie, into m. Offsets in errors are relative to the
// start of the load commands.
func loadCommands(m *MachO, cmds []byte, bo binary.ByteOrder) error {
	sizeofcmds := int64(len(cmds))
	off := int64(0)
	for i := uint32(0); i < m.NCmds; i++ {
		if sizeofcmds-off < 8 {
			return Malformed(off, "load command %d: expected an 8-byte header, %d bytes of sizeofcmds left", i, sizeofcmds-off)
		}
		cmd := macho.LoadCmd(bo.Uint32(cmds[off:]))
		cmdsize := int64(bo.Uint32(cmds[off+4:]))
		if cmdsize < 8 || cmdsize > sizeofcmds-off {
			return Malformed(off, "load command %d (cmd %#x): cmdsize %d: expected 8 to %d", i, uint32(cmd), cmdsize, sizeofcmds-off)
		}
		body := cmds[off+8 : off+cmdsize]
		if need := cmdBody[cmd]; len(body) < need {
			return Malformed(off, "load command %d (cmd %#x): cmdsize %d is too small: expected at least %d", i, uint32(cmd), cmdsize, need+8)
		}
		switch cmd {
		case macho.LoadCmdSegment64, macho.LoadCmdSegment:
			is64 := cmd == macho.LoadCmdSegment64
			ss, err := sections(body, bo, is64)
			if err != nil {
				return Malformed(off, "load command %d (segment): %v", i, err)
			}
			m.Sections = append(m.Sections, ss...)
			seg := Segment{Name: cstr(body[0:16]), VMAddr: uint64(bo.Uint32(body[16:])), FileOff: uint64(bo.Uint32(body[24:])), FileSize: uint64(bo.Uint32(body[28:]))}
			if is64 {
				seg.VMAddr, seg.FileOff, seg.FileSize = bo.Uint64(body[16:]), bo.Uint64(body[32:]), bo.Uint64(body[40:])
			}
			m.Segments = append(m.Segments, seg)
			if seg.Name == "__TEXT" {
				m.HasText, m.TextAddr = true, seg.VMAddr
			}
		case macho.LoadCmdSymtab:
			m.Symtab = LinkEdit{Offset: bo.Uint32(body[0:]), Count: bo.Uint32(body[4:]), Present: true}
			m.Strtab = LinkEdit{Offset: bo.Uint32(body[8:]), Count: bo.Uint32(body[12:]), Present: true}
		case lcFunctionStarts:
			m.FunctionStarts = LinkEdit{Offset: bo.Uint32(body[0:]), Count: bo.Uint32(body[4:]), Present: true}
		case lcDataInCode:
			m.DataInCode = LinkEdit{Offset: bo.Uint32(body[0:]), Count: bo.Uint32(body[4:]), Present: true}
		case lcCodeSignature:
			m.CodeSignature = LinkEdit{Offset: bo.Uint32(body[0:]), Count: bo.Uint32(body[4:]), Present: true}
		case lcIDDylib, lcLoadDylib, lcLoadWeakDylib, lcReexportDylib, lcLazyLoadDylib, lcLoadUpwardDyld:
			name, err := lcString(body, bo.Uint32(body[0:]))
			if err != nil {
				return Malformed(off, "load command %d (%s): %v", i, dylibCmds[cmd], err)
			}
			d := Dylib{Cmd: dylibCmds[cmd], Name: name, Current: Version(bo.Uint32(body[8:])), Compatibility: Version(bo.Uint32(body[12:]))}
			if cmd == lcIDDylib {
				if m.ID != nil {
					return Malformed(off, "load command %d: a second LC_ID_DYLIB", i)
				}
				m.ID = &d
			} else {
				m.Loads = append(m.Loads, d)
			}
		case lcRpath:
			p, err := lcString(body, bo.Uint32(body[0:]))
			if err != nil {
				return Malformed(off, "load command %d (LC_RPATH): %v", i, err)
			}
			m.Rpaths = append(m.Rpaths, p)
		case LCBuildVersion:
			m.Versions = append(m.Versions, BuildVersion{cmd, Platform(bo.Uint32(body[0:])), Version(bo.Uint32(body[4:])), Version(bo.Uint32(body[8:]))})
		case LCVersionMinMacOSX, LCVersionMinIPhoneOS, LCVersionMinTVOS, LCVersionMinWatchOS:
			m.Versions = append(m.Versions, BuildVersion{cmd, versionMinPlatform[cmd], Version(bo.Uint32(body[0:])), Version(bo.Uint32(body[4:]))})
		}
		off += cmdsize
	}
	return nil
}

// cmdBody is the least body (after cmd and cmdsize) of each load command
// loadCommands decodes.
var cmdBody = map[macho.LoadCmd]int{
	LCBuildVersion: 16, // platform, minos, sdk, ntools
	// version, sdk
	LCVersionMinMacOSX: 8, LCVersionMinIPhoneOS: 8, LCVersionMinTVOS: 8, LCVersionMinWatchOS: 8,
	macho.LoadCmdSegment64: 64, // segname .. flags; nsects at 56
	macho.LoadCmdSegment:   48, // nsects at 40
	macho.LoadCmdSymtab:    16, // symoff, nsyms, stroff, strsize
	// dataoff, datasize
	lcFunctionStarts: 8, lcDataInCode: 8, lcCodeSignature: 8,
	// name offset, timestamp, current, compatibility
	lcIDDylib: 16, lcLoadDylib: 16, lcLoadWeakDylib: 16, lcReexportDylib: 16, lcLazyLoadDylib: 16, lcLoadUpwardDyld: 16,
	lcRpath: 4, // path offset
}

// lcString is the NUL-terminated string a load command holds at offset
// off from the start of the command (its 8-byte header included).
func lcString(body []byte, off uint32) (string, error) {
	if off < 8 || int64(off)-8 >= int64(len(body)) {
		return "", fmt.Errorf("string offset %d outside the command's %d bytes", off, len(body)+8)
	}
	s, _, ok := bytes.Cut(body[off-8:], []byte{0})
	if !ok {
		return "", fmt.Errorf("string at offset %d is not NUL-terminated", off)
	}
	return string(s), nil
}

// sections decodes the section headers that follow a segment command's
// fixed part in body.
func sections(body []byte, bo binary.ByteOrder, is64 bool) ([]Section, error) {
	fixed, nsOff, hdr := 48, 40, 68
	if is64 {
		fixed, nsOff, hdr = 64, 56, 80
	}
	n := int(bo.Uint32(body[nsOff:]))
	if n > (len(body)-fixed)/hdr {
		return nil, fmt.Errorf("%d sections of %d bytes: expected at most %d bytes", n, hdr, len(body)-fixed)
	}
	out := make([]Section, 0, n)
	for k := 0; k < n; k++ {
		b := body[fixed+k*hdr:]
		s := Section{Name: cstr(b[0:16]), Segment: cstr(b[16:32])}
		if is64 {
			s.Addr, s.Size, s.Offset, s.Flags = bo.Uint64(b[32:]), bo.Uint64(b[40:]), bo.Uint32(b[48:]), bo.Uint32(b[64:])
			s.RelOff, s.NReloc = bo.Uint32(b[56:]), bo.Uint32(b[60:])
		} else {
			s.Addr, s.Size, s.Offset, s.Flags = uint64(bo.Uint32(b[32:])), uint64(bo.Uint32(b[36:])), bo.Uint32(b[40:]), bo.Uint32(b[56:])
			s.RelOff, s.NReloc = bo.Uint32(b[48:]), bo.Uint32(b[52:])
		}
		out = append(out, s)
	}
	return out, nil
}

func cstr(b []byte) string {
	b, _, _ = bytes.Cut(b, []byte{0})
	return string(b)
}

// versionMinPlatform is the platform each LC_VERSION_MIN_* command names.
var versionMinPlatform = map[macho.LoadCmd]Platform{
	LCVersionMinMacOSX: PlatformMacOS, LCVersionMinIPhoneOS: PlatformIOS,
	LCVersionMinTVOS: PlatformTVOS, LCVersionMinWatchOS: PlatformWatchOS,
}
