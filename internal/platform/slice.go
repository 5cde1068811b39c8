// Package platform holds what a slice is and which platforms osslbuild
// builds for. A Slice is made once from the recipe (package recipe), written
// verbatim into the artifact's manifest and read back as the same value by
// every stage after the build: validation, the link check, the toolchain,
// the universal2 merge, check, the reports and smoke. The platform table
// (table.go) is the one place an operating system or architecture is
// spelled outside the recipe.
package platform

import "fmt"

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
// libcrypto first: the static pair, and for shared libraries the dylibs
// (beside the static pair, or alone).
func (s Slice) Libraries() []string {
	if s.Shared == nil {
		return StaticLibraries
	}
	var out []string
	if s.Shared.Static {
		out = append(out, StaticLibraries...)
	}
	return append(out, "libcrypto."+s.Shared.Version+".dylib", "libssl."+s.Shared.Version+".dylib")
}

// InstallNameOf is the install name the dylib lib of the slice carries,
// under prefix for install_name "prefix".
func (s Slice) InstallNameOf(lib, prefix string) string {
	if s.Shared != nil && s.Shared.InstallName == "prefix" {
		return prefix + "/lib/" + lib
	}
	return "@rpath/" + lib
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
