// Package platform holds what a slice is and which platforms osslbuild
// builds for. A Slice is made once from the recipe (package recipe), written
// verbatim into the artifact's manifest and read back as the same value by
// every stage after the build: validation, the link check, the toolchain,
// the universal2 merge, check, the reports and smoke. The platform table
// (table.go) is the one place an operating system or architecture is
// spelled outside the recipe.
package platform

import (
	"fmt"
	"slices"
)

// Slice is everything that defines one built slice: one OS and architecture,
// built by one Configure invocation. The JSON names are the manifest's
// "target" record (schema v1); OpenSSLDir and Artifact joined it later and
// are empty in manifests written before.
type Slice struct {
	Name      string   `json:"name" toml:"-"`                  // recipe target key: "arm64", "x86_64", "linux-x86_64"; "universal2" for a merge
	Configure string   `json:"configure" toml:"configure"`     // OpenSSL Configure target, also the expected "platform:" line
	OS        string   `json:"os" toml:"os"`                   // a row of the platform table: "macos", "linux"
	Arch      string   `json:"arch" toml:"arch"`               // the row's architecture: "arm64", "x86_64" ("x86_64+arm64" for universal2)
	MinOS     string   `json:"min_os,omitempty" toml:"min_os"` // deployment target every object carries, where the platform has one
	Flags     []string `json:"flags" toml:"flags"`             // compiler flags, passed to Configure as arguments
	// Options are the Configure options valid for this release, in order
	// (the common options, the recipe's or the caller's, then the
	// target's); Skipped those the recipe limits to other releases.
	Options    []string `json:"options" toml:"-"`
	Skipped    []string `json:"skipped_options,omitempty" toml:"-"`
	OpenSSLDir string   `json:"openssldir,omitempty" toml:"openssldir"` // --openssldir
	Artifact   string   `json:"artifact,omitempty" toml:"artifact"`     // artifact name, e.g. openssl-macos-arm64
	// Shared, when set, is how the slice's shared libraries are named and
	// installed; nil for a slice of static libraries only (every manifest
	// written before shared libraries were built).
	Shared *Shared `json:"shared,omitempty" toml:"-"`
}

// Shared is a slice's shared libraries: whether the static ones ship
// beside them, and the install name each dylib carries (what a program
// linked against it records, and where the loader looks).
type Shared struct {
	Static bool `json:"static"` // the .a files ship too
	// InstallName is "@rpath" (the default: @rpath/libcrypto.3.dylib, found
	// through the loading program's run paths) or "prefix" (the install
	// prefix's lib/, for installer-style layouts).
	InstallName string `json:"install_name"`
	// Version is the release's SHLIB_VERSION (VERSION.dat): "3" for the
	// 3.x releases, "4" for 4.x; it names the files, libcrypto.3.dylib.
	Version string `json:"version"`
}

// StaticLibraries are the static libraries a slice of static libraries
// holds under lib/.
var StaticLibraries = []string{"libcrypto.a", "libssl.a"}

// Libraries are the library files the slice's artifact holds under lib/,
// libcrypto first: the static pair, and for shared libraries the shared
// ones (beside the static pair, or alone).
func (s Slice) Libraries() []string {
	if s.Shared == nil {
		return StaticLibraries
	}
	var out []string
	if s.Shared.Static {
		out = append(out, StaticLibraries...)
	}
	return append(out, s.SharedLibraries()...)
}

// SharedLibraries are the slice's shared library files, libcrypto first,
// as its object format names them (libcrypto.3.dylib, libcrypto.so.3);
// nil for a slice of static libraries.
func (s Slice) SharedLibraries() []string {
	if s.Shared == nil {
		return nil
	}
	f := s.Format()
	return []string{f.SharedFile("libcrypto", s.Shared.Version), f.SharedFile("libssl", s.Shared.Version)}
}

// IsShared says whether lib is one of the slice's shared library files.
func (s Slice) IsShared(lib string) bool { return slices.Contains(s.SharedLibraries(), lib) }

// InstallNameOf is the name the shared library lib of the slice carries
// and a program linked against it records: for a dylib its install name,
// under prefix for install_name "prefix"; for an ELF library its SONAME,
// the file name, which the loader looks up along the run paths.
func (s Slice) InstallNameOf(lib, prefix string) string {
	switch {
	case s.Format() == ELF:
		return lib
	case s.Shared != nil && s.Shared.InstallName == "prefix":
		return prefix + "/lib/" + lib
	}
	return "@rpath/" + lib
}

// SystemLibraries are the system libraries a shared library of the slice
// may load, by the names its loader looks for (the platform table's; a
// copy, for callers to append the sibling to). A slice no row describes
// (refused wherever a slice is read) may load none.
func (s Slice) SystemLibraries() []string {
	p, err := Lookup(s)
	if err != nil {
		return nil
	}
	return slices.Clone(p.SystemLibraries)
}

// Format is the object format of the slice's code. A slice whose OS the
// table lacks (refused wherever a slice is read) is taken for Mach-O: the
// only format osslbuild built shared libraries in before ELF.
func (s Slice) Format() Format {
	if f, ok := FormatOf(s.OS); ok {
		return f
	}
	return MachO
}

// String names the slice for messages: "arm64 (macOS 11.0)", "x86_64 (linux)".
func (s Slice) String() string {
	if p, err := Lookup(s); err == nil && p.MinOSFlag != "" && s.MinOS != "" {
		return fmt.Sprintf("%s (%s %s)", s.Arch, p.Name, s.MinOS)
	}
	return s.Arch + " (" + s.OS + ")"
}

// LinkedFor is what a program linked for the slice targets, as link
// records say it: "macos 11.0", "linux x86_64".
func (s Slice) LinkedFor() string {
	if s.MinOS != "" {
		return s.OS + " " + s.MinOS
	}
	return s.OS + " " + s.Arch
}
