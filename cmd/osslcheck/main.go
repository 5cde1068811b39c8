// Command osslcheck audits OpenSSL builds wherever they are: Mach-O, ELF and
// PE files, static libraries, wheels, osslbuild artifacts, directories, and
// (with -python) what a Python installation loads. It is the same check as
// osslbuild's `go tool mage check`, with the same arguments, output and exit
// policy, for a machine without a clone of osslbuild:
//
//	go install github.com/osslbuild/osslbuild/cmd/osslcheck@latest
//	osslcheck dist/cryptography-46.0.0-cp311-abi3-macosx_11_0_arm64.whl -minopt=3
//	osslcheck -python python3
//
// Flags may come before or after the paths; everything after "--" is a
// path, so a file list from elsewhere (a glob, a wheelhouse) is passed as
// `osslcheck [flags] -- FILE...`: a file named "-python" is then a file.
//
// It exits 0 when every rule holds, 1 when a rule is broken or the input
// cannot be checked, 2 for a usage error (a flag or a flag's value).
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/osslbuild/osslbuild/internal/buildinfo"
	"github.com/osslbuild/osslbuild/internal/check"
	"github.com/osslbuild/osslbuild/internal/check/python"
	"github.com/osslbuild/osslbuild/internal/report"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: osslcheck [flags] PATH...    (flags before or after the paths)
       osslcheck [flags] -- PATH...     (every argument after -- is a path)
       osslcheck -python [flags] [INTERPRETER]

Audits OpenSSL builds: Mach-O, ELF and PE files, static libraries, wheels,
osslbuild artifacts (verified against their manifests) and directories.
Fails below -minopt, on a missing -arch, with -strict where the optimisation
is unknown or the OpenSSL series past its end of life (or a macOS arm64
slice's compiled code above apple-m1), with -isa on compiled code above
that level outside the release's dispatch list,
and with -fail-on where OpenSSL's published advisories affect the release
at or above a severity (reported, matched by version, in any case; -vex
suppresses the CVEs a file says were assessed).
-python audits what an interpreter loads: its _ssl and _hashlib, the
libcrypto and libssl they map, cryptography's extension modules, and any
other extension module that embeds OpenSSL.

flags:
`

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("osslcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	minopt := fs.String("minopt", "", "minimum optimisation: 0, 1, 2, 3, s or z (default 2)")
	arch := fs.String("arch", "", "architectures every binary must have, comma-separated: arm64,x86_64")
	asJSON := fs.Bool("json", false, "print the result as JSON (the same as -format=json)")
	strict := fs.Bool("strict", false, "fail where the optimisation is unknown or the OpenSSL series past its end of life, and a macOS arm64 slice's compiled code above apple-m1")
	isa := fs.String("isa", "", "fail compiled code above this level in the slices of its architecture: x86-64, core2, x86-64-v2, x86-64-v3, x86-64-v4 (x86_64); apple-m1, apple-m2 (arm64)")
	format := fs.String("format", "", "output: text (default), json, sarif (SARIF 2.1.0, for code scanning) or cyclonedx (a CycloneDX 1.5 SBOM of the libraries found, with their advisories)")
	failOn := fs.String("fail-on", "", "fail where OpenSSL's published advisories affect the release at or above this severity: low, moderate, high or critical (an unrated one fails at every level; default: report only)")
	fs.StringVar(failOn, "failon", "", "the same as -fail-on, as go tool mage check spells it")
	vex := fs.String("vex", "", "a file of assessed CVEs whose advisories are suppressed (and counted): CycloneDX VEX JSON, or one \"CVE-YYYY-NNNN reason\" a line")
	advisories := fs.String("advisories", "", "an advisory table file to match against instead of the built-in one (genadvisories writes one): newer data without a new osslcheck")
	advisoriesOlder := fs.Bool("advisories-older", false, "take an -advisories table older than the built-in one, or one lacking some of its CVEs (refused otherwise)")
	py := fs.Bool("python", false, "audit a Python installation: PATH is the interpreter (default python3)")
	pyTimeout := fs.Duration("python-timeout", python.DefaultTimeout, "with -python: how long the interpreter may run before its process group is killed")
	version := fs.Bool("version", false, "print osslcheck's version and exit")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	flags, paths := split(fs, args)
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *version {
		fmt.Fprintln(stdout, "osslcheck", Version())
		return 0
	}
	if len(paths) == 0 && !*py || len(paths) > 1 && *py {
		fs.Usage()
		return 2
	}
	path := strings.Join(paths, " ") // several paths' label
	o := check.FromFlags(path, minopt, arch, asJSON, strict, isa, format, failOn, vex, advisories, advisoriesOlder)
	o.Version = Version()
	o.Stdout, o.Stderr = stdout, stderr
	var err error
	switch {
	case *py:
		err = python.Run(ctx, path, *pyTimeout, o)
	case len(paths) > 1:
		// Several inputs (a wheelhouse's wheels, as a glob gives them):
		// one report, one verdict.
		err = check.RunPaths(ctx, o, path, paths)
	default:
		err = check.Run(ctx, o)
	}
	if err != nil {
		fmt.Fprintln(stderr, "osslcheck:", err)
		if errors.Is(err, check.ErrUsage) {
			return 2
		}
		// A rule broken has its annotations already; an input that could
		// not be checked at all gets one too, under GitHub Actions.
		if !errors.Is(err, check.ErrFailed) && report.InActions(nil) {
			report.Error(stdout, report.Annotation{Title: "osslcheck", Msg: err.Error()})
		}
		return 1
	}
	return 0
}

// split parts args into flags and paths as flag.Parse would read each
// argument in its place: a flag's value is the flag's ("-arch x86_64"), a
// lone "-" is a path, and after "--" everything is a path. The path may
// come before the flags, as `go tool mage check PATH -minopt=3` takes it,
// or after them. A flag fs does not know stays with the flags, for Parse
// to refuse.
func split(fs *flag.FlagSet, args []string) (flags, paths []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, append(paths, args[i+1:]...)
		}
		if len(a) < 2 || a[0] != '-' {
			paths = append(paths, a)
			continue
		}
		flags = append(flags, a)
		// "-minopt=3" names no flag (a flag's name holds no "="): its
		// value is its own, as is an unknown flag's.
		f := fs.Lookup(strings.TrimLeft(a, "-"))
		if f == nil || i+1 == len(args) {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, paths
}

// Version is the module version go install recorded ("v0.3.0", or a
// pseudo-version), else the VCS revision of the checkout it was built
// from: go install cannot pass -ldflags, so the build information is the
// one source.
func Version() string { return cmp.Or(buildinfo.Version(), "(devel)") }
