// Package validate holds the facts package inspect reads from a static
// library against what the Plan says it must be, and reports every
// violation, not just the first, in words a person can act on.
//
// The single-slice build, the universal2 merge and the `check` target all
// call it: StaticLibrary for one architecture, Universal for a fat file, and
// Validate when the caller has already inspected the file.
package validate

import (
	"debug/elf"
	"debug/macho"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// ErrInvalid is matched (errors.Is) by every error saying that a library
// breaks its expectation or cannot be parsed at all. I/O errors and bad
// expectations are not ErrInvalid.
var ErrInvalid = errors.New("library does not meet its expectation")

// Expect is what one architecture slice of a static library must be. The
// Plan that produced the Configure argv fills it, so the build is checked
// against the same source of truth that drove it.
type Expect struct {
	// OS is "macos" (Mach-O objects; the default when empty) or "linux"
	// (ELF relocatable objects; MinOS does not apply).
	OS       string
	Arch     string           // Mach-O name: "arm64" or "x86_64"; required
	MinOS    string           // deployment target, e.g. "11.0": every object's minos must equal it (platform macOS); "" skips the check
	Platform string           // Configure target expected after "platform: ", e.g. "darwin64-arm64-cc"; "" skips the check
	MinOpt   inspect.OptLevel // minimum effective optimisation of the compiler line, e.g. inspect.O3
	Flags    []string         // each must appear in the compiler line, e.g. "-mmacosx-version-min=11.0"; "-arch X" is always required
	// RequireCompilerLine demands exactly one "compiler: " line (libcrypto).
	// libssl has none; leave it false there. A line that is present is
	// checked either way, and more than one is always a violation.
	RequireCompilerLine bool
	// NoOptFlag turns the optimisation rule around: the compiler line must
	// carry no -O flag at all. Only the pyca-way build, which reproduces the
	// -O0 bug on purpose, expects that.
	NoOptFlag bool
}

// Rule names the kind of a violation, for callers that group or filter.
type Rule string

const (
	RuleFormat       Rule = "format"            // not a static library of Mach-O objects, or unparsable
	RuleSlices       Rule = "slices"            // universal file with a missing, extra or duplicate slice
	RuleCPU          Rule = "cpu"               // object of the wrong CPU type
	RuleFileType     Rule = "filetype"          // Mach-O file that is not an object (MH_OBJECT)
	RuleDeployment   Rule = "deployment-target" // LC_BUILD_VERSION / LC_VERSION_MIN_MACOSX missing, wrong platform or minos
	RuleCompilerLine Rule = "compiler-line"     // no compiler line, or more than one
	RuleOptimisation Rule = "optimisation"      // effective -O below the minimum
	RuleArchFlag     Rule = "arch-flag"         // compiler line lacks "-arch <arch>" or names another arch
	RuleFlag         Rule = "flag"              // compiler line lacks an expected flag
	RulePlatform     Rule = "platform"          // "platform: " missing or not the expected Configure target
)

// Violation is one broken rule, located as precisely as the facts allow.
type Violation struct {
	Library  string // file name, e.g. "libcrypto.a"
	Member   string // archive member, "" when the violation concerns the whole slice
	Arch     string // the slice's architecture (the expected one for a missing slice)
	Rule     Rule
	Expected string // what the expectation asked for
	Found    string // what the file holds
	Detail   string // the sentence for people, without the location
}

// String renders `libcrypto.a(member.o) arm64: detail`.
func (v Violation) String() string {
	loc := v.Library
	if v.Member != "" {
		loc += "(" + v.Member + ")"
	}
	if v.Arch != "" {
		loc += " " + v.Arch
	}
	return loc + ": " + v.Detail
}

// Report is the outcome of validating one file.
type Report struct {
	Path       string
	File       *inspect.File // the facts validated; nil when inspection failed
	Violations []Violation
}

// OK reports whether the file met every expectation.
func (r Report) OK() bool { return len(r.Violations) == 0 }

// Err is nil when OK, else an *Error listing every violation.
func (r Report) Err() error {
	if r.OK() {
		return nil
	}
	return &Error{Path: r.Path, Violations: r.Violations}
}

// Error carries every violation of one file. errors.Is(err, ErrInvalid) holds.
type Error struct {
	Path       string
	Violations []Violation
}

// maxListed bounds the violations spelt out in Error(); a library of 1,000
// objects built for the wrong minos would otherwise print 1,000 lines. The
// full list stays in Violations.
const maxListed = 20

func (e *Error) Error() string {
	if len(e.Violations) == 1 {
		return "validate " + e.Violations[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "validate %s: %d violations:", e.Path, len(e.Violations))
	for i, v := range e.Violations {
		if i == maxListed {
			fmt.Fprintf(&b, "\n\t... and %d more", len(e.Violations)-maxListed)
			break
		}
		b.WriteString("\n\t")
		b.WriteString(v.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) hold.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// StaticLibrary validates a single-architecture static library: a thin ar
// archive, or a universal file holding exactly the one slice exp.Arch.
func StaticLibrary(path string, exp Expect) (Report, error) {
	return inspectAndValidate(path, []Expect{exp}, false)
}

// Universal validates a universal static library: it must be a fat file with
// exactly one slice per expectation, each slice held against its Expect.
func Universal(path string, exps []Expect) (Report, error) {
	return inspectAndValidate(path, exps, true)
}

func inspectAndValidate(path string, exps []Expect, wantFat bool) (Report, error) {
	if err := checkExpects(exps); err != nil {
		return Report{Path: path}, err
	}
	f, err := inspect.Inspect(path)
	if err != nil {
		if errors.Is(err, inspect.ErrMalformed) || errors.Is(err, inspect.ErrUnknownFormat) {
			// Unreadable as a library is a verdict on the file, not an I/O failure.
			return Report{Path: path}, fmt.Errorf("validate: %w: %w", ErrInvalid, err)
		}
		return Report{Path: path}, fmt.Errorf("validate: %w", err)
	}
	r, err := validate(f, exps, wantFat)
	if err != nil {
		return r, err
	}
	return r, r.Err()
}

// Validate holds already-inspected facts against the expectations: one
// Expect for a thin library (or a one-slice universal file), one per slice
// for a universal file. The error is only for invalid expectations; the
// verdict is in the Report (see Report.Err).
func Validate(f *inspect.File, exps ...Expect) (Report, error) {
	if err := checkExpects(exps); err != nil {
		return Report{Path: f.Path, File: f}, err
	}
	return validate(f, exps, false)
}

// checkExpects rejects expectations that cannot be a Plan's: these are bugs
// in the caller, so they are plain errors, not violations.
func checkExpects(exps []Expect) error {
	if len(exps) == 0 {
		return errors.New("validate: no expectation given")
	}
	seen := map[string]bool{}
	for i, e := range exps {
		if e.Arch == "" {
			return fmt.Errorf("validate: expectation %d: Arch is empty", i)
		}
		if seen[e.Arch] {
			return fmt.Errorf("validate: expectation %d: Arch %s given twice", i, e.Arch)
		}
		seen[e.Arch] = true
		if e.MinOS != "" {
			if _, err := inspect.ParseVersion(e.MinOS); err != nil {
				return fmt.Errorf("validate: expectation %s: MinOS: %w", e.Arch, err)
			}
		}
	}
	return nil
}

func validate(f *inspect.File, exps []Expect, wantFat bool) (Report, error) {
	r := Report{Path: f.Path, File: f}
	v := &checker{lib: filepath.Base(f.Path)}
	archs := make([]string, len(exps))
	for i, e := range exps {
		archs[i] = e.Arch
	}
	want := strings.Join(archs, ", ")

	if f.Format != inspect.FormatFat {
		switch {
		case wantFat || len(exps) > 1:
			v.add("", "", RuleFormat, "universal file with slices "+want, "thin "+string(f.Format),
				"expected a universal file with slices %s, found a thin %s file", want, f.Format)
		case len(f.Slices) == 1:
			v.slice(f.Slices[0], exps[0])
		}
		r.Violations = v.out
		return r, nil
	}

	// A universal file must hold exactly the expected set of slices.
	var have []string
	count := map[string]int{}
	for _, s := range f.Slices {
		have = append(have, s.Arch)
		count[s.Arch]++
	}
	slices.Sort(have) // stable messages whatever order lipo wrote
	haveS := strings.Join(have, ", ")
	for _, e := range exps {
		if count[e.Arch] == 0 {
			v.add(e.Arch, "", RuleSlices, e.Arch+" slice", haveS,
				"universal file has no %s slice: expected slices %s, found %s", e.Arch, want, haveS)
		}
	}
	done := map[string]bool{}
	for _, s := range f.Slices {
		i := slices.IndexFunc(exps, func(e Expect) bool { return e.Arch == s.Arch })
		switch {
		case i < 0:
			v.add(s.Arch, "", RuleSlices, want, haveS,
				"unexpected %s slice: expected slices %s, found %s", s.Arch, want, haveS)
		case done[s.Arch]:
			v.add(s.Arch, "", RuleSlices, "one "+s.Arch+" slice", fmt.Sprintf("%d", count[s.Arch]),
				"universal file has %d %s slices, expected one", count[s.Arch], s.Arch)
		default:
			done[s.Arch] = true
			v.slice(s, exps[i])
		}
	}
	r.Violations = v.out
	return r, nil
}

// checker accumulates violations for one library.
type checker struct {
	lib string
	out []Violation
}

func (c *checker) add(arch, member string, rule Rule, expected, found, format string, args ...any) {
	c.out = append(c.out, Violation{Library: c.lib, Member: member, Arch: arch, Rule: rule,
		Expected: expected, Found: found, Detail: fmt.Sprintf(format, args...)})
}

// slice applies the static-library rules to one architecture slice.
func (c *checker) slice(s inspect.Slice, exp Expect) {
	arch := exp.Arch
	if s.Format != inspect.FormatAr {
		c.add(arch, "", RuleFormat, "ar archive", string(s.Format),
			"expected a static library (ar archive), found a %s file", s.Format)
	} else if len(s.Objects) == 0 {
		c.add(arch, "", RuleFormat, "object members", "none", "archive has no object members")
	}
	minos, _ := inspect.ParseVersion(exp.MinOS) // checked by checkExpects
	for _, o := range s.Objects {
		c.object(arch, o, exp, minos)
	}
	c.compilerLines(arch, s.BuildInfo, exp)
	c.platform(arch, s.BuildInfo, exp)
}

func (c *checker) object(arch string, o inspect.Object, exp Expect, minos inspect.Version) {
	if o.Err != nil {
		msg := o.Err.Error()
		var fe *inspect.FormatError
		if errors.As(o.Err, &fe) {
			msg = fmt.Sprintf("at file offset %d: %s", fe.Offset, fe.Msg)
		}
		c.add(arch, o.Member, RuleFormat, "a well-formed "+string(o.Format)+" object", "malformed",
			"cannot parse %s object: %s", o.Format, msg)
		return
	}
	if exp.OS == "linux" {
		c.elfObject(arch, o, exp)
		return
	}
	m := o.MachO
	if m == nil {
		c.add(arch, o.Member, RuleFormat, "Mach-O object", string(o.Format),
			"expected a Mach-O object, found %s (first bytes %x)", describe(o), o.Magic)
		return
	}
	if m.Arch != exp.Arch {
		c.add(arch, o.Member, RuleCPU, exp.Arch, m.Arch, "CPU type is %s, expected %s", m.Arch, exp.Arch)
	}
	if m.Type != macho.TypeObj {
		c.add(arch, o.Member, RuleFileType, "object", m.TypeName(), "Mach-O file type is %s, expected object (MH_OBJECT)", m.TypeName())
	}
	if len(m.Versions) == 0 {
		c.add(arch, o.Member, RuleDeployment, "macOS "+exp.MinOS, "none",
			"has no deployment target (no LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX), expected macOS %s", exp.MinOS)
	}
	for _, v := range m.Versions {
		if v.Platform != inspect.PlatformMacOS {
			c.add(arch, o.Member, RuleDeployment, "macOS", v.Platform.String(),
				"%s platform is %s, expected macOS", v.CmdName(), v.Platform)
			continue
		}
		if exp.MinOS != "" && v.MinOS != minos {
			c.add(arch, o.Member, RuleDeployment, exp.MinOS, v.MinOS.String(),
				"%s minos is %s, expected %s", v.CmdName(), v.MinOS, exp.MinOS)
		}
	}
}

// elfObject holds an object of a Linux static library to its expectation:
// an ELF relocatable object for the expected architecture.
func (c *checker) elfObject(arch string, o inspect.Object, exp Expect) {
	e := o.ELF
	if e == nil {
		c.add(arch, o.Member, RuleFormat, "ELF object", string(o.Format),
			"expected an ELF object, found %s (first bytes %x)", describe(o), o.Magic)
		return
	}
	if e.Arch != exp.Arch {
		c.add(arch, o.Member, RuleCPU, exp.Arch, e.Arch, "ELF machine is %s, expected %s", e.Arch, exp.Arch)
	}
	if e.Type != elf.ET_REL {
		c.add(arch, o.Member, RuleFileType, "relocatable", e.TypeName(), "ELF file type is %s, expected relocatable (ET_REL)", e.TypeName())
	}
}

func describe(o inspect.Object) string {
	if o.ELF != nil {
		return fmt.Sprintf("an ELF %s for %s", o.ELF.TypeName(), o.ELF.Arch)
	}
	if o.Format == inspect.FormatUnknown {
		return "an unrecognised file"
	}
	return "a " + string(o.Format) + " file"
}

func (c *checker) compilerLines(arch string, infos []inspect.BuildInfo, exp Expect) {
	var lines []inspect.BuildInfo
	for _, b := range infos {
		if b.Kind == inspect.InfoCompiler {
			lines = append(lines, b)
		}
	}
	switch {
	case len(lines) == 0 && exp.RequireCompilerLine:
		c.add(arch, "", RuleCompilerLine, "one \"compiler: \" line", "none",
			"no \"compiler: \" line found, expected exactly one (OpenSSL embeds it from crypto/buildinf.h)")
	case len(lines) > 1:
		var where []string
		for _, l := range lines {
			where = append(where, fmt.Sprintf("%s at offset %d", orSlice(l.Member), l.Offset))
		}
		c.add(arch, "", RuleCompilerLine, "one \"compiler: \" line", fmt.Sprintf("%d", len(lines)),
			"found %d \"compiler: \" lines, expected exactly one: in %s", len(lines), strings.Join(where, "; "))
	}
	// Identical copies are checked once, at their first location.
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l.Value] {
			continue
		}
		seen[l.Value] = true
		c.compilerLine(arch, l, exp)
	}
}

func orSlice(member string) string {
	if member == "" {
		return "the file"
	}
	return member
}

func (c *checker) compilerLine(arch string, l inspect.BuildInfo, exp Expect) {
	cl := inspect.ParseCompilerLine(l.Value)
	q := fmt.Sprintf("%q", l.Value)
	if l.Truncated {
		c.add(arch, l.Member, RuleCompilerLine, "a compiler line", "truncated",
			"compiler line is longer than %d bytes and was cut: %s", inspect.MaxBuildInfoLen, q)
	}
	switch {
	case exp.NoOptFlag:
		if cl.OptFlag != "" {
			c.add(arch, l.Member, RuleOptimisation, "no -O flag", cl.OptFlag,
				"compiler line has %q, expected none (a build made the pyca way, without optimisation): %s", cl.OptFlag, q)
		}
	case !cl.Opt.AtLeast(exp.MinOpt):
		if cl.OptFlag == "" {
			c.add(arch, l.Member, RuleOptimisation, "at least "+exp.MinOpt.String(), "no -O flag (-O0)",
				"compiler line has no -O flag (built without optimisation (-O0)), expected at least %s: %s", exp.MinOpt, q)
		} else {
			c.add(arch, l.Member, RuleOptimisation, "at least "+exp.MinOpt.String(), cl.OptFlag,
				"compiler line optimises at %s (last -O flag %q), expected at least %s: %s", cl.Opt, cl.OptFlag, exp.MinOpt, q)
		}
	}
	// Only Apple's compilers take -arch; a Linux compiler line has none.
	if exp.OS != "linux" && (len(cl.Archs) != 1 || cl.Archs[0] != arch) {
		found := "no -arch"
		if len(cl.Archs) > 0 {
			found = "-arch " + strings.Join(cl.Archs, " -arch ")
		}
		c.add(arch, l.Member, RuleArchFlag, "-arch "+arch, found,
			"compiler line has %s, expected exactly -arch %s: %s", found, arch, q)
	}
	for _, f := range exp.Flags {
		if !cl.Has(f) {
			c.add(arch, l.Member, RuleFlag, f, "absent", "compiler line lacks %q: %s", f, q)
		}
	}
}

func (c *checker) platform(arch string, infos []inspect.BuildInfo, exp Expect) {
	if exp.Platform == "" {
		return
	}
	n := 0
	seen := map[string]bool{}
	for _, b := range infos {
		if b.Kind != inspect.InfoPlatform {
			continue
		}
		n++
		if b.Value != exp.Platform && !seen[b.Value] {
			seen[b.Value] = true
			c.add(arch, b.Member, RulePlatform, exp.Platform, b.Value,
				"built for Configure target %q, expected %q", b.Value, exp.Platform)
		}
	}
	if n == 0 {
		c.add(arch, "", RulePlatform, exp.Platform, "none",
			"no \"platform: \" string found, expected \"platform: %s\"", exp.Platform)
	}
}
