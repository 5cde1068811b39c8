// Package validate is osslbuild's one rule engine: it holds the facts
// package inspect reads from a binary against what is expected of it, and
// reports every violation, not just the first, in words a person can act
// on. The single-slice build, the universal2 merge and the `check` target
// all call it, so a rule, its architecture names and its message exist
// once.
//
// StaticLibrary, Universal and Validate hold a static library against a
// Plan's (or an artifact manifest's) expectations, every object of it;
// Binary holds any binary to the check target's policy. Both judge
// optimisation the same way: from evidence (the compiler line that
// inspect.RecordOf chose by layout, and the machine code once
// codeclass.Measure has run), a placeholder line or libcrypto's strings
// without one, with code of too little evidence, being "unknown", never
// -O0; a compiler line the code contradicts fails, naming both.
package validate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/codeclass"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/dispatch"
	"github.com/osslbuild/osslbuild/internal/platform"
)

// ErrInvalid is matched (errors.Is) by every error saying that a library
// breaks its expectation or cannot be parsed at all. I/O errors and bad
// expectations are not ErrInvalid.
var ErrInvalid = errors.New("library does not meet its expectation")

// Expect is what one architecture slice must be. For the build, the Plan
// that produced the Configure argv fills it, so the build is checked
// against the same source of truth that drove it; for an artifact, its
// manifest does.
type Expect struct {
	// Slice is what the library was built as: its platform (the object
	// format: Mach-O when it names no OS) and architecture (required),
	// the deployment target every object's minos must equal ("" skips
	// that), the Configure target and the flags every compiler line must
	// carry ("-arch X" is always required of a Mach-O line).
	Slice  platform.Slice
	MinOpt inspect.OptLevel // minimum effective optimisation, e.g. inspect.O3
	// RequireCompilerLine demands exactly one "compiler: " line that
	// records the build's flags (libcrypto). libssl has none; leave it
	// false there. A line that is present is checked either way, and more
	// than one is always a violation.
	RequireCompilerLine bool
	// RequirePlatform demands the "platform: " string of the slice's
	// Configure target (libcrypto carries it, libssl does not).
	RequirePlatform bool
	// NoOptFlag turns the optimisation rule around: the compiler line must
	// carry no -O flag at all. Only the pyca-way build, which reproduces the
	// -O0 bug on purpose, expects that.
	NoOptFlag bool
	// Strict fails a slice whose optimisation is unknown (a placeholder
	// line, or libcrypto's strings without a line). RequireCompilerLine
	// implies it.
	Strict bool
	// Version is the OpenSSL release every version string in the slice
	// must name, e.g. "4.0.2"; "" skips the check. With
	// RequireCompilerLine a version string must be present.
	Version string
	// ISA, when set, holds the compiled x86-64 code to a level.
	ISA *ISA
}

// Built is what osslbuild promises of the library lib it built as slice s:
// every object for the slice's platform, architecture and deployment
// target, and for libcrypto (the library carrying crypto/buildinf.h's
// strings) exactly one compiler line at -O3 or better with the slice's
// flags, and the slice's platform line. libssl carries neither string.
// Set Version (the Plan's, or the manifest's, release) to have every
// version string the library embeds held to it too.
func Built(s platform.Slice, lib string) Expect {
	buildinf := strings.HasPrefix(lib, "libcrypto.")
	e := Expect{Slice: s, MinOpt: inspect.O3, RequireCompilerLine: buildinf, RequirePlatform: buildinf}
	if row, err := platform.Lookup(s); err == nil {
		if l := LevelOf(s.Flags, row.ISA); l != "" {
			// The dispatch list is the caller's: the source tree's in a
			// build, the manifest's for an artifact.
			e.ISA = &ISA{Limit: l, Dispatch: dispatch.List{Name: "none given"}}
		}
	}
	return e
}

// elf reports whether the expected slice is ELF code (its platform's
// format); Mach-O otherwise.
func (e Expect) elf() bool {
	f, _ := platform.FormatOf(e.Slice.OS)
	return f == platform.ELF
}

// Policy is what the check target holds any binary to.
type Policy struct {
	Archs  []string         // every binary must have a slice for each
	MinOpt inspect.OptLevel // minimum optimisation the evidence must show
	Strict bool             // unknown optimisation fails too
	// ISA, when set, holds the compiled code of the slices of its
	// architecture to a level (check's -isa: an x86-64 level or an arm64
	// one), with the dispatch list of the slice's release (dispatch.Known).
	// With Strict, a macOS arm64 slice is held to apple-m1 when ISA names
	// no arm64 level (Policy.isaLimit).
	ISA string
}

// Rule names the kind of a violation, for callers that group or filter.
type Rule string

const (
	RuleFormat       Rule = "format"            // not a static library of Mach-O objects, or unparsable
	RuleSlices       Rule = "slices"            // a missing, extra or duplicate architecture slice
	RuleCPU          Rule = "cpu"               // object of the wrong CPU type
	RuleFileType     Rule = "filetype"          // Mach-O file that is not an object (MH_OBJECT)
	RuleDeployment   Rule = "deployment-target" // LC_BUILD_VERSION / LC_VERSION_MIN_MACOSX missing, wrong platform or minos
	RuleCompilerLine Rule = "compiler-line"     // no compiler line, more than one, or one that records nothing
	RuleOptimisation Rule = "optimisation"      // effective -O below the minimum
	RuleArchFlag     Rule = "arch-flag"         // compiler line lacks "-arch <arch>" or names another arch
	RuleFlag         Rule = "flag"              // compiler line lacks an expected flag
	RulePlatform     Rule = "platform"          // "platform: " missing or not the expected Configure target
	RuleVersion      Rule = "version"           // the embedded OpenSSL version is not the expected one, or slices disagree
)

// Violation is one broken rule, located as precisely as the facts allow.
type Violation struct {
	Library  string // file name, e.g. "libcrypto.a"
	Member   string // archive member, "" when the violation concerns the whole slice
	Arch     string // the slice's architecture (the expected one for a missing slice); "" for the whole file
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
	// Slices has one entry per slice of File, in its order: what the
	// evidence says of each, violations or not.
	Slices []SliceReport
}

// SliceReport is the verdict on one slice.
type SliceReport struct {
	Arch      string
	Opt       OptVerdict
	Libcrypto bool        // holds libcrypto's own build information
	Unknown   string      // when Opt.Status is OptUnknown: why, in one sentence
	ISA       *ISAVerdict // when an ISA expectation applied
	// Claims are what a foreign binary's compiler line says of the slice
	// that its image contradicts (checker.claims), when they fail nothing
	// (without Strict): check reports them as notes.
	Claims []Violation
}

// Err is nil when the file met every expectation, else an *Error listing
// every violation.
func (r Report) Err() error {
	if len(r.Violations) == 0 {
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
	return CappedList(fmt.Sprintf("validate %s: %d violations:", e.Path, len(e.Violations)), e.Violations)
}

// CappedList is head, then items one to an indented line, at most
// maxListed of them and then how many more: the text of an error that
// lists problems (this package's Error, artifact's VerifyError).
func CappedList[T fmt.Stringer](head string, items []T) string {
	var b strings.Builder
	b.WriteString(head)
	for i, v := range items {
		if i == maxListed {
			fmt.Fprintf(&b, "\n\t... and %d more", len(items)-maxListed)
			break
		}
		b.WriteString("\n\t")
		b.WriteString(v.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) hold.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// StaticLibraryContext validates a single-architecture static library: a
// thin ar archive, or a universal file holding exactly the one slice
// exp.Arch. The file is inspected and its machine code measured
// (codeclass.Inspect), both held to exp.
func StaticLibraryContext(ctx context.Context, path string, exp Expect) (Report, error) {
	return inspectAndValidate(ctx, path, []Expect{exp}, false)
}

// UniversalContext validates a universal static library: it must be a fat
// file with exactly one slice per expectation, each slice held against its
// Expect, its machine code measured too.
func UniversalContext(ctx context.Context, path string, exps []Expect) (Report, error) {
	return inspectAndValidate(ctx, path, exps, true)
}

func inspectAndValidate(ctx context.Context, path string, exps []Expect, wantFat bool) (Report, error) {
	f, err := inspectFor(ctx, path, exps)
	if err != nil {
		return Report{Path: path}, err
	}
	r, _ := library(f, exps, wantFat) // inspectFor checked exps
	return r, r.Err()
}

// inspectFor is the front half of every validation of a file by path
// (static libraries and dylibs alike): the expectations checked, then the
// file inspected and its machine code measured.
func inspectFor(ctx context.Context, path string, exps []Expect) (*inspect.File, error) {
	if err := checkExpects(exps); err != nil {
		return nil, err
	}
	f, err := codeclass.Inspect(ctx, path)
	if err != nil {
		if errors.Is(err, inspect.ErrMalformed) || errors.Is(err, inspect.ErrUnknownFormat) {
			// Unreadable as a library is a verdict on the file, not an I/O failure.
			return nil, fmt.Errorf("validate: %w: %w", ErrInvalid, err)
		}
		return nil, fmt.Errorf("validate: %w", err)
	}
	return f, nil
}

// Validate holds already-inspected facts of a static library against the
// expectations: one Expect for a thin library (or a one-slice universal
// file), one per slice for a universal file. The error is only for invalid
// expectations; the verdict is in the Report (see Report.Err).
func Validate(f *inspect.File, exps ...Expect) (Report, error) {
	return library(f, exps, false)
}

// ValidateUniversal is Validate for a file that must be universal.
func ValidateUniversal(f *inspect.File, exps ...Expect) (Report, error) {
	return library(f, exps, true)
}

// Binary holds any inspected binary (Mach-O, universal, ar or ELF; built
// by anyone) to the check target's policy: a slice for every architecture
// asked for, one OpenSSL version across its slices, and in every slice
// that carries OpenSSL's build information, optimisation the evidence
// shows to be at least p.MinOpt (unknown failing only with p.Strict).
func Binary(f *inspect.File, p Policy) Report {
	r := Report{Path: f.Path, File: f}
	c := &checker{lib: filepath.Base(f.Path)}
	c.out = RequireArchs(f, p.Archs)
	for _, s := range f.Slices {
		exp := Expect{MinOpt: p.MinOpt, Strict: p.Strict}
		if l := p.isaLimit(s); l != "" {
			v := ""
			if s.Record.Version != nil {
				_, v = inspect.FamilyOf(s.Record.Version.Value)
			}
			exp.ISA = &ISA{Limit: l, Dispatch: dispatch.Known(v)}
		}
		r.Slices = append(r.Slices, c.slice(s, exp))
	}
	c.sameVersion(f)
	r.Violations = c.out
	return r
}

// checkExpects rejects expectations that cannot be a Plan's: these are bugs
// in the caller, so they are plain errors, not violations.
func checkExpects(exps []Expect) error {
	if len(exps) == 0 {
		return errors.New("validate: no expectation given")
	}
	seen := map[string]bool{}
	for i, e := range exps {
		if e.Slice.Arch == "" {
			return fmt.Errorf("validate: expectation %d: Arch is empty", i)
		}
		if seen[NormArch(e.Slice.Arch)] {
			return fmt.Errorf("validate: expectation %d: Arch %s given twice", i, e.Slice.Arch)
		}
		seen[NormArch(e.Slice.Arch)] = true
		if _, err := platform.ParseMinOS(e.Slice.MinOS); err != nil && e.Slice.MinOS != "" {
			return fmt.Errorf("validate: expectation %s: MinOS: %w", e.Slice.Arch, err)
		}
	}
	return nil
}

// library checks the expectations and applies the static-library rules:
// the expected set of slices, each slice held against its Expect, every
// object included.
func library(f *inspect.File, exps []Expect, wantFat bool) (Report, error) {
	r := Report{Path: f.Path, File: f}
	if err := checkExpects(exps); err != nil {
		return r, err
	}
	c := &checker{lib: filepath.Base(f.Path), static: true}
	archs := make([]string, len(exps))
	for i, e := range exps {
		archs[i] = e.Slice.Arch
	}
	want := strings.Join(archs, ", ")

	if f.Format != inspect.FormatFat {
		switch {
		case wantFat || len(exps) > 1:
			c.add("", "", RuleFormat, "universal file with slices "+want, "thin "+string(f.Format),
				"expected a universal file with slices %s, found a thin %s file", want, f.Format)
			for _, s := range f.Slices {
				r.Slices = append(r.Slices, c.verdict(s, Expect{MinOpt: exps[0].MinOpt}))
			}
		case len(f.Slices) == 1:
			r.Slices = append(r.Slices, c.slice(f.Slices[0], exps[0]))
		}
		r.Violations = c.out
		return r, nil
	}

	// A universal file must hold exactly the expected set of slices.
	var have []string
	count := map[string]int{}
	for _, s := range f.Slices {
		have = append(have, s.Arch)
		count[NormArch(s.Arch)]++
	}
	slices.Sort(have) // stable messages whatever order lipo wrote
	haveS := strings.Join(have, ", ")
	for _, e := range exps {
		if count[NormArch(e.Slice.Arch)] == 0 {
			c.add(e.Slice.Arch, "", RuleSlices, e.Slice.Arch+" slice", haveS,
				"universal file has no %s slice: expected slices %s, found %s", e.Slice.Arch, want, haveS)
		}
	}
	done := map[string]bool{}
	for _, s := range f.Slices {
		i := slices.IndexFunc(exps, func(e Expect) bool { return SameArch(e.Slice.Arch, s.Arch) })
		switch {
		case i < 0:
			c.add(s.Arch, "", RuleSlices, want, haveS,
				"unexpected %s slice: expected slices %s, found %s", s.Arch, want, haveS)
			r.Slices = append(r.Slices, c.verdict(s, Expect{MinOpt: exps[0].MinOpt}))
		case done[NormArch(s.Arch)]:
			c.add(s.Arch, "", RuleSlices, "one "+s.Arch+" slice", fmt.Sprintf("%d", count[NormArch(s.Arch)]),
				"universal file has %d %s slices, expected one", count[NormArch(s.Arch)], s.Arch)
			r.Slices = append(r.Slices, c.verdict(s, exps[i]))
		default:
			done[NormArch(s.Arch)] = true
			r.Slices = append(r.Slices, c.slice(s, exps[i]))
		}
	}
	c.sameVersion(f)
	r.Violations = c.out
	return r, nil
}

// sliceArch is a slice's architecture for messages: "unknown" when its
// objects disagree or name none.
func sliceArch(s inspect.Slice) string {
	return cmp.Or(s.Arch, "unknown")
}

// RequireArchs returns a violation for each architecture of archs that f
// has no slice for, as delocate's --require-archs demands of every binary
// in a wheel.
func RequireArchs(f *inspect.File, archs []string) []Violation {
	c := &checker{lib: filepath.Base(f.Path)}
	var have []string
	for _, s := range f.Slices {
		have = append(have, sliceArch(s))
	}
	for _, a := range archs {
		if !slices.ContainsFunc(have, func(h string) bool { return SameArch(h, a) }) {
			c.add(a, "", RuleSlices, a+" slice", strings.Join(have, ", "),
				"no %s slice: expected %s, found %s", a, strings.Join(archs, ", "), strings.Join(have, ", "))
		}
	}
	return c.out
}
