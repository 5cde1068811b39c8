package validate

import (
	"cmp"
	"debug/elf"
	"debug/macho"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/codeclass"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/platform"
)

// checker accumulates violations for one file. static turns on the rules
// for a static library built to a Plan: ar format, relocatable objects,
// every object's CPU and deployment target, exactly one compiler line
// carrying the Plan's flags.
type checker struct {
	lib    string
	static bool // a static library: objects (MH_OBJECT) only
	dylib  bool // a shared library the build made: one MH_DYLIB (ET_DYN) per slice, signed on arm64
	out    []Violation
}

func (c *checker) add(arch, member string, rule Rule, expected, found, format string, args ...any) {
	c.out = append(c.out, Violation{Library: c.lib, Member: member, Arch: arch, Rule: rule,
		Expected: expected, Found: found, Detail: fmt.Sprintf(format, args...)})
}

// verdict weighs a slice's optimisation evidence against exp.MinOpt.
func (c *checker) verdict(s inspect.Slice, exp Expect) SliceReport {
	r := SliceReport{Arch: sliceArch(s), Opt: judgeOpt(evidence(s, c.static), exp.MinOpt), Libcrypto: inspect.HoldsLibcryptoInfo(s.BuildInfo)}
	if r.Opt.Status == OptUnknown {
		r.Unknown = unknownReason(s)
	}
	return r
}

// slice applies the rules to one architecture slice.
func (c *checker) slice(s inspect.Slice, exp Expect) SliceReport {
	arch := cmp.Or(exp.Slice.Arch, sliceArch(s))
	if c.static {
		if s.Format != inspect.FormatAr {
			c.add(arch, "", RuleFormat, "ar archive", string(s.Format),
				"expected a static library (ar archive), found a %s file", s.Format)
		} else if len(s.Objects) == 0 {
			c.add(arch, "", RuleFormat, "object members", "none", "archive has no object members")
		}
	}
	v, _ := platform.ParseMinOS(exp.Slice.MinOS) // checked by checkExpects; 0 for none
	minos := inspect.Version(v)
	for _, o := range s.Objects {
		c.object(arch, o, exp, minos)
	}
	// Linked images: their signature, where the slice is OpenSSL's code
	// (check leaves a bundle's other libraries unjudged).
	if !c.static && (c.dylib || HoldsOpenSSL(s)) {
		for _, o := range s.Objects {
			c.signature(arch, o, c.dylib)
		}
	}
	r := c.verdict(s, exp)
	c.optimisation(arch, s, exp, r)
	c.isa(arch, s, exp.ISA, &r)
	if c.static || c.dylib {
		c.compilerLine(arch, s, exp)
		c.refusedFlags(arch, s)
	} else {
		c.claims(arch, s, exp, &r)
	}
	c.platform(arch, s.BuildInfo, exp)
	c.version(arch, s.BuildInfo, exp)
	return r
}

func (c *checker) object(arch string, o inspect.Object, exp Expect, minos inspect.Version) {
	if o.Err != nil {
		msg := o.Err.Error()
		if fe, ok := errors.AsType[*inspect.FormatError](o.Err); ok {
			msg = fmt.Sprintf("at file offset %d: %s", fe.Offset, fe.Msg)
		}
		c.add(arch, o.Member, RuleFormat, "a well-formed "+string(o.Format)+" object", "malformed",
			"cannot parse %s object: %s", o.Format, msg)
		return
	}
	if !c.static && !c.dylib {
		return // any binary: its slice is what it is
	}
	if exp.elf() {
		// An object of a Linux library: an ELF relocatable object for the
		// expected architecture; for a shared library, a shared object.
		var h objectHeader
		if e := o.ELF; e != nil {
			h = objectHeader{e.Arch, e.TypeName(), e.Type == elf.ET_DYN, e.Type == elf.ET_REL, true}
		}
		c.header(arch, o, exp, elfHeader, h)
		return
	}
	m := o.MachO
	if m == nil {
		c.header(arch, o, exp, machoHeader, objectHeader{})
		return
	}
	c.header(arch, o, exp, machoHeader, objectHeader{m.Arch, m.TypeName(), m.Type == macho.TypeDylib, m.Type == macho.TypeObj, true})
	if len(m.Versions) == 0 {
		c.add(arch, o.Member, RuleDeployment, "macOS "+exp.Slice.MinOS, "none",
			"has no deployment target (no LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX), expected macOS %s", exp.Slice.MinOS)
	}
	for _, v := range m.Versions {
		if v.Platform != inspect.PlatformMacOS {
			c.add(arch, o.Member, RuleDeployment, "macOS", v.Platform.String(),
				"%s platform is %s, expected macOS", v.CmdName(), v.Platform)
			continue
		}
		if exp.Slice.MinOS != "" && v.MinOS != minos {
			c.add(arch, o.Member, RuleDeployment, exp.Slice.MinOS, v.MinOS.String(),
				"%s minos is %s, expected %s", v.CmdName(), v.MinOS, exp.Slice.MinOS)
		}
	}
}

// headerRules are one format's words for the rules its object headers are
// held to (checker.header).
type headerRules struct {
	format, article string // "Mach-O", "a"
	cpu             string // what the format calls the architecture field
	// The file types wanted, as the violation names them and as the
	// format spells the constant: a shared library's image, and a static
	// library's member.
	shared, sharedConst, member, memberConst string
}

var (
	machoHeader = headerRules{"Mach-O", "a", "CPU type", "dylib", "MH_DYLIB", "object", "MH_OBJECT"}
	elfHeader   = headerRules{"ELF", "an", "ELF machine", "shared object", "ET_DYN", "relocatable", "ET_REL"}
)

// objectHeader is what both formats' headers say: the architecture, the
// file type by name and whether it is the shared or the member type; ok
// is false when the object is not of the expected format at all.
type objectHeader struct {
	arch, typeName string
	shared, member bool
	ok             bool
}

// header holds an object's header to the rules both formats share: the
// expected format, the expected architecture, and the file type (the
// shared type in a shared library, the member type in a static one).
func (c *checker) header(arch string, o inspect.Object, exp Expect, r headerRules, h objectHeader) {
	if !h.ok {
		c.add(arch, o.Member, RuleFormat, r.format+" object", string(o.Format),
			"expected %s %s object, found %s (first bytes %x)", r.article, r.format, describe(o), o.Magic)
		return
	}
	if !SameArch(h.arch, exp.Slice.Arch) {
		c.add(arch, o.Member, RuleCPU, exp.Slice.Arch, h.arch, "%s is %s, expected %s", r.cpu, h.arch, exp.Slice.Arch)
	}
	switch {
	case c.dylib && !h.shared:
		c.add(arch, o.Member, RuleFileType, r.shared, h.typeName, "%s file type is %s, expected %s (%s)", r.format, h.typeName, r.shared, r.sharedConst)
	case !c.dylib && !h.member:
		c.add(arch, o.Member, RuleFileType, r.member, h.typeName, "%s file type is %s, expected %s (%s)", r.format, h.typeName, r.member, r.memberConst)
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

// optimisation turns the slice's verdict into violations: evidence below
// the minimum always; unknown when a line is required or Strict.
func (c *checker) optimisation(arch string, s inspect.Slice, exp Expect, r SliceReport) {
	v := r.Opt
	min := exp.MinOpt.String()
	line, code := contradiction(v.Evidence)
	if line != nil {
		says := "has no -O flag (-O0)"
		if line.Flag != "" {
			says = "says " + line.Flag
		}
		looks := "-O0"
		if code.Optimised {
			looks = "optimised"
		}
		c.add(arch, line.Member, RuleOptimisation, "machine code that agrees with the compiler line", "code "+string(code.Code.Class),
			"compiler line %s but the machine code looks %s (score %.2f over %s): %q",
			says, looks, code.Code.Score, inspect.Plural(code.Code.Functions, "function"), strings.TrimPrefix(line.Detail, "compiler: "))
	}
	if exp.NoOptFlag {
		// The pyca-way build: its own line must carry no -O flag at all.
		if l := s.Record.Compiler(); l != nil {
			if cl := inspect.ParseCompilerLine(l.Text); cl.OptFlag != "" {
				c.add(arch, l.Member, RuleOptimisation, "no -O flag", cl.OptFlag,
					"compiler line has %q, expected none (a build made the pyca way, without optimisation): %q", cl.OptFlag, l.Text)
			}
		}
		// ... and its code must look unoptimised too.
		if s.Code != nil && s.Code.Class == inspect.CodeOptimised && line == nil {
			c.add(arch, "", RuleOptimisation, "-O0-like machine code", string(s.Code.Class),
				"the machine code looks optimised (score %.2f over %s), expected a build without optimisation (the pyca way)",
				s.Code.Score, inspect.Plural(s.Code.Functions, "function"))
		}
		return
	}
	switch v.Status {
	case OptBelow:
		// The code's own violation only where no line shows a level: a
		// line that does is reported below, or contradicted above.
		lineKnown := slices.ContainsFunc(v.Evidence, func(e Evidence) bool { return e.Known && e.Source == SourceCompilerLine })
		for _, e := range v.Evidence {
			if !e.Known || e.Optimised || Satisfies(e.Level, exp.MinOpt) {
				continue
			}
			if e.Source == SourceMachineCode {
				if !lineKnown {
					c.add(arch, "", RuleOptimisation, "at least "+min, "code "+string(e.Code.Class),
						"the machine code looks -O0 (score %.2f over %s, -O0-like from %.2f), expected at least %s",
						e.Code.Score, inspect.Plural(e.Code.Functions, "function"), codeclass.O0Threshold, min)
				}
				continue
			}
			q := fmt.Sprintf("%q", strings.TrimPrefix(e.Detail, "compiler: "))
			if e.Flag == "" {
				c.add(arch, e.Member, RuleOptimisation, "at least "+min, "no -O flag (-O0)",
					"compiler line has no -O flag (built without optimisation (-O0)), expected at least %s: %s", min, q)
			} else {
				c.add(arch, e.Member, RuleOptimisation, "at least "+min, e.Flag,
					"compiler line optimises at %s (last -O flag %q), expected at least %s: %s", e.Level, e.Flag, min, q)
			}
		}
	}
	// The build's libcrypto must record its line whatever its code says.
	l := s.Record.Compiler()
	switch {
	case exp.RequireCompilerLine && l == nil:
		c.add(arch, "", RuleCompilerLine, "one \"compiler: \" line", "none",
			"no \"compiler: \" line found, expected exactly one (OpenSSL embeds it from crypto/buildinf.h)")
	case exp.RequireCompilerLine && l.Placeholder:
		c.add(arch, l.Member, RuleCompilerLine, "a compiler line with the build's flags", l.Text,
			"compiler line records no flags (%q), expected the build's", l.Text)
	case exp.Strict && v.Status == OptUnknown:
		member := ""
		if l != nil {
			member = l.Member
		}
		c.add(arch, member, RuleCompilerLine, "evidence of at least "+min, "unknown",
			"%s (unknown fails with -strict)", r.Unknown)
	}
}

// compilerLine holds the build's own line to the Plan: exactly one, not
// cut, for this architecture, with the Plan's flags.
func (c *checker) compilerLine(arch string, s inspect.Slice, exp Expect) {
	if n := len(s.Record.Candidates); n > 1 && !(exp.NoOptFlag && identical(s.Record.Candidates)) {
		var where []string
		for _, l := range s.BuildInfo { // in file order
			if l.Kind == inspect.InfoCompiler {
				where = append(where, fmt.Sprintf("%s at offset %d", cmp.Or(l.Member, "the file"), l.Offset))
			}
		}
		c.add(arch, "", RuleCompilerLine, "one \"compiler: \" line", fmt.Sprintf("%d", n),
			"found %d \"compiler: \" lines, expected exactly one: in %s", n, strings.Join(where, "; "))
	}
	l := s.Record.Compiler()
	if l == nil || l.Placeholder {
		return
	}
	cl := inspect.ParseCompilerLine(l.Value)
	q := fmt.Sprintf("%q", l.Value)
	if l.Truncated {
		c.add(arch, l.Member, RuleCompilerLine, "a compiler line", "truncated",
			"compiler line is longer than %d bytes and was cut: %s", inspect.MaxBuildInfoLen, q)
	}
	// Only Apple's compilers take -arch; a Linux compiler line has none.
	if !exp.elf() && (len(cl.Archs) != 1 || !SameArch(cl.Archs[0], arch)) {
		found := "no -arch"
		if len(cl.Archs) > 0 {
			found = "-arch " + strings.Join(cl.Archs, " -arch ")
		}
		c.add(arch, l.Member, RuleArchFlag, "-arch "+arch, found,
			"compiler line has %s, expected exactly -arch %s: %s", found, arch, q)
	}
	for _, f := range exp.Slice.Flags {
		if !cl.Has(f) {
			c.add(arch, l.Member, RuleFlag, f, "absent", "compiler line lacks %q: %s", f, q)
		}
	}
}

// claims holds a foreign binary's compiler line to its own image (the
// build's libraries are held to their Plan exactly, by compilerLine and
// object): a deployment target above the image's minimum macOS is code
// compiled for a newer macOS in an image that claims to run on an older
// one (the reverse is every wheel: OpenSSL built for 10.9, linked for
// 11.0), and an -arch that is not the slice's is another slice's line.
// Violations with Strict, else the slice's Claims.
func (c *checker) claims(arch string, s inspect.Slice, exp Expect, r *SliceReport) {
	l := s.Record.Compiler()
	if l == nil || l.Placeholder {
		return
	}
	cl := inspect.ParseCompilerLine(l.Value)
	q := fmt.Sprintf("%q", l.Value)
	claims := &checker{lib: c.lib}
	if len(cl.Archs) > 0 && !slices.ContainsFunc(cl.Archs, func(a string) bool { return SameArch(a, arch) }) {
		found := "-arch " + strings.Join(cl.Archs, " -arch ")
		claims.add(arch, l.Member, RuleArchFlag, "-arch "+arch, found, "compiler line says %s but the slice is %s: %s", found, arch, q)
	}
	if w, err := platform.ParseMinOS(cl.MinOS); err == nil {
		if v, member, ok := lowestMacOS(s); ok && inspect.Version(w) > v.MinOS {
			where := "the image's"
			if member != "" {
				where = member + "'s"
			}
			claims.add(arch, l.Member, RuleDeployment, "at most "+v.MinOS.String(), cl.MinOSFlag,
				"compiler line says %s but %s %s minos is %s: code compiled for macOS %s in a slice that claims to run on %s: %s",
				cl.MinOSFlag, where, v.CmdName(), v.MinOS, cl.MinOS, v.MinOS, q)
		}
	}
	if exp.Strict {
		c.out = append(c.out, claims.out...)
		return
	}
	r.Claims = claims.out
}

// lowestMacOS is the lowest macOS deployment target of a slice's Mach-O
// objects (a static library's members may differ), with the member
// stating it; false when no object names one.
func lowestMacOS(s inspect.Slice) (v inspect.BuildVersion, member string, ok bool) {
	for _, o := range s.Objects {
		if o.MachO == nil {
			continue
		}
		for _, w := range o.MachO.Versions {
			if w.Platform == inspect.PlatformMacOS && (!ok || w.MinOS < v.MinOS) {
				v, member, ok = w, o.Member, true
			}
		}
	}
	return v, member, ok
}

func (c *checker) platform(arch string, infos []inspect.BuildInfo, exp Expect) {
	if !exp.RequirePlatform || exp.Slice.Configure == "" {
		return
	}
	n := 0
	seen := map[string]bool{}
	for _, b := range infos {
		if b.Kind != inspect.InfoPlatform {
			continue
		}
		n++
		if b.Value != exp.Slice.Configure && !seen[b.Value] {
			seen[b.Value] = true
			c.add(arch, b.Member, RulePlatform, exp.Slice.Configure, b.Value,
				"built for Configure target %q, expected %q", b.Value, exp.Slice.Configure)
		}
	}
	if n == 0 {
		c.add(arch, "", RulePlatform, exp.Slice.Configure, "none",
			"no \"platform: \" string found, expected \"platform: %s\"", exp.Slice.Configure)
	}
}

// version holds every version string of the slice to exp.Version: one
// edited copy among several is caught too.
func (c *checker) version(arch string, infos []inspect.BuildInfo, exp Expect) {
	if exp.Version == "" {
		return
	}
	n := 0
	seen := map[string]bool{}
	for _, b := range infos {
		if b.Kind != inspect.InfoVersion {
			continue
		}
		n++
		fam, num := inspect.FamilyOf(b.Value)
		if (fam != inspect.FamilyOpenSSL || num != exp.Version) && !seen[b.Value] {
			seen[b.Value] = true
			c.add(arch, b.Member, RuleVersion, "OpenSSL "+exp.Version, b.Value,
				"embeds %q, expected OpenSSL %s", b.Value, exp.Version)
		}
	}
	if n == 0 && exp.RequireCompilerLine {
		c.add(arch, "", RuleVersion, "OpenSSL "+exp.Version, "none",
			"no OpenSSL version string found, expected OpenSSL %s", exp.Version)
	}
}

// sameVersion requires the slices of one file to embed one version: a fat
// file is one build, and a merge of two releases is not.
func (c *checker) sameVersion(f *inspect.File) {
	var first *inspect.BuildInfo
	firstArch := ""
	var parts []string
	differ := false
	for _, s := range f.Slices {
		v := s.Record.Version
		if v == nil {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %q", sliceArch(s), v.Value))
		if first == nil {
			first, firstArch = v, sliceArch(s)
			continue
		}
		fa, na := inspect.FamilyOf(first.Value)
		fb, nb := inspect.FamilyOf(v.Value)
		if fa != fb || na != nb {
			differ = true
		}
	}
	if differ {
		c.add("", "", RuleVersion, "one version across slices ("+firstArch+": "+first.Value+")", strings.Join(parts, ", "),
			"slices embed different versions: %s", strings.Join(parts, ", "))
	}
}

// identical reports whether every candidate line is the same string. At
// -O0, crypto/info.o keeps its unused copy of buildinf.h's line beside
// cversion.o's (at -O3 the compiler drops it), so a pyca-way libcrypto.a
// holds two copies of one line; only that build forgives them.
func identical(cs []inspect.Candidate) bool {
	return !slices.ContainsFunc(cs[1:], func(c inspect.Candidate) bool { return c.Text != cs[0].Text })
}
