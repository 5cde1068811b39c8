package platform

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// The platforms osslbuild builds for, one row per OS and architecture, in
// the style of the stage table: which object format the code is in, how the
// deployment target is stated, which toolchain builds it on which host,
// which hosts can run it and how, and which universal artifact its slices
// merge into. A new target is one row here, one recipe block and, for a new
// kind of toolchain, one file in package toolchain.
var table = []Platform{
	{
		OS: "macos", Arch: "arm64", Name: "macOS", Format: MachO, GOOS: "darwin", GOARCH: "arm64",
		MinOSFlag: "-mmacosx-version-min=",
		Builds: []Build{
			{Host: "darwin", Toolchain: "macos"},
			{Toolchain: "cross", Target: "arm64-apple-macos"},
		},
		Runs:      []Run{{Host: "darwin/arm64", How: "natively"}},
		Universal: "universal2",
		ISA:       "apple-m1", // every arm64 Mac, and macOS 11's baseline
		CPUFlags:  []string{"-mcpu=", "-mtune="},
		// apple-m2 (BF16, I8MM) is provable too; clang-14 (the cross
		// toolchain) does not know the name, Xcode's clang does.
		CPUs:            []string{"apple-m1", "apple-m2"},
		SystemLibraries: []string{libSystem},
	},
	{
		OS: "macos", Arch: "x86_64", Name: "macOS", Format: MachO, GOOS: "darwin", GOARCH: "amd64",
		MinOSFlag: "-mmacosx-version-min=",
		Builds: []Build{
			{Host: "darwin", Toolchain: "macos"},
			{Toolchain: "cross", Target: "x86_64-apple-macos"},
		},
		Runs: []Run{
			{Host: "darwin/amd64", How: "natively"},
			{Host: "darwin/arm64", How: "under Rosetta", Via: []string{"/usr/bin/arch", "-x86_64"}},
		},
		Universal:       "universal2",
		ISA:             "core2", // clang's default for x86_64 macOS, and the oldest Intel Mac
		CPUFlags:        []string{"-march=", "-mtune="},
		CPUs:            x86Levels,
		SystemLibraries: []string{libSystem},
	},
	{
		OS: "linux", Arch: "x86_64", Name: "Linux", Format: ELF, GOOS: "linux", GOARCH: "amd64",
		ISA:      "x86-64", // the psABI baseline, as manylinux's compilers default to
		CPUFlags: []string{"-march=", "-mtune="},
		CPUs:     x86Levels,
		Builds:   []Build{{Host: "linux/amd64", Toolchain: "linux"}},
		Runs:     []Run{{Host: "linux/amd64", How: "natively"}},
		// glibc: OpenSSL links -ldl -pthread, which glibc before 2.34
		// (manylinux's) resolves to libraries of their own.
		SystemLibraries: []string{"libc.so.6", "libdl.so.2", "libpthread.so.0"},
	},
}

// x86Levels are the x86-64 levels validation proves code stays within
// (codeclass.ISALevels, which a test holds this list to).
var x86Levels = []string{"x86-64", "core2", "x86-64-v2", "x86-64-v3", "x86-64-v4"}

// libSystem is what every macOS program and dylib loads.
const libSystem = "/usr/lib/libSystem.B.dylib"

// universals are the universal artifacts rows merge into, with the order
// their slices stand in inside every fat file (and a header dispatch).
var universals = map[string][]string{"universal2": {"x86_64", "arm64"}}

// UniversalArchs is the slice order of the universal artifact name, nil
// for a name the table does not know.
func UniversalArchs(name string) []string { return slices.Clone(universals[name]) }

// Format is the object format of a platform's code.
type Format string

const (
	MachO Format = "Mach-O"
	ELF   Format = "ELF"
)

// SharedFile is the file a shared library base ("libcrypto") of
// SHLIB_VERSION v is installed as, as OpenSSL names it: libcrypto.3.dylib
// for Mach-O, libcrypto.so.3 for ELF.
func (f Format) SharedFile(base, v string) string {
	if f == ELF {
		return base + ".so." + v
	}
	return base + "." + v + ".dylib"
}

// SharedLink is the unversioned name OpenSSL installs as a link to the
// shared library base: what -lcrypto finds.
func (f Format) SharedLink(base string) string {
	if f == ELF {
		return base + ".so"
	}
	return base + ".dylib"
}

// Platform is one row of the table.
type Platform struct {
	OS     string // the recipe's os: "macos", "linux"
	Arch   string // the recipe's arch: "arm64", "x86_64", "aarch64"
	Name   string // for people: "macOS"
	Format Format
	// GOOS and GOARCH are Go's names for a host whose own code this is.
	GOOS, GOARCH string
	// MinOSFlag is the compiler flag that states the deployment target,
	// followed by the recipe's min_os ("-mmacosx-version-min=11.0"): a
	// target of this platform must carry both, and every object must then
	// record it. "" means the platform has no deployment target; min_os
	// must be empty.
	MinOSFlag string
	// Builds are the toolchains that build this platform; on a host, the
	// first whose Host matches is the default.
	Builds []Build
	// Runs are the hosts that can run this platform's programs, and how.
	Runs []Run
	// Universal names the universal artifact slices of this platform are
	// merged into with lipo ("universal2"); "" when they are not.
	Universal string
	// ISA is the instruction-set level compiled code may use when the
	// target's flags name no -march (x86-64) or -mcpu (arm64) (see
	// validate.LevelOf); "" where the instruction set is not checked.
	ISA string
	// CPUFlags are the flags a recipe may choose the CPU with ("-march=",
	// "-mtune="), and CPUs the values they take: each an instruction-set
	// level validation proves compiled code stays within (validate.LevelOf
	// and codeclass's ISA pass), or the platform's baseline where no level
	// is checked: on arm64 apple-m1, the baseline every arm64 Mac runs,
	// and apple-m2 (BF16 and I8MM above it), the levels the pass proves.
	// Nothing machine-dependent ("native") is a value.
	CPUFlags []string
	CPUs     []string
	// SystemLibraries are the only libraries beside each other that
	// OpenSSL's shared libraries may load, by the names the loader looks
	// for.
	SystemLibraries []string
}

// Build is a toolchain that builds a platform on some hosts.
type Build struct {
	Host      string // GOOS or GOOS/GOARCH of the machine it runs on; "" any host
	Toolchain string // kind, as package toolchain names them: "macos", "cross", "linux"
	// Target is what the toolchain needs to aim at the platform: clang's
	// triple without the OS version ("arm64-apple-macos") for cross, the
	// GNU tool prefix ("aarch64-linux-gnu-") for a Linux cross compiler;
	// "" for the host's own.
	Target string
}

// Run is a host that can run a platform's programs.
type Run struct {
	Host string   // GOOS/GOARCH
	How  string   // "natively", "under Rosetta"
	Via  []string // command prefix that runs the program, nil for none
}

// ErrUnknown marks an OS and architecture no row describes.
var ErrUnknown = errors.New("no such platform")

var mu sync.RWMutex

// Lookup is the row for the slice's OS and architecture.
func Lookup(s Slice) (Platform, error) {
	return Find(s.OS, s.Arch)
}

// Find is the row for os and arch (Go's or ELF's names for an
// architecture are the same CPU: amd64 is x86_64, aarch64 is arm64 only
// where no row spells aarch64 itself).
func Find(os, arch string) (Platform, error) {
	mu.RLock()
	defer mu.RUnlock()
	for _, p := range table {
		if p.OS == os && p.Arch == arch {
			return p, nil
		}
	}
	return Platform{}, fmt.Errorf("%s %s: %w (known: %s)", os, arch, ErrUnknown, known())
}

// FormatOf is the object format of os's rows.
func FormatOf(os string) (Format, bool) {
	for _, p := range All() {
		if p.OS == os {
			return p.Format, true
		}
	}
	return "", false
}

// All lists the rows.
func All() []Platform {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Clone(table)
}

// OSes lists the operating systems of the rows, each once, in table order.
func OSes() []string {
	var out []string
	for _, p := range All() {
		if !slices.Contains(out, p.OS) {
			out = append(out, p.OS)
		}
	}
	return out
}

// Archs lists the architectures the rows give os, in table order.
func Archs(os string) []string {
	var out []string
	for _, p := range All() {
		if p.OS == os {
			out = append(out, p.Arch)
		}
	}
	return out
}

// Add puts a row into the table for the rest of the process and returns a
// function that takes it out again. It is how a test describes a platform
// the shipped table does not have yet; a row for an OS and architecture the
// table has is refused.
func Add(p Platform) (remove func(), err error) {
	mu.Lock()
	defer mu.Unlock()
	same := func(q Platform) bool { return q.OS == p.OS && q.Arch == p.Arch }
	if slices.ContainsFunc(table, same) {
		return nil, fmt.Errorf("platform %s %s: already in the table", p.OS, p.Arch)
	}
	if p.OS == "" || p.Arch == "" || p.Format == "" || len(p.Builds) == 0 {
		return nil, fmt.Errorf("platform %q %q: a row needs an OS, an architecture, a format and a build", p.OS, p.Arch)
	}
	table = append(table, p)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		table = slices.DeleteFunc(table, same)
	}, nil
}

func known() string {
	var k []string
	for _, p := range table {
		k = append(k, p.OS+" "+p.Arch)
	}
	return strings.Join(k, ", ")
}

// Build chooses the toolchain that builds the platform on host (GOOS/GOARCH).
// kind, when given (OSSLBUILD_TOOLCHAIN), picks the row's build of that
// kind even where another host is its home, so the toolchain itself says
// why it cannot run here; a kind the row does not list is the host's
// default: the choice of a macOS toolchain does not bear on a Linux slice.
func (p Platform) Build(kind, host string) (Build, error) {
	// kind's build on host, else kind's build, else the host's first.
	for _, ok := range []func(Build) bool{
		func(b Build) bool { return kind != "" && b.Toolchain == kind && b.on(host) },
		func(b Build) bool { return kind != "" && b.Toolchain == kind },
		func(b Build) bool { return b.on(host) },
	} {
		if i := slices.IndexFunc(p.Builds, ok); i >= 0 {
			return p.Builds[i], nil
		}
	}
	var hosts []string
	for _, b := range p.Builds {
		hosts = append(hosts, b.Toolchain+" on "+cmp.Or(b.Host, "any host"))
	}
	return Build{}, fmt.Errorf("%s %s: no toolchain builds it on %s (the platform table has %s)", p.OS, p.Arch, host, strings.Join(hosts, ", "))
}

// Run says how host runs the platform's programs; ok is false where it
// cannot.
func (p Platform) Run(host string) (Run, bool) {
	i := slices.IndexFunc(p.Runs, func(r Run) bool { return r.Host == host })
	if i < 0 {
		return Run{}, false
	}
	return p.Runs[i], true
}

// RunsOn names the hosts that run the platform's programs, for messages.
func (p Platform) RunsOn() string {
	var h []string
	for _, r := range p.Runs {
		h = append(h, r.Host)
	}
	if len(h) == 0 {
		return "no host osslbuild knows"
	}
	return strings.Join(h, " or ")
}

// Toolchains lists every toolchain kind the rows name, each once.
func Toolchains() []string {
	var out []string
	for _, p := range All() {
		for _, b := range p.Builds {
			if !slices.Contains(out, b.Toolchain) {
				out = append(out, b.Toolchain)
			}
		}
	}
	return out
}

func (b Build) on(host string) bool {
	if b.Host == "" {
		return true
	}
	goos, _, _ := strings.Cut(host, "/")
	return b.Host == host || b.Host == goos
}
