package check

import (
	"cmp"
	"debug/macho"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/codeclass"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/lifecycle"
	"github.com/osslbuild/osslbuild/internal/platform"
)

// judgeBinary applies the rules (package validate's, one engine with the
// build) to one inspected binary, filling its slices and problems and
// keeping the failures and notes it yields for judge to list in order. It
// runs on the worker that inspected the binary: by then the artifact
// holding it is known (a directory's manifest is read before its files, a
// tarball's at the end of the tarball's walk).
func (c *checker) judgeBinary(b *Binary) {
	if b.root != nil {
		b.Artifact = b.root.manifest.Name
	}
	if b.Error != "" || b.file == nil {
		b.failures = append(b.failures, b.Error)
		return
	}
	rep := c.rules(b)
	for j, is := range b.file.Slices {
		var v validate.SliceReport
		if j < len(rep.Slices) {
			v = rep.Slices[j]
		}
		s := facts(is, v)
		c.littleO0(b, &s, v.Opt)
		b.Slices = append(b.Slices, s)
		for _, u := range is.Unmapped {
			b.notes = append(b.notes, fmt.Sprintf("%s %s: %s: nothing loads these bytes, so they are no evidence", Problem{Member: u.Member}.where(*b), s.Arch, u.Describe()))
		}
		if d := s.Dylib; d != nil && d.Unreadable != "" {
			b.notes = append(b.notes, fmt.Sprintf("%s %s: the dynamic section could not be read (%s): its SONAME, DT_NEEDED and run paths are not shown", b.Name(), v.Arch, d.Unreadable))
		}
		for _, cl := range v.Claims {
			b.notes = append(b.notes, fmt.Sprintf("%s %s: %s (reported, not failed; -strict fails it)", Problem{Member: cl.Member}.where(*b), cl.Arch, cl.Detail))
		}
		if v.ISA != nil && v.ISA.Unjudged != "" && len(v.ISA.Above) > 0 {
			b.notes = append(b.notes, fmt.Sprintf("%s %s: %d functions use extensions above %s (%s ...): %s", b.Name(), v.Arch, len(v.ISA.Above), v.ISA.Limit, v.ISA.Above[0].Function, v.ISA.Unjudged))
		}
	}
	c.place(b, rep.Violations)
	for _, p := range b.Problems {
		b.failures = append(b.failures, p.where(*b)+": "+p.Message)
	}
	for j := range b.Slices {
		s := &b.Slices[j]
		judged := s.OptStatus != string(validate.OptNone)
		b.judged = b.judged || judged
		if s.Format == string(inspect.FormatPE) && judged {
			b.notes = append(b.notes, fmt.Sprintf("%s %s: PE/COFF: the machine code is not measured (no classifier reads Windows code yet); judged by its build information only", b.Name(), s.Arch))
		}
		switch {
		case s.OptStatus == string(validate.OptUnknown) && !c.o.Strict:
			b.notes = append(b.notes, fmt.Sprintf("%s %s: %s (reported, not failed; -strict fails it)", b.Name(), s.Arch, s.Unknown))
		case !judged && s.Version != "" && !s.Libcrypto:
			b.notes = append(b.notes, fmt.Sprintf("%s %s: %q but no libcrypto build info: built against OpenSSL, loads it at run time; check that library", b.Name(), s.Arch, s.Version))
		}
		if judged {
			c.endOfLife(b, s)
			c.advisories(b, s)
		}
		s.OK = len(s.Problems) == 0
		switch {
		case !s.OK:
			s.Status = StatusFailed
		case !judged:
			s.Status = StatusNotJudged
		default:
			s.Status = StatusOK
		}
		for _, p := range s.Problems {
			b.failures = append(b.failures, fmt.Sprintf("%s %s: %s", p.where(*b), s.Arch, p.Message))
		}
	}
	b.file = nil // the facts are in the report now
}

// littleFunctions is the fewest functions littleO0 weighs: a third of
// codeclass.MinFunctions. Optimised code shows an -O0 trait in at most
// about one function in ten, so half of ten or more showing one is no
// accident; one or two functions (a build-info object alone) say nothing.
const littleFunctions = codeclass.MinFunctions / 3

// littleO0 weighs code with too little evidence against a compiler line
// that optimises: fewer functions than codeclass.MinFunctions decide
// nothing, but when littleFunctions or more were measured and look -O0
// (score codeclass.O0Threshold or more: a stripped -O0 archive shows one
// function per member) they are all the evidence there is against the
// line, and the line alone no longer shows the level: the optimisation
// is unknown (the table's OPT, -json's opt_status and unknown say so,
// with the score and count), not ok. -strict fails the slice for it
// (rule optimisation); without -strict a note says so.
func (c *checker) littleO0(b *Binary, s *Slice, v validate.OptVerdict) {
	code := s.Code
	if code == nil || code.Class != string(inspect.CodeTooLittle) || code.Functions < littleFunctions || code.Score < codeclass.O0Threshold ||
		v.Status != validate.OptOK || v.Source != validate.SourceCompilerLine || v.Level == inspect.O0 || v.Level == inspect.Og {
		return
	}
	msg := fmt.Sprintf("compiler line says %s but the little machine code there is looks -O0 (score %.2f over %d functions, fewer than the %d a verdict needs)",
		v.Level, code.Score, code.Functions, codeclass.MinFunctions)
	s.OptStatus, s.Unknown = string(validate.OptUnknown), msg
	if c.o.Strict {
		s.Problems = append(s.Problems, Problem{Rule: Rule(validate.RuleOptimisation), Message: msg + ": -strict fails it"})
	}
}

// endOfLife names the release series of a judged slice's OpenSSL and
// reports it when upstream's support for it has ended: a note, or with
// -strict a failure. Forks are not OpenSSL releases ("OpenSSL 1.1.1
// (compatible; BoringSSL)" is no 1.1.1) and have no entry.
func (c *checker) endOfLife(b *Binary, s *Slice) {
	f, num := inspect.FamilyOf(s.Version)
	ser, ok := lifecycle.Of(num)
	if f != inspect.FamilyOpenSSL || !ok {
		return
	}
	s.Series = &Series{Name: ser.Name, EndOfLife: ser.EndOfLife, LTS: ser.LTS, Ended: ser.Ended(c.o.Now)}
	if !s.Series.Ended {
		return
	}
	msg, _ := lifecycle.Warning(num, c.o.Now)
	if c.o.Strict {
		s.Problems = append(s.Problems, Problem{Rule: RuleEndOfLife, Message: msg})
		return
	}
	b.notes = append(b.notes, fmt.Sprintf("%s %s: %s (reported, not failed; -strict fails it)", b.Name(), s.Arch, msg))
}

// judge lists every binary's failures and notes in order, verifies each
// artifact against its manifest, and gives the verdict.
func (c *checker) judge() {
	for _, b := range c.res.Binaries {
		c.res.Failures = append(c.res.Failures, b.failures...)
		c.res.Notes = append(c.res.Notes, b.notes...)
	}
	for _, r := range c.roots {
		c.verify(r)
	}
	c.holdSBOMs()
	if !slices.ContainsFunc(c.res.Binaries, func(b Binary) bool { return b.judged }) {
		c.res.nothing = fmt.Sprintf("%s: no OpenSSL build information (\"compiler: \", \"platform: \" ...) found in %d binaries: nothing shows how OpenSSL was built", c.o.Path, len(c.res.Binaries))
		c.res.Failures = append(c.res.Failures, c.res.nothing)
	}
	summarize(c.res)
	c.res.OK = len(c.res.Failures) == 0
}

// rules holds one binary against what is expected of it: an artifact's
// static library against everything its manifest promises, the build's
// own expectations; anything else against the check policy.
func (c *checker) rules(b *Binary) validate.Report {
	f := b.file
	policy := validate.Policy{Archs: c.o.Archs, MinOpt: c.min, Strict: c.o.Strict, ISA: c.o.ISA}
	r := b.root
	if r == nil {
		return validate.Binary(f, policy)
	}
	lib, ok := r.library(c.relIn(r, *b))
	if !ok {
		if len(policy.Archs) == 0 {
			for _, e := range r.expects("") {
				policy.Archs = append(policy.Archs, e.Slice.Arch)
			}
		}
		return validate.Binary(f, policy)
	}
	exps := r.expects(lib)
	for i := range exps {
		exps[i].Strict = c.o.Strict
		// -isa replaces the manifest's level in the slices of its
		// architecture only.
		if c.o.ISA != "" && exps[i].ISA != nil && validate.SameArch(isaArch(c.o.ISA), exps[i].Slice.Arch) {
			exps[i].ISA.Limit = c.o.ISA
		}
	}
	var rep validate.Report
	var err error
	switch {
	case r.manifest.Target.IsShared(lib):
		m := r.manifest
		if len(m.Slices) > 0 {
			m = m.Slices[0]
		}
		rep = validate.DylibFile(f, nil, exps, artifact.DylibExpectOf(m, lib))
	case len(r.manifest.Slices) > 0:
		rep, err = validate.ValidateUniversal(f, exps...)
	default:
		rep, err = validate.Validate(f, exps...)
	}
	if err != nil { // the manifest's own expectations are unusable
		rep = validate.Binary(f, policy)
		b.Problems = append(b.Problems, Problem{Rule: RuleManifest, Message: fmt.Sprintf("artifact %s: manifest: %v", r.manifest.Name, err)})
	}
	rep.Violations = append(rep.Violations, validate.RequireArchs(f, c.o.Archs)...)
	return rep
}

// place puts each violation on its slice, or on the binary when it
// concerns the whole file or a slice that is missing.
func (c *checker) place(b *Binary, vs []validate.Violation) {
	for _, v := range vs {
		p := Problem{Rule: Rule(v.Rule), Member: v.Member, Message: v.Detail}
		idx := -1
		if v.Arch != "" && v.Rule != validate.RuleSlices {
			idx = slices.IndexFunc(b.Slices, func(s Slice) bool { return validate.SameArch(s.Arch, v.Arch) })
			if idx < 0 && len(b.Slices) == 1 {
				idx = 0
			}
		}
		if idx < 0 {
			b.Problems = append(b.Problems, p)
			continue
		}
		b.Slices[idx].Problems = append(b.Slices[idx].Problems, p)
	}
}

// facts turns inspect's findings and validate's verdict for one slice into
// a report Slice.
func facts(s inspect.Slice, v validate.SliceReport) Slice {
	out := Slice{Arch: cmp.Or(v.Arch, "unknown"), Format: string(s.Format), Objects: len(s.Objects), Libcrypto: v.Libcrypto,
		OptStatus: cmp.Or(string(v.Opt.Status), string(validate.OptNone)), OptSource: string(v.Opt.Source), Unknown: v.Unknown, OptFlag: v.Opt.Flag}
	if c := s.Code; c != nil {
		out.Code = &Code{Class: string(c.Class), Score: math.Round(c.Score*1000) / 1000, Functions: c.Functions,
			Instructions: c.Instructions, Objects: c.Objects, AsmObjects: c.AsmObjects}
		if e := c.ISA; e != nil {
			out.ISA = &ISA{Level: e.Level, Extensions: append([]string{}, e.Extensions...), Functions: e.Functions, Instructions: e.Instructions,
				Undecoded: e.Undecoded, Attribution: e.Attribution, AsmObjects: e.AsmObjects, Above: []ISAUse{}}
			if iv := v.ISA; iv != nil {
				out.ISA.Limit, out.ISA.List, out.ISA.Unjudged = iv.Limit, iv.List, iv.Unjudged
				for _, d := range iv.Dispatched {
					out.ISA.Dispatched = append(out.ISA.Dispatched, d.Name)
				}
				for _, u := range iv.Above {
					out.ISA.Above = append(out.ISA.Above, ISAUse{Member: u.Member, Function: u.Function, Extension: u.Extension, Level: u.Level, Instruction: u.Instruction})
				}
			}
		}
	}
	// A linked Mach-O image's code signature and load commands (one thin
	// image per slice); a linked ELF image's dynamic section.
	for _, o := range s.Objects {
		if e := o.ELF; e != nil && e.Dynamic != nil {
			out.Dylib = &Dylib{InstallName: e.Dynamic.Soname, Loads: append([]string{}, e.Dynamic.Needed...), Rpaths: e.Dynamic.RunPaths()}
		} else if e != nil && e.DynamicErr != nil {
			out.Dylib = &Dylib{Loads: []string{}, Unreadable: e.DynamicErr.Error()}
		}
		if m := o.MachO; m != nil && m.Type != macho.TypeObj {
			d := &Dylib{Loads: []string{}, Rpaths: m.Rpaths}
			if m.ID != nil {
				d.InstallName, d.Current, d.Compatibility = m.ID.Name, m.ID.Current.String(), m.ID.Compatibility.String()
			}
			for _, l := range m.Loads {
				d.Loads = append(d.Loads, l.Name)
			}
			out.Dylib = d
		}
		if cs := o.Signature; cs != nil {
			out.Signature = &Signature{Kind: cs.Kind(), Identifier: cs.Identifier, Hash: cs.HashType, Pages: cs.Pages, Stale: len(cs.Stale) + len(cs.StaleSpecial), Valid: cs.Valid()}
		} else if o.SignatureErr != nil {
			out.Signature = &Signature{Malformed: o.SignatureErr.Error()}
		}
	}
	switch {
	case v.Opt.Source == validate.SourceMachineCode:
		out.Opt = string(v.Opt.Class)
	case v.Opt.Status == validate.OptOK || v.Opt.Status == validate.OptBelow:
		out.Opt = v.Opt.Level.String()
	}
	rec := s.Record
	out.Family = string(rec.Family)
	if rec.Version != nil {
		out.Version = rec.Version.Value
	}
	if rec.Platform != nil {
		out.Platform = rec.Platform.Value
	}
	if rec.BuiltOn != nil {
		out.BuiltOn = rec.BuiltOn.Value
	}
	for _, bi := range s.BuildInfo {
		if bi.Kind == inspect.InfoCompiler && !slices.Contains(out.Compilers, bi.Value) {
			out.Compilers = append(out.Compilers, bi.Value)
		}
	}
	chosen := rec.Compiler()
	for i, cd := range rec.Candidates {
		if i == 0 && chosen != nil {
			out.Compiler = cd.Value
		}
		beside := make([]string, len(cd.Beside))
		for j, k := range cd.Beside {
			beside[j] = string(k)
		}
		out.Candidates = append(out.Candidates, Candidate{Line: cd.Value, Member: cd.Member, Offset: cd.Offset,
			Beside: beside, Configured: cd.Configured, Placeholder: cd.Placeholder, Attested: cd.Attested, Chosen: i == 0 && chosen != nil})
	}
	for _, e := range v.Opt.Evidence {
		ev := Evidence{Source: string(e.Source), Known: e.Known, Flag: e.Flag, Detail: e.Detail}
		switch {
		case e.Known && e.Source == validate.SourceMachineCode:
			ev.Opt = string(e.Code.Class)
		case e.Known:
			ev.Opt = e.Level.String()
		}
		out.Evidence = append(out.Evidence, ev)
	}
	for _, u := range s.Unmapped {
		out.Unmapped = append(out.Unmapped, Unmapped{Member: u.Member, Start: u.Start, End: u.End, Where: u.Where, Strings: u.Strings})
	}
	minosFacts(&out, s)
	return out
}

// minosFacts counts the objects per deployment target.
func minosFacts(out *Slice, s inspect.Slice) {
	counts := map[string]int{}
	for _, o := range s.Objects {
		if o.MachO != nil {
			counts[minosKey(o.MachO)]++
		}
	}
	if len(counts) == 0 {
		return
	}
	out.MinOSCounts = counts
	keys := slices.SortedFunc(maps.Keys(counts), func(x, y string) int { // by version: 10.12 after 9.0, as numbers
		a, aerr := platform.ParseMinOS(x)
		b, berr := platform.ParseMinOS(y)
		if aerr == nil && berr == nil {
			return cmp.Compare(a, b)
		}
		return strings.Compare(x, y)
	})
	out.MinOS = keys[0]
	if len(keys) > 1 {
		out.MinOSMixed = true
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s (%d objects)", k, counts[k])
		}
		out.MinOS = "mixed: " + strings.Join(parts, ", ")
	}
}

// minosKey is "11.0" for macOS, "iOS 14.0" for other platforms, "none"
// when the object names no deployment target.
func minosKey(m *inspect.MachO) string {
	if len(m.Versions) == 0 {
		return "none"
	}
	v := m.Versions[0]
	if v.Platform == inspect.PlatformMacOS {
		return v.MinOS.String()
	}
	return v.Platform.String() + " " + v.MinOS.String()
}
