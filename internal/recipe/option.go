package recipe

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/go-version"
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
	prefix string
	value  *regexp.Regexp
	want   string
}{
	{"--libdir=", regexp.MustCompile(`^lib$`), "lib (the artifact's layout)"},
	{"--api=", regexp.MustCompile(`^[0-9]+\.[0-9]+(\.[0-9]+)?$`), "an OpenSSL version such as 1.1.1 or 3.0"},
}

// CheckOption refuses what must not reach Configure as an option. Recipe
// options and a caller's options are held to the same rules: Configure
// takes "-..." and "+..." arguments as compiler flags and "VAR=value" as
// its variables (CFLAGS=... replaces OpenSSL's -O3, the pyca bug), and a
// bare word may be read as the Configure target, so only feature switches
// (no-X, enable-X) and a few long options get through.
func CheckOption(o string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("option %q: %s: %w", o, fmt.Sprintf(format, args...), ErrOption)
	}
	if why, ok := refusedOption(o); ok {
		return bad("%s", why)
	}
	switch {
	case o == "" || strings.ContainsAny(o, " \t\n\r$`\"'\\;&|<>()*?[]{}~#!"):
		return bad("want a single Configure option")
	case strings.HasPrefix(o, "-O"):
		return bad("optimisation is OpenSSL's own -O3; an option must not override it")
	case strings.HasPrefix(o, "--"):
		var names []string
		for _, l := range longOptions {
			if v, ok := strings.CutPrefix(o, l.prefix); ok {
				if !l.value.MatchString(v) {
					return bad("%s takes %s, not %q", strings.TrimSuffix(l.prefix, "="), l.want, v)
				}
				return nil
			}
			names = append(names, l.prefix+"VALUE")
		}
		return bad("long options are limited to %s (osslbuild sets --prefix and --openssldir itself)", strings.Join(names, ", "))
	case strings.HasPrefix(o, "-") || strings.HasPrefix(o, "+"):
		return bad("a compiler flag, not a Configure option: Configure would hand it to the compiler; compiler flags come only from the recipe's targets")
	case strings.Contains(o, "="):
		name, _, _ := strings.Cut(o, "=")
		return bad("a variable assignment: Configure would set %s from it", name)
	case !featureRe.MatchString(o):
		return bad("want no-FEATURE or enable-FEATURE (a bare word may be taken as the Configure target)")
	}
	return nil
}

// optionRefusals are options Configure knows that must not build the
// libraries a consumer links, each with why: they instrument the code,
// swap OpenSSL's assembly for generic C, or build for debugging, all with
// OpenSSL's -O3 still on the compiler line. Every other feature a
// release's Configure knows is allowed (releaseFeatures).
var optionRefusals = []struct {
	match func(string) bool
	why   string
}{
	{is("enable-asan", "enable-ubsan", "enable-msan"), "a sanitiser build: Configure adds -fsanitize=... to every compile, instrumenting each memory access or operation and linking its run-time, with -O3 still on the compiler line"},
	{func(o string) bool { return strings.HasPrefix(o, "enable-fuzz-") }, "a fuzzing build: Configure adds the fuzzer's instrumentation (-fsanitize=fuzzer..., AFL's compiler) to every compile"},
	{is("no-asm"), "drops OpenSSL's hand-written assembly (AES-NI, SHA, bignum and constant-time code) for its generic C: slower, and not the code a consumer's checks expect"},
	{is("no-sse2"), "drops the SSE2 code paths (the switch is for 32-bit x86, whose CPUs may lack SSE2)"},
	{is("386"), "Configure's 386 switch: 32-bit x86 code for the i386, without the SSE2 assembly"},
	{is("no-pic"), "builds position-dependent code: the static libraries go into shared objects (Python's extension modules), which need position-independent code"},
	{is("enable-crypto-mdebug", "enable-crypto-mdebug-backtrace"), "builds OpenSSL's memory-debugging hooks into every allocation"},
	{is("enable-allocfail-tests", "enable-unit-test"), "builds test hooks into the libraries (allocation failures on demand, internal functions exported for unit tests)"},
	{is("--debug", "-d"), "Configure's debug build: -O0 -g instead of -O3 (the pyca bug by another road)"},
	{is("--pgo"), "Configure's profile-guided build: code generation follows a profile, not -O3"},
}

func is(names ...string) func(string) bool {
	return func(o string) bool { return slices.Contains(names, o) }
}

// refusedOption is why o is refused by name, false when it is not.
func refusedOption(o string) (string, bool) {
	for _, r := range optionRefusals {
		if r.match(o) {
			return r.why, true
		}
	}
	return "", false
}

// knownFeatures is the set of feature names release v's Configure takes:
// its own list where one is pinned, else every pinned release's together
// (a name none of them knows is refused; one some release lacks is its
// Configure's to refuse, see pipeline's unsupported options). The second
// result says which releases the set comes from.
func knownFeatures(v string) (map[string]bool, string) {
	set := map[string]bool{}
	if list, ok := releaseFeatures[v]; ok {
		for _, f := range strings.Fields(list) {
			set[f] = true
		}
		return set, "OpenSSL " + v
	}
	vs := slices.Sorted(maps.Keys(releaseFeatures))
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

// PinnedFeatureReleases are the releases whose Configure's feature list
// osslbuild holds (releaseFeatures), oldest first.
func PinnedFeatureReleases() []string {
	vs := slices.Collect(maps.Keys(releaseFeatures))
	slices.SortFunc(vs, func(a, b string) int {
		return version.Must(version.NewVersion(a)).Compare(version.Must(version.NewVersion(b)))
	})
	return vs
}

// Features is the sorted feature list of release v's Configure, nil for a
// release osslbuild has not read.
func Features(v string) []string {
	f := strings.Fields(releaseFeatures[v])
	slices.Sort(f)
	return f
}
