package inspect

import (
	"bytes"
	"debug/macho"
	"testing"

	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestVersion: min_os as the one parser reads it (platform.ParseMinOS)
// packs as Mach-O's load commands hold it and prints back as otool does.
func TestVersion(t *testing.T) {
	tests := []struct {
		s    string
		v    Version
		back string
	}{
		{"11.0", 0x000b0000, "11.0"},
		{"11", 0x000b0000, "11.0"},
		{"10.12", 0x000a0c00, "10.12"},
		{"10.12.1", 0x000a0c01, "10.12.1"},
		{"14.5", 0x000e0500, "14.5"},
	}
	for _, tt := range tests {
		p, err := platform.ParseMinOS(tt.s)
		if v := Version(p); err != nil || v != tt.v || v.String() != tt.back {
			t.Errorf("ParseMinOS(%q) = %#x (%s), %v; want %#x (%s)", tt.s, uint32(v), v, err, uint32(tt.v), tt.back)
		}
	}
	for _, bad := range []string{"", ".", "11.", "a.b", "1.2.3.4", "10.256", "70000.0", "11.0 "} {
		if v, err := platform.ParseMinOS(bad); err == nil {
			t.Errorf("ParseMinOS(%q) = %s, want error", bad, Version(v))
		}
	}
	if Version(0).String() != "n/a" {
		t.Errorf("zero version prints %q", Version(0).String())
	}
}

func TestParseMachOSynthetic(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		arch     string
		cmd      macho.LoadCmd
		platform Platform
		minos    string
	}{
		{"build version macOS", machoObject(t, LCBuildVersion, PlatformMacOS, 0x000b0000), "arm64", LCBuildVersion, PlatformMacOS, "11.0"},
		{"build version iOS", machoObject(t, LCBuildVersion, PlatformIOS, 0x000e0000), "arm64", LCBuildVersion, PlatformIOS, "14.0"},
		{"version min macOS", machoObject(t, LCVersionMinMacOSX, 0, 0x000a0c00), "arm64", LCVersionMinMacOSX, PlatformMacOS, "10.12"},
		{"version min iOS", machoObject(t, LCVersionMinIPhoneOS, 0, 0x000c0000), "arm64", LCVersionMinIPhoneOS, PlatformIOS, "12.0"},
		{"arm64e", patch32(machoObject(t, LCBuildVersion, PlatformMacOS, 0x000b0000), 8, 2), "arm64e", LCBuildVersion, PlatformMacOS, "11.0"},
		{"x86_64", patch32(machoObject(t, LCBuildVersion, PlatformMacOS, 0x000a0c00), 4, uint32(macho.CpuAmd64)), "x86_64", LCBuildVersion, PlatformMacOS, "10.12"},
		{"big-endian 32-bit", testfixture.BigEndian32(), "ppc", LCVersionMinMacOSX, PlatformMacOS, "10.4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMachO(bytes.NewReader(tt.data), int64(len(tt.data)))
			if err != nil {
				t.Fatal(err)
			}
			if m.Arch != tt.arch || len(m.Versions) != 1 {
				t.Fatalf("arch %s versions %+v", m.Arch, m.Versions)
			}
			v := m.Versions[0]
			if v.Cmd != tt.cmd || v.Platform != tt.platform || v.MinOS.String() != tt.minos {
				t.Errorf("got %s %s %s, want %#x %s %s", v.CmdName(), v.Platform, v.MinOS, tt.cmd, tt.platform, tt.minos)
			}
		})
	}
}

func TestNames(t *testing.T) {
	if got := CPUName(macho.Cpu(0x1234), 0); got != "cpu(0x1234)" {
		t.Errorf("unknown cpu: %q", got)
	}
	if got := CPUName(macho.CpuAmd64, 0x80000003); got != "x86_64" {
		t.Errorf("x86_64 with LIB64 bit: %q", got)
	}
	if got := Platform(99).String(); got != "platform(99)" {
		t.Errorf("platform: %q", got)
	}
	if got := (BuildVersion{Cmd: LCVersionMinMacOSX}).CmdName(); got != "LC_VERSION_MIN_MACOSX" {
		t.Errorf("cmd name: %q", got)
	}
}
