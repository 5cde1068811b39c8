package recipe

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/ccflag"
	"github.com/osslbuild/osslbuild/internal/csource"
	"github.com/osslbuild/osslbuild/internal/platform"
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
// bug by another road), its output switches, "-no-X" (which Configure
// rewrites into the option no-X), and the linker's and assembler's
// flags, which go elsewhere or hide flags from this check.
var configureSwitches = []struct {
	match func(string) bool
	why   string
}{
	{func(f string) bool { return f == "-d" }, "Configure's debug switch: it builds without optimisation"},
	{func(f string) bool { return f == "-t" || f == "-v" || f == "-w" }, "a switch of Configure's, not a compiler flag"},
	{func(f string) bool { return strings.HasPrefix(f, "-no-") }, "Configure rewrites -no-X into its option no-X: options go in options"},
	{func(f string) bool {
		return strings.HasPrefix(f, "-l") || strings.HasPrefix(f, "-L") || strings.HasPrefix(f, "-Wl,") ||
			f == "-rpath" || f == "-R" || f == "-framework" || f == "-static"
	}, "a linker flag: Configure moves it into LDFLAGS/LDLIBS, and targets take compiler flags only"},
	{func(f string) bool { return strings.HasPrefix(f, "-Wp,") }, "a preprocessor pass-through: it hides flags from this check"},
	{func(f string) bool { return strings.HasPrefix(f, "-Wa,") }, "an assembler pass-through: it hides flags from this check"},
}

// Flags a recipe may give, by family; anything else is refused. The
// deployment target is not among them: it is min_os, and osslbuild derives
// the flag from it (a target may repeat it in flags, equal).
var (
	defineRe  = regexp.MustCompile(`^-D([A-Za-z_][A-Za-z0-9_]*)(=([A-Za-z0-9_.+-]*))?$`)
	warningRe = regexp.MustCompile(`^-W(no-)?[A-Za-z0-9][A-Za-z0-9_+-]*(=[A-Za-z0-9_.+-]+)?$`)
	// visibility, stack protection and position-independent code: what a
	// consumer linking the static libraries into its own shared object
	// needs, none of it a change of optimisation.
	plainFlags = []string{
		"-fvisibility=hidden", "-fvisibility=default",
		"-fstack-protector", "-fstack-protector-strong", "-fstack-protector-all", "-fstack-clash-protection",
		"-fPIC", "-fpic", "-fPIE", "-fpie",
	}
	// reservedDefines are the names reserved to the implementation a
	// recipe may still define: the C library's feature macros (where the
	// release's sources do not test them, CheckDefines).
	reservedDefines = []string{"_FORTIFY_SOURCE", "_GNU_SOURCE", "_DEFAULT_SOURCE", "_DARWIN_C_SOURCE", "_POSIX_C_SOURCE", "_XOPEN_SOURCE", "_REENTRANT", "_THREAD_SAFE"}
)

// allowedFlags names the families for p, for refusals.
func allowedFlags(p platform.Platform) string {
	var cpu []string
	for _, f := range p.CPUFlags {
		for _, v := range p.CPUs {
			cpu = append(cpu, f+v)
		}
	}
	fams := []string{}
	if p.MinOSFlag != "" {
		fams = append(fams, "the deployment target (from min_os: "+p.MinOSFlag+"MIN_OS)")
	}
	if len(cpu) > 0 {
		fams = append(fams, strings.Join(cpu, ", "))
	}
	fams = append(fams,
		"-fvisibility=hidden|default", "-fstack-protector[-strong|-all]", "-fstack-clash-protection",
		"-fPIC, -fpic, -fPIE, -fpie", "-DNAME or -DNAME=VALUE", "warnings -W... (not -Wl, -Wp, -Wa,)")
	return "a target's flags for " + p.Name + " " + p.Arch + " are " + strings.Join(fams, "; ")
}

// CheckFlag refuses a flag of a target of platform p that is not among
// the families a recipe may give (allowedFlags), naming why: anything
// that loads code or reads a file into the compile, changes code
// generation behind OpenSSL's -O3 (package ccflag names those), is read
// by Configure rather than the compiler, or chooses a CPU the evidence
// cannot hold the code to. The deployment target is checkPlatform's.
// Flags reach Configure as arguments, never as CFLAGS in its environment.
func CheckFlag(p platform.Platform, f string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("flag %q: %s (%s): %w", f, fmt.Sprintf(format, args...), allowedFlags(p), ErrFlag)
	}
	if name, _, ok := strings.Cut(f, "="); ok && !strings.HasPrefix(name, "-") && !strings.HasPrefix(name, "@") {
		return bad("a variable assignment: Configure would set %s from it (as the CFLAGS that built pyca's OpenSSL at -O0)", name)
	}
	if strings.HasPrefix(f, "-O") {
		return bad("optimisation is OpenSSL's own -O3; a recipe must not override it")
	}
	if r, ok := ccflag.Check(f); ok {
		return bad("%s", r)
	}
	switch {
	case strings.HasPrefix(f, "--"):
		return bad("a Configure option, not a compiler flag (options go in options, and only no-X, enable-X, --libdir= and --api=)")
	case strings.HasPrefix(f, "+"):
		return bad("Configure appends \"+\" flags to its own; a target gives plain compiler flags")
	case !strings.HasPrefix(f, "-"):
		return bad("want one compiler flag starting with -")
	case strings.ContainsRune(f, '%'):
		return bad("Configure decodes %%xx in a flag into other characters (spaces, more flags)")
	case !flagRe.MatchString(f):
		return bad("want one flag of letters, digits and _.,=+:/@- (no spaces, quotes, $ or backslashes)")
	}
	for _, s := range configureSwitches {
		if s.match(f) {
			return bad("%s", s.why)
		}
	}
	if slices.Contains(plainFlags, f) {
		return nil
	}
	if name, v, ok := strings.Cut(f, "="); ok && slices.Contains([]string{"-march", "-mtune", "-mcpu"}, name) {
		return checkCPU(p, name+"=", v, bad)
	}
	if m := defineRe.FindStringSubmatch(f); m != nil {
		return checkDefine(m[1], bad)
	}
	if strings.HasPrefix(f, "-D") {
		return bad("want -DNAME or -DNAME=VALUE, a C identifier and a value of letters, digits and _.+-")
	}
	if warningRe.MatchString(f) {
		return nil
	}
	if strings.HasPrefix(f, "-I") || strings.HasPrefix(f, "-isystem") || strings.HasPrefix(f, "-iquote") ||
		strings.HasPrefix(f, "-idirafter") || strings.HasPrefix(f, "-iprefix") || strings.HasPrefix(f, "-iwithprefix") ||
		strings.HasPrefix(f, "-isysroot") || strings.HasPrefix(f, "-F") {
		return bad("%s: an include path: headers found there are read into the compile (one holding #pragma clang optimize off would undo -O3 unseen), and OpenSSL's include paths are its own", ccflag.ReadsFile)
	}
	if strings.HasPrefix(f, "-U") {
		return bad("%s: undefines a macro OpenSSL or the compiler sets, and the sources choose their code by it", ccflag.ChangesCodegen)
	}
	return bad("not a flag of the families a recipe may give")
}

// checkCPU allows flag (-march=, -mtune=, -mcpu=) value v where the
// platform lists both: a level validation proves the code stays within.
func checkCPU(p platform.Platform, flag, v string, bad func(string, ...any) error) error {
	if slices.Contains(p.CPUFlags, flag) && slices.Contains(p.CPUs, v) {
		return nil
	}
	switch {
	case v == "native":
		return bad("%snative is machine-dependent: it names the CPU of whichever machine builds, and no level validation can hold the code to", flag)
	case len(p.CPUFlags) == 0:
		return bad("%s %s has no CPU levels osslbuild proves, so it takes no %s", p.Name, p.Arch, flag)
	case !slices.Contains(p.CPUFlags, flag):
		return bad("%s %s chooses its CPU with %s, not %s", p.Name, p.Arch, strings.Join(p.CPUFlags, " and "), flag)
	case p.ISA == "":
		return bad("%s %s has no instruction-set level decoder yet, so validation cannot prove code stays within %q: only %s, the baseline every %s %s machine runs, is provable", p.Name, p.Arch, v, strings.Join(p.CPUs, ", "), p.Name, p.Arch)
	}
	return bad("%q is not an instruction-set level validation proves (it proves %s)", v, strings.Join(p.CPUs, ", "))
}

// checkDefine holds -DNAME to names not reserved to the compiler and C
// library; which names the release's sources choose code by is
// CheckDefines's to say, once they are read.
func checkDefine(name string, bad func(string, ...any) error) error {
	if (strings.HasPrefix(name, "__") || (len(name) > 1 && name[0] == '_' && name[1] >= 'A' && name[1] <= 'Z')) && !slices.Contains(reservedDefines, name) {
		return bad("%s: %s is reserved to the compiler and C library (__OPTIMIZE__, __SSE2__ ... choose which code the sources take); of the reserved names only %s may be defined", ccflag.ChangesCodegen, name, strings.Join(reservedDefines, ", "))
	}
	return nil
}

// CheckDefines holds the plan's defines to the release's sources in src
// (unpacked and patched, before Configure): a define the sources test in
// a conditional (#if, #ifdef, #ifndef, #elif: csource.Tests) switches
// their code on or off behind Configure's back (-DPEDANTIC drops the
// inline assembly, -DI386_ONLY AES-NI's and CLMUL's GHASH,
// -DOPENSSL_SMALL_FOOTPRINT the unrolled loops) and is refused, naming
// the recipe's line and the release's. A test that only gives the name a
// default value sets a parameter (-DOPENSSL_TLS_SECURITY_LEVEL=2), and a
// name the sources never test reaches no choice of theirs.
func (p *Plan) CheckDefines(src fs.FS) error {
	names := map[int]string{}
	var list []string
	for i, f := range p.Slice.Flags {
		if m := defineRe.FindStringSubmatch(f); m != nil {
			names[i] = m[1]
			list = append(list, m[1])
		}
	}
	if len(list) == 0 {
		return nil
	}
	tests, err := csource.Tests(src, list...)
	if err != nil {
		return fmt.Errorf("OpenSSL %s: reading its sources for the recipe's defines: %w", p.Release.Version, err)
	}
	var errs []error
	for i, f := range p.Slice.Flags {
		name, ok := names[i]
		if !ok {
			continue
		}
		for _, t := range tests[name] {
			if t.Default {
				continue
			}
			instead := "leave it out"
			if o, ok := strings.CutPrefix(name, "OPENSSL_NO_"); ok {
				instead = "give the option no-" + strings.ToLower(strings.ReplaceAll(o, "_", "-")) + ", which the release's Configure knows and checks"
			}
			errs = append(errs, fmt.Errorf("recipe %s: flag %q: OpenSSL %s chooses its code by %s (%s: %s): a define the release's sources test switches code on or off behind Configure and validation; a recipe may define only names the sources do not test, or set a parameter they give a default (#ifndef NAME, #define NAME value, #endif): %s: %w",
				p.Recipe.flagWhere(p.Slice.Name, i), f, p.Release.Version, name, t.Where(), t.Text, instead, ErrFlag))
			break
		}
	}
	return errors.Join(errs...)
}

// flagWhere places flag i of target's flags: "file:line: key", or the
// file alone for a flag the file does not write.
func (r *Recipe) flagWhere(target string, i int) string {
	if keys := r.Targets[target].flagKeys; i < len(keys) && keys[i] != "" {
		return r.lines.where(r.Path, keys[i]) + ": " + keys[i]
	}
	return r.Path
}

// deploymentFlag reports a flag that sets a deployment target or target
// OS version (the platform's min-OS flag, any other platform's, or
// -mtargetos=), which must agree with min_os.
func deploymentFlag(f string) bool {
	name, _, _ := strings.Cut(f, "=")
	return strings.HasSuffix(name, "-version-min") || name == "-mtargetos" || name == "-target" || name == "--target"
}
