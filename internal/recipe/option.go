package recipe

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// ErrOption marks a Configure option osslbuild will not pass on: a compiler
// flag, an optimisation level or a variable assignment dressed up as an
// option, anything that could name another Configure target, or an option
// the release being built does not know.
var ErrOption = errors.New("not an acceptable Configure option")

// featureRe is a feature switch, the form every option pyca passes takes.
var featureRe = regexp.MustCompile(`^(no|enable)-([a-z0-9][a-z0-9_.+-]*)$`)

// longOptions are the "--name=value" options osslbuild passes on, each with
// the values it takes: they choose where the libraries go and which API
// they expose, not how the code is compiled. --prefix and --openssldir are
// osslbuild's own. The artifact layout is lib/ under the prefix, so
// --libdir names exactly that: any other value (an absolute path, "..")
// would install outside the staging directory or where layout does not
// look.
var longOptions = []struct {
	prefix        string
	value         *regexp.Regexp
	want, instead string
}{
	{"--libdir=", regexp.MustCompile(`^lib$`), "lib (the artifact's layout)", "write --libdir=lib (the artifact's layout)"},
	{"--api=", regexp.MustCompile(`^[0-9]+\.[0-9]+(\.[0-9]+)?$`), "an OpenSSL version such as 1.1.1 or 3.0", "write the API version as X.Y or X.Y.Z, such as --api=1.1.1 or --api=3.0"},
}

// CheckOption refuses what must not reach Configure as an option. Recipe
// options and a caller's options are held to the same rules: Configure
// takes "-..." and "+..." arguments as compiler flags and "VAR=value" as
// its variables (CFLAGS=... replaces OpenSSL's -O3, the pyca bug), and a
// bare word may be read as the Configure target, so only feature switches
// (no-X, enable-X) and a few long options get through. A refusal names the
// option, why, and what to write instead (OptionAdvice).
func CheckOption(o string) error {
	why, instead, refused := OptionAdvice(o)
	if !refused {
		return nil
	}
	return fmt.Errorf("option %q: %s; instead, %s: %w", o, why, instead, ErrOption)
}

// Advice that recurs in OptionAdvice.
const (
	leaveOut      = "leave it out"
	inTargetFlags = "put the flag in the recipe's targets.<name>.flags, where it reaches Configure as an argument (docs/recipes.md lists the families allowed)"
)

// OptionAdvice is why osslbuild refuses the option o and what to write
// instead; refused is false for an option it passes on. Linux and Windows
// builds that hand pyca's OPENSSL_BUILD_FLAGS to Configure as they are
// accept much of what is refused here (docs/pyca-infra.md's token table).
func OptionAdvice(o string) (why, instead string, refused bool) {
	for _, r := range optionRefusals { // refused by name
		if r.match(o) {
			return r.why, r.instead, true
		}
	}
	switch {
	case o == "" || strings.ContainsAny(o, " \t\n\r$`\"'\\;&|<>()*?[]{}~#!"):
		return "want a single Configure option", "give the options one by one, separated by spaces, each a no-FEATURE, an enable-FEATURE, --libdir=lib or --api=X.Y", true
	case strings.HasPrefix(o, "-O"):
		return "optimisation is OpenSSL's own -O3; an option must not override it", leaveOut + ": OpenSSL's Configure sets -O3 itself, and osslbuild refuses to build at any other level", true
	case strings.HasPrefix(o, "--"):
		var names []string
		for _, l := range longOptions {
			if v, ok := strings.CutPrefix(o, l.prefix); ok {
				if !l.value.MatchString(v) {
					return fmt.Sprintf("%s takes %s, not %q", strings.TrimSuffix(l.prefix, "="), l.want, v), l.instead, true
				}
				return "", "", false
			}
			names = append(names, l.prefix+"VALUE")
		}
		why := fmt.Sprintf("long options are limited to %s (osslbuild sets --prefix and --openssldir itself)", strings.Join(names, ", "))
		switch name, _, _ := strings.Cut(o, "="); name {
		case "--prefix":
			return why, "set prefix in the recipe (the install prefix OpenSSL embeds; the artifact is relocatable whatever it is)", true
		case "--openssldir":
			return why, "set openssldir in the recipe's targets.<name> (pyca's recipe has Homebrew's for each architecture)", true
		case "--cross-compile-prefix":
			return why, leaveOut + ": osslbuild chooses the compiler (OSSLBUILD_TOOLCHAIN, docs/building.md)", true
		}
		return why, leaveOut + ": of the long options osslbuild passes only --libdir=lib and --api=X.Y", true
	case strings.HasPrefix(o, "-") || strings.HasPrefix(o, "+"):
		why := "a compiler flag, not a Configure option: Configure would hand it to the compiler; compiler flags come only from the recipe's targets"
		name, v, _ := strings.Cut(o, "=")
		switch {
		case deploymentFlag(o):
			v = cmp.Or(v, "11.0")
			return why, fmt.Sprintf("set min_os = %q in the recipe's macOS target; osslbuild derives %s=%s from it", v, name, v), true
		case o == "-static" || strings.HasPrefix(o, "-l") || strings.HasPrefix(o, "-L") || strings.HasPrefix(o, "-Wl,") || o == "-rpath":
			return "a linker flag: Configure would link with it", leaveOut + ": the static libraries link nothing themselves, and the program that links them chooses its own linker flags", true
		case strings.HasPrefix(o, "-DOPENSSL_NO_"):
			return why, "write the option no-" + strings.ToLower(strings.TrimPrefix(name, "-DOPENSSL_NO_")) + " if it is a feature of the release's Configure, else " + inTargetFlags, true
		}
		return why, inTargetFlags, true
	case strings.Contains(o, "="):
		name, _, _ := strings.Cut(o, "=")
		why := fmt.Sprintf("a variable assignment: Configure would set %s from it", name)
		switch name {
		case "CFLAGS", "CPPFLAGS", "CXXFLAGS", "ASFLAGS":
			return why + " (CFLAGS replaces OpenSSL's -O3: the pyca bug)", inTargetFlags, true
		case "CC", "CXX", "AR", "RANLIB", "LD", "AS", "CROSS_COMPILE", "PERL":
			return why, leaveOut + ": osslbuild chooses the tools (OSSLBUILD_TOOLCHAIN, docs/building.md)", true
		}
		return why, leaveOut + ": osslbuild builds Configure's environment itself, variable by variable", true
	case !featureRe.MatchString(o):
		why := "want no-FEATURE or enable-FEATURE (a bare word may be taken as the Configure target)"
		lower := strings.ToLower(o)
		switch {
		case lower != o && featureRe.MatchString(lower):
			return why, "write it in lower case: " + lower, true
		case slices.Contains(bareFeatures, o):
			return why + "; Configure reads the bare word " + o + " as enable-" + o, "write enable-" + o, true
		}
		return why, leaveOut + ": the Configure target is the recipe's targets.<name>.configure (darwin64-arm64-cc, darwin64-x86_64-cc)", true
	}
	return "", "", false
}

// bareFeatures are the words Configure rewrites into enable-X itself.
var bareFeatures = []string{"shared", "threads", "zlib", "zlib-dynamic", "sctp", "fips"}

// optionRefusals are options Configure knows that must not build the
// libraries a consumer links, each with why and what to write instead:
// they instrument the code, swap OpenSSL's assembly for generic C, build
// for debugging or testing, all with OpenSSL's -O3 still on the compiler
// line, or build a channel that writes TLS secrets out.
// Every other feature a release's Configure knows is allowed
// (releaseFeatures).
var optionRefusals = []struct {
	match        func(string) bool
	why, instead string
}{
	{is("enable-asan", "enable-ubsan", "enable-msan"), "a sanitiser build: Configure adds -fsanitize=... to every compile, instrumenting each memory access or operation and linking its run-time, with -O3 still on the compiler line", leaveOut + ": sanitiser builds are for testing OpenSSL, not for the libraries a wheel ships"},
	{func(o string) bool { return strings.HasPrefix(o, "enable-fuzz-") }, "a fuzzing build: Configure adds the fuzzer's instrumentation (-fsanitize=fuzzer..., AFL's compiler) to every compile", leaveOut + ": fuzzing builds are for OpenSSL's fuzzers"},
	{is("no-asm"), "drops OpenSSL's hand-written assembly (AES-NI, SHA, bignum and constant-time code) for its generic C: slower, and not the code a consumer's checks expect", leaveOut + ": both macOS architectures build OpenSSL's assembly"},
	{is("no-sse2"), "drops the SSE2 code paths (the switch is for 32-bit x86, whose CPUs may lack SSE2)", leaveOut + ": every x86_64 CPU has SSE2"},
	{is("386"), "Configure's 386 switch: 32-bit x86 code for the i386, without the SSE2 assembly", leaveOut + ": the macOS targets are arm64 and x86_64"},
	{is("no-pic"), "builds position-dependent code: the static libraries go into shared objects (Python's extension modules), which need position-independent code", leaveOut},
	{is("enable-crypto-mdebug", "enable-crypto-mdebug-backtrace"), "builds OpenSSL's memory-debugging hooks into every allocation", leaveOut},
	{testFeature, "a feature for testing OpenSSL (its name says so): it builds test hooks into the libraries (enable-unit-test exports internal functions, enable-allocfail-tests fails allocations on demand, enable-acvp-tests opens algorithm internals to ACVP's tests) or test integrations around them", leaveOut + ": the libraries a consumer links are OpenSSL's release build"},
	{is("enable-sslkeylog"), "a channel that writes TLS secrets out: every program linking the libraries appends its handshake secrets to the file SSLKEYLOGFILE names in its environment, whoever set it, and those secrets decrypt its traffic", leaveOut + ": a program that needs a key log asks for one itself with SSL_CTX_set_keylog_callback, which every build has (Python's SSLContext.keylog_filename uses it)"},
	{is("enable-trace"), "a channel that writes TLS secrets out: the tracing API dumps session keys and premaster secrets (ssl/t1_enc.c) to whatever channel any code in the process sets", leaveOut},
	{is("--debug", "-d"), "Configure's debug build: -O0 -g instead of -O3 (the pyca bug by another road)", leaveOut + ": the release build is OpenSSL's -O3"},
	{is("--pgo"), "Configure's profile-guided build: code generation follows a profile, not -O3", leaveOut},
}

// testFeature reports an enable- of a feature whose name says it is for
// testing OpenSSL (unit-test, allocfail-tests, acvp-tests,
// external-tests, and any later *-test or *-tests): a class, not a list,
// so a release that adds one is covered. (The test programs' own switch,
// tests, builds nothing into the libraries.)
func testFeature(o string) bool {
	f, ok := strings.CutPrefix(o, "enable-")
	return ok && (strings.HasSuffix(f, "-test") || strings.HasSuffix(f, "-tests"))
}

func is(names ...string) func(string) bool {
	return func(o string) bool { return slices.Contains(names, o) }
}

// knownFeatures is the set of feature names release v's Configure takes:
// its own list where one is pinned, else every pinned release's together
// (a name none of them knows is refused; one some release lacks is its
// Configure's to refuse, see pipeline's unsupported options). The second
// result says which releases the set comes from.
func knownFeatures(v string) (map[string]bool, string) {
	vs := slices.Sorted(maps.Keys(releaseFeatures))
	if _, ok := releaseFeatures[v]; ok {
		vs = []string{v}
	}
	set := map[string]bool{}
	for _, k := range vs {
		for _, f := range strings.Fields(releaseFeatures[k]) {
			set[f] = true
		}
	}
	return set, "OpenSSL " + strings.Join(vs, ", ")
}

// unknownFeatures lists the feature options (no-X, enable-X) among opts
// that release v's Configure does not know, sorted; see knownFeatures.
func unknownFeatures(v string, opts []string) ([]string, string) {
	known, from := knownFeatures(v)
	var out []string
	for _, o := range opts {
		if m := featureRe.FindStringSubmatch(o); m != nil && !known[m[2]] {
			out = append(out, o)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), from
}

// ParseOptions splits a caller's option string (pyca's OPENSSL_BUILD_FLAGS:
// options separated by spaces) and checks every option.
func ParseOptions(s string) ([]string, error) {
	opts := strings.Fields(s)
	if len(opts) == 0 {
		return nil, fmt.Errorf("options %q: no options given: %w", s, ErrOption)
	}
	var errs []error
	for _, o := range opts {
		if err := CheckOption(o); err != nil {
			errs = append(errs, err)
		}
	}
	return opts, errors.Join(errs...)
}
