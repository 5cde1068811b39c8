package validate

import "github.com/osslbuild/osslbuild/internal/binary/inspect"

// ForLibrary is the expectation for one of OpenSSL's static libraries built
// for a target: every object for arch (Mach-O with minos when os is
// "macos", ELF when "linux"), and for libcrypto
// (the library carrying crypto/buildinf.h's strings) exactly one compiler
// line at -O3 or better with the target's flags, and the target's platform
// line. libssl carries neither string. The caller sets Version (the
// Plan's, or the manifest's, release) to have every version string the
// library embeds held to it too.
func ForLibrary(lib, os, arch, minOS, platform string, flags []string) Expect {
	e := Expect{OS: os, Arch: arch, MinOS: minOS, MinOpt: inspect.O3, Flags: flags}
	if lib == "libcrypto.a" {
		e.Platform = platform
		e.RequireCompilerLine = true
	}
	return e
}
