// Package platformtest holds platform rows the shipped table does not have
// yet, for tests that show what adding one takes.
package platformtest

import (
	"testing"

	"github.com/osslbuild/osslbuild/internal/platform"
)

// LinuxAarch64 is the row a real linux-aarch64 target would add: ELF code
// for 64-bit Arm Linux, cross-built on x86-64 with Debian's
// gcc-aarch64-linux-gnu (the tools aarch64-linux-gnu-gcc, -ar, -ranlib),
// built natively on an Arm Linux host, and run natively there or under
// qemu-user's qemu-aarch64 (with the cross sysroot for its loader) on
// x86-64.
var LinuxAarch64 = platform.Platform{
	OS: "linux", Arch: "aarch64", Name: "Linux", Format: platform.ELF, GOOS: "linux", GOARCH: "arm64",
	Builds: []platform.Build{
		{Host: "linux/amd64", Toolchain: "linux", Target: "aarch64-linux-gnu-"},
		{Host: "linux/arm64", Toolchain: "linux"},
	},
	Runs: []platform.Run{
		{Host: "linux/arm64", How: "natively"},
		{Host: "linux/amd64", How: "under qemu-user", Via: []string{"qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"}},
	},
}

// Add puts p into the platform table until the test ends.
func Add(t testing.TB, p platform.Platform) {
	t.Helper()
	remove, err := platform.Add(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
}
