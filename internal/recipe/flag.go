package recipe

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrFlag marks a target flag osslbuild will not hand to Configure.
var ErrFlag = errors.New("not an acceptable compiler flag")

// flagRe is one compiler flag as Configure passes it on: a single dash, a
// letter, then characters that mean nothing to Configure, make or a shell.
// Configure decodes "%xx" in a flag into any byte (so "-Wall%20-O0" would
// become two flags, one of them -O0), and make expands "$" in the
// Makefile it writes the flags into: neither may appear.
var flagRe = regexp.MustCompile(`^-[A-Za-z][A-Za-z0-9_.,=+:/@-]*$`)

// configureSwitches are the arguments Configure reads itself rather than
// passing them to the compiler: a debug build (-d builds at -O0, the pyca
// bug by another road), its output switches, and the linker's flags, which
// go into LDFLAGS and LDLIBS and link what a consumer gets.
var configureSwitches = []struct {
	match func(string) bool
	why   string
}{
	{func(f string) bool { return f == "-d" }, "Configure's debug switch: it builds without optimisation"},
	{func(f string) bool { return f == "-t" || f == "-v" || f == "-w" }, "a switch of Configure's, not a compiler flag"},
	{func(f string) bool {
		return strings.HasPrefix(f, "-l") || strings.HasPrefix(f, "-L") || strings.HasPrefix(f, "-Wl,") ||
			f == "-rpath" || f == "-R" || f == "-framework" || f == "-static"
	}, "a linker flag: Configure moves it into LDFLAGS/LDLIBS, and targets take compiler flags only"},
	{func(f string) bool { return strings.HasPrefix(f, "-Wp,") }, "a preprocessor pass-through: it hides flags from this check"},
}

// passThrough are flags whose next argument goes to another tool unread:
// "-Xclang -O0" or "-mllvm -opt-bisect-limit=0" would undo -O3 with
// nothing that looks like -O.
var passThrough = []string{"-Xclang", "-mllvm", "-Xarch_", "-Xassembler", "-Xlinker", "-Xpreprocessor", "-Xcompiler", "-Xopenmp"}

// CheckFlag refuses a target flag that could change how OpenSSL is
// optimised or what Configure does: anything but one compiler flag, an
// optimisation level (OpenSSL's own -O3 must stand), a Configure switch, a
// linker flag, or a pass-through. Flags reach Configure as arguments, never
// as CFLAGS in its environment.
func CheckFlag(f string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("flag %q: %s: %w", f, fmt.Sprintf(format, args...), ErrFlag)
	}
	switch {
	case strings.Contains(f, "="):
		if name, _, _ := strings.Cut(f, "="); !strings.HasPrefix(name, "-") {
			return bad("a variable assignment: Configure would set %s from it (as the CFLAGS that built pyca's OpenSSL at -O0)", name)
		}
	}
	switch {
	case strings.HasPrefix(f, "--"):
		return bad("a Configure option, not a compiler flag (options go in options, and only no-X, enable-X, --libdir= and --api=)")
	case strings.HasPrefix(f, "+"):
		return bad("Configure appends \"+\" flags to its own; a target gives plain compiler flags")
	case !strings.HasPrefix(f, "-"):
		return bad("want one compiler flag starting with -")
	case strings.HasPrefix(f, "-O"):
		return bad("optimisation is OpenSSL's own -O3; a recipe must not override it")
	case strings.ContainsRune(f, '%'):
		return bad("Configure decodes %%xx in a flag into other characters (spaces, more flags)")
	case !flagRe.MatchString(f):
		return bad("want one flag of letters, digits and _.,=+:/@- (no spaces, quotes, $ or backslashes)")
	}
	for _, p := range passThrough {
		if f == p || (strings.HasSuffix(p, "_") && strings.HasPrefix(f, p)) {
			return bad("passes the next argument to another tool unchecked")
		}
	}
	for _, s := range configureSwitches {
		if s.match(f) {
			return bad("%s", s.why)
		}
	}
	return nil
}

// deploymentFlag reports a flag that sets a deployment target or target
// OS version (the platform's min-OS flag, any other platform's, or
// -mtargetos=), which must agree with min_os.
func deploymentFlag(f string) bool {
	name, _, _ := strings.Cut(f, "=")
	return strings.HasSuffix(name, "-version-min") || name == "-mtargetos" || name == "-target" || name == "--target"
}
