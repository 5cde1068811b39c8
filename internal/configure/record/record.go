// Package record holds a manifest's record of how Configure ran to the slice it
// says it built. It is apart from package configure, which runs Configure,
// so that check, which only reads records, needs none of the toolchain.
package record

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/platform"
)

// Check holds a manifest's record of how Configure ran (argv, the
// constructed environment, the CFLAGS its Makefile got) to the slice it
// says it built, as Argv, Env and Gate make them: the argv is exactly the
// Configure target, a clean absolute --prefix, the slice's --openssldir
// (any absolute one for records from before the slice carried it), its
// options and then its flags; no variable of Ignored is in the
// environment; CFLAGS shows -O3 with every flag. pycaWay holds the pyca-way
// build instead, which moves the flags from the argv into CFLAGS in the
// environment on purpose. It returns every problem, in words naming the
// field.
func Check(s platform.Slice, argv, env []string, cflags string, pycaWay bool) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	built := s
	if pycaWay {
		built.Flags = nil
	}
	// Argv's own construction, less --prefix and --openssldir (argv[3]
	// and argv[4]), which are held apart below.
	want := slices.Delete(Argv(built, "", ""), 3, 5)
	if len(argv) < 5 {
		bad("configure argv %q: want perl Configure %s --prefix=... --openssldir=... and the options", argv, s.Configure)
	} else {
		prefix, ok := strings.CutPrefix(argv[3], "--prefix=")
		if !ok || !path.IsAbs(prefix) || path.Clean(prefix) != prefix {
			bad("configure argv[3] %q: want --prefix= a clean absolute path", argv[3])
		}
		dir, ok := strings.CutPrefix(argv[4], "--openssldir=")
		switch {
		case !ok || !path.IsAbs(dir):
			bad("configure argv[4] %q: want --openssldir= an absolute path", argv[4])
		case s.OpenSSLDir != "" && dir != s.OpenSSLDir:
			bad("configure argv[4] %q: the target records openssldir %s", argv[4], s.OpenSSLDir)
		}
		if got := append(slices.Clone(argv[:3]), argv[5:]...); !slices.Equal(got, want) {
			bad("configure argv %q: the target's Configure target, options and flags make %q (around --prefix and --openssldir)", argv, want)
		}
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if v == "" || !slices.Contains(Ignored, k) || (pycaWay && k == "CFLAGS") {
			continue
		}
		bad("configure environment sets %s: osslbuild constructs the environment without it (%s in the environment of Configure replaces OpenSSL's own flags)", kv, k)
	}
	if pycaWay {
		return problems
	}
	cl := inspect.ParseCompilerLine("cc " + cflags)
	if cl.Opt != inspect.O3 {
		bad("configure cflags %q: the gate passes -O3 only, this is %s", cflags, cl.Opt)
	}
	for _, f := range s.Flags {
		if !cl.Has(f) {
			bad("configure cflags %q: lacks the target's flag %s", cflags, f)
		}
	}
	return problems
}

// Argv is the Configure argv osslbuild runs for slice s: the target, the
// install prefix, the openssldir, the slice's options, then its compiler
// flags as arguments (never in the environment). configure.Args builds
// with it; Check holds a record to it.
func Argv(s platform.Slice, prefix, openssldir string) []string {
	args := []string{"perl", "Configure", s.Configure, "--prefix=" + prefix, "--openssldir=" + openssldir}
	args = append(args, s.Options...)
	return append(args, s.Flags...)
}

// Ignored are the user environment variables that would change what
// Configure or make do. None of them reaches the build.
var Ignored = []string{
	"CFLAGS", "CPPFLAGS", "CXXFLAGS", "LDFLAGS", "LDLIBS", "ASFLAGS",
	"CC", "CXX", "CPP", "AS", "AR", "ARFLAGS", "RANLIB", "NM", "LD", "RC", "WINDRES",
	"CROSS_COMPILE", "PERL", "HASHBANGPERL",
	"MACOSX_DEPLOYMENT_TARGET", "SDKROOT", "DEVELOPER_DIR",
	"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "GNUMAKEFLAGS",
	"OPENSSL_LOCAL_CONFIG_DIR", "CONFIGURE_CHECKER_WARN",
	"LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "OBJC_INCLUDE_PATH",
}
