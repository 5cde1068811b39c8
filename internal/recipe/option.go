package recipe

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrOption marks a Configure option osslbuild will not pass on: a compiler
// flag, an optimisation level or a variable assignment dressed up as an
// option, anything that could name another Configure target, or an option
// the release being built does not know.
var ErrOption = errors.New("not an acceptable Configure option")

// featureRe is a feature switch, the form every option pyca passes takes.
var featureRe = regexp.MustCompile(`^(no|enable)-[a-z0-9][a-z0-9_.+-]*$`)

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
