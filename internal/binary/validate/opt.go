package validate

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/codeclass"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// How optimised a slice is rests on evidence of two kinds: the compiler
// line OpenSSL records (a claim) and the machine code itself (package
// codeclass, when codeclass.Measure has run). The line shows
// a level; the code shows only -O0-like or optimised. Where both speak and
// disagree, the slice fails naming both (contradiction); where the line is
// missing or says nothing (libssl, BoringSSL's "n/a", any library), the
// code decides; where the code has too little evidence it is reported and
// never fails anything.

// Source names a kind of evidence.
type Source string

const (
	// SourceCompilerLine is the "compiler: " line chosen by inspect.RecordOf.
	SourceCompilerLine Source = "compiler-line"
	// SourceMachineCode is the code classifier's verdict on the slice
	// (inspect.CodeVerdict).
	SourceMachineCode Source = "machine-code"
)

// Evidence is one indication of how a slice was optimised.
type Evidence struct {
	Source Source
	// Known says the evidence shows a level; false when it exists but says
	// nothing (a placeholder line, libcrypto's strings without a line).
	Known  bool
	Level  inspect.OptLevel // when Known
	Flag   string           // the deciding -O word as written, "" when none
	Detail string           // what was found: the line, or why nothing is known
	Member string           // archive member it was found in
	// Code is the classifier's verdict (SourceMachineCode only). Known
	// code evidence is -O0-like (Level O0) or optimised (Optimised, no
	// level: the code shows that it was optimised, not how much).
	Code      *inspect.CodeVerdict
	Optimised bool
}

// evidence is what tells how a slice was optimised: its compiler line (or
// OpenSSL's strings without one), then its machine code. The code counts
// in a library the build or a manifest names (static), and elsewhere only
// where the strings show OpenSSL: check audits OpenSSL, and a libz built
// at -O0 beside it is not OpenSSL's failure.
func evidence(s inspect.Slice, static bool) []Evidence {
	ev := compilerLineEvidence(s)
	if static || len(ev) > 0 {
		ev = append(ev, machineCodeEvidence(s)...)
	}
	return ev
}

// machineCodeEvidence is the code classifier's verdict, when it ran.
func machineCodeEvidence(s inspect.Slice) []Evidence {
	c := s.Code
	if c == nil {
		return nil
	}
	e := Evidence{Source: SourceMachineCode, Code: c, Detail: DescribeCode(*c)}
	switch c.Class {
	case inspect.CodeO0:
		e.Known, e.Level = true, inspect.O0
	case inspect.CodeOptimised:
		e.Known, e.Optimised = true, true
	}
	return []Evidence{e}
}

// DescribeCode is a code verdict in a few words: "optimised (score 0.02
// over 2674 functions)".
func DescribeCode(c inspect.CodeVerdict) string {
	if c.Class == inspect.CodeTooLittle && c.Functions == 0 {
		return fmt.Sprintf("%s (%s measured, %d needed)", c.Class, inspect.Plural(c.Functions, "function"), codeclass.MinFunctions)
	}
	if c.Class == inspect.CodeTooLittle {
		// What little there is, and which way it points: a stripped
		// archive's 16 functions at 0.94 read -O0.
		return fmt.Sprintf("%s (score %.2f over %s measured, %d needed)", c.Class, c.Score, inspect.Plural(c.Functions, "function"), codeclass.MinFunctions)
	}
	return fmt.Sprintf("%s (score %.2f over %s)", c.Class, c.Score, inspect.Plural(c.Functions, "function"))
}

// contradiction returns the compiler line and the code evidence when both
// are known and disagree: the line optimises (-O1 and up, -Os, -Oz) but
// the code looks -O0, or the line has no -O (or -O0) but the code looks
// optimised. -Og is neither and contradicts nothing.
func contradiction(ev []Evidence) (line, code *Evidence) {
	for i := range ev {
		switch e := &ev[i]; {
		case !e.Known:
		case e.Source == SourceCompilerLine && line == nil:
			line = e
		case e.Source == SourceMachineCode:
			code = e
		}
	}
	if line == nil || code == nil {
		return nil, nil
	}
	lineOpt := line.Level != inspect.O0 && line.Level != inspect.Og
	lineO0 := line.Level == inspect.O0
	if (lineOpt && !code.Optimised) || (lineO0 && code.Optimised) {
		return line, code
	}
	return nil, nil
}

// HoldsOpenSSL reports whether a slice holds OpenSSL's (or a fork's) own
// code, as its strings show: a compiler line, libcrypto's build
// information, or the library's source paths (inspect.Record.FamilyMarker;
// libssl has no other). Only such slices are judged by check; a program
// that links OpenSSL dynamically, with the version string of its headers,
// is not one.
func HoldsOpenSSL(s inspect.Slice) bool { return len(compilerLineEvidence(s)) > 0 }

func compilerLineEvidence(s inspect.Slice) []Evidence {
	c := s.Record.Compiler()
	switch {
	case c != nil && c.Placeholder:
		return []Evidence{{Source: SourceCompilerLine, Detail: c.Text, Member: c.Member}}
	case c != nil:
		cl := inspect.ParseCompilerLine(c.Value)
		return []Evidence{{Source: SourceCompilerLine, Known: true, Level: cl.Opt, Flag: cl.OptFlag, Detail: c.Text, Member: c.Member}}
	case inspect.HoldsLibcryptoInfo(s.BuildInfo):
		return []Evidence{{Source: SourceCompilerLine, Detail: "libcrypto's build information without a \"compiler: \" line"}}
	case s.Record.FamilyMarker != "" && s.Record.Version != nil:
		// A version string and the library's own source paths, nothing
		// else: OpenSSL 1.0.2's libssl, or a libssl linked in whole.
		return []Evidence{{Source: SourceCompilerLine, Detail: fmt.Sprintf("no compiler line; %q and the source path %q in the binary show %s's code", s.Record.Version.Value, s.Record.FamilyMarker, s.Record.Family)}}
	case s.Record.FamilyMarker != "":
		// A fork linked in without any build information (its version
		// string dropped by the linker): there, but nothing shows how.
		return []Evidence{{Source: SourceCompilerLine, Detail: fmt.Sprintf("no build information; %q in the binary names %s", s.Record.FamilyMarker, s.Record.Family)}}
	}
	return nil
}

// OptStatus is the verdict on a slice's optimisation.
type OptStatus string

const (
	// OptNone: the slice carries no OpenSSL build information (libssl, a
	// program linking OpenSSL dynamically, anything else): not judged.
	OptNone    OptStatus = "none"
	OptOK      OptStatus = "ok"      // the evidence shows at least the minimum
	OptBelow   OptStatus = "below"   // some evidence shows less than the minimum
	OptUnknown OptStatus = "unknown" // OpenSSL's build information is there but does not show the level
)

// OptVerdict is what the evidence says about one slice.
type OptVerdict struct {
	Status OptStatus
	Level  inspect.OptLevel // OptOK, OptBelow: the lowest level shown
	Flag   string           // the -O word of that evidence, "" when none
	// Source is the kind of evidence the verdict rests on; for
	// SourceMachineCode, Class says what the code looks like (no level).
	Source   Source
	Class    inspect.CodeClass
	Evidence []Evidence
}

// judgeOpt weighs the evidence: any known evidence below min fails, so one
// kind cannot rescue another; else known evidence at min or above passes;
// else code that looks optimised passes; else it is unknown (or none).
// Code with too little evidence says nothing: on a slice without OpenSSL's
// build information it leaves the slice unjudged (none).
func judgeOpt(ev []Evidence, min inspect.OptLevel) OptVerdict {
	v := OptVerdict{Status: OptNone, Evidence: ev}
	var low, opt *Evidence
	for i := range ev {
		e := &ev[i]
		switch {
		case e.Known && e.Optimised:
			opt = e
		case e.Known && (low == nil || rank(e.Level) < rank(low.Level)):
			low = e
		}
		if v.Status == OptNone && (e.Known || e.Source != SourceMachineCode) {
			v.Status = OptUnknown
		}
	}
	switch {
	case low != nil:
		v.Status, v.Level, v.Flag, v.Source = OptOK, low.Level, low.Flag, low.Source
		if low.Code != nil {
			v.Class = low.Code.Class
		}
		if !Satisfies(low.Level, min) {
			v.Status = OptBelow
		}
	case opt != nil:
		v.Status, v.Source, v.Class = OptOK, opt.Source, opt.Code.Class
	}
	return v
}

// rank orders levels for a minimum: -Os and -Oz optimise as -O2 does, for
// size, so they satisfy a minimum of -O2 (or -Os, -Oz) but not -O3; -Og
// drops -O1 passes (GCC), so it does not satisfy -O1.
func rank(o inspect.OptLevel) int {
	switch o {
	case inspect.O0:
		return 0
	case inspect.Og:
		return 1
	case inspect.O1:
		return 2
	case inspect.Oz, inspect.Os, inspect.O2:
		return 4
	}
	return 6 // O3, Ofast
}

// Satisfies reports whether level meets the minimum min.
func Satisfies(level, min inspect.OptLevel) bool { return rank(level) >= rank(min) }

var minOpts = map[string]inspect.OptLevel{"0": inspect.O0, "1": inspect.O1, "2": inspect.O2, "3": inspect.O3, "s": inspect.Os, "z": inspect.Oz}

// ParseMinOpt parses a minimum optimisation as the check target's -minopt
// flag takes it: 0, 1, 2, 3, s or z.
func ParseMinOpt(s string) (inspect.OptLevel, error) {
	if l, ok := minOpts[s]; ok {
		return l, nil
	}
	return inspect.O0, fmt.Errorf("-minopt %q: expected 0, 1, 2, 3, s or z", s)
}

// unknownReason is the sentence saying why a slice's optimisation is
// unknown: "BoringSSL: no compiler line recorded ("compiler: n/a")".
func unknownReason(s inspect.Slice) string {
	who := cmp.Or(string(s.Record.Family), "OpenSSL")
	code := ""
	if s.Code != nil {
		code = "; its machine code gives " + DescribeCode(*s.Code)
	}
	if c := s.Record.Compiler(); c != nil {
		return fmt.Sprintf("%s: no compiler line recorded (%q): how it was optimised cannot be shown%s", who, strings.TrimRight(c.Text, " "), code)
	}
	if s.Record.FamilyMarker != "" && !inspect.HoldsLibcryptoInfo(s.BuildInfo) {
		if v := s.Record.Version; v != nil {
			return fmt.Sprintf("%s: no compiler line recorded, only %q and its source path %q in the binary: how it was optimised cannot be shown%s", who, v.Value, s.Record.FamilyMarker, code)
		}
		return fmt.Sprintf("%s (named by %q in the binary): no version string and no compiler line recorded: how it was optimised cannot be shown%s", who, s.Record.FamilyMarker, code)
	}
	p := "none"
	if s.Record.Platform != nil {
		p = s.Record.Platform.Value
	}
	return fmt.Sprintf("%s: libcrypto's build information (platform %q) has no \"compiler: \" line: how it was optimised cannot be shown%s", who, p, code)
}
