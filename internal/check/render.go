package check

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/report"
)

// Rows is the result as report rows: one per slice, one per binary that
// could not be inspected.
func Rows(res *Result) []report.Row {
	var rows []report.Row
	for _, b := range res.Binaries {
		group, name := display(res.Path, b)
		if b.Error != "" || len(b.Slices) == 0 {
			rows = append(rows, report.Row{Group: group, Artifact: name, Digest: b.SHA256, Status: "ERROR"})
			continue
		}
		for _, s := range b.Slices {
			status := s.Status // "failed" only with problems: FAIL below names them
			var rules []string
			for _, p := range append(append([]Problem{}, b.Problems...), s.Problems...) {
				rules = append(rules, string(p.Rule))
			}
			if len(rules) > 0 {
				status = "FAIL (" + strings.Join(dedup(rules), ", ") + ")"
			}
			version := shortVersion(s.Version)
			if version == "" && s.Family != "" {
				// No version string, named by its source paths: say whose
				// code the slice was judged as.
				version = s.Family + " (no version)"
			}
			if s.Series != nil && s.Series.Ended {
				version = report.EndOfLifeCell(version, s.Series.EndOfLife)
			}
			rows = append(rows, report.Row{Group: group, Artifact: name, Arch: s.Arch, Version: version,
				MinOS: s.MinOS, Opt: optCell(s), Code: codeCell(s), ISA: isaCell(s), Compiler: s.Compiler, Digest: b.SHA256, Status: status,
				Advisories: advisoryCell(s)})
		}
	}
	return rows
}

// display names a binary for the table relative to what was checked, so
// rows are not all one long common prefix: a file inside the directory
// checked by its path there, the file checked by its name (the verdict
// gives its path), and a member of a wheel or tarball by its path inside,
// under the archive (group: the path given, or inside the directory) named
// once.
func display(root string, b Binary) (group, name string) {
	file := b.Path
	if rel, err := filepath.Rel(root, b.Path); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		file = rel
	}
	switch {
	case b.Member != "":
		return file, b.Member
	case b.Path == root:
		return "", filepath.Base(b.Path)
	}
	return "", file
}

// dedup is s without repeats, first occurrences in order.
func dedup(s []string) []string {
	var out []string
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// optCell is the optimisation in a few words: "-O3", "-O0 (no -O)",
// "-Os (size; counts as -O2)", "unknown", or "" when the slice carries no
// OpenSSL build information.
func optCell(s Slice) string {
	switch s.OptStatus {
	case string(validate.OptUnknown):
		return "unknown"
	case string(validate.OptOK), string(validate.OptBelow):
	default:
		return ""
	}
	switch {
	case s.OptSource == string(validate.SourceMachineCode):
		return s.Opt + " (code)"
	case s.OptFlag == "":
		return s.Opt + " (no -O)"
	case s.Opt == inspect.Os.String() || s.Opt == inspect.Oz.String():
		return s.Opt + " (size; counts as -O2)"
	}
	return s.Opt
}

// codeCell is the machine code's verdict beside the compiler line's:
// "optimised 0.02/2674" (score over functions measured), "-O0-like
// 0.91/412", "too little 0/3", or "" when the code was not measured.
func codeCell(s Slice) string {
	c := s.Code
	if c == nil {
		return ""
	}
	return report.CodeCell(c.Class, c.Score, c.Functions)
}

// isaCell is the instruction set: "core2", "x86-64-v3 (12 dispatched)".
func isaCell(s Slice) string {
	if s.ISA == nil {
		return ""
	}
	if s.ISA.Attribution == "linked" {
		return s.ISA.Level + " (linked)"
	}
	return report.ISACell(s.ISA.Level, s.ISA.Limit, len(s.ISA.Dispatched))
}

// shortVersion is "4.0.2" for "OpenSSL 4.0.2 25 Aug 2026", and names the
// fork for the others: "BoringSSL", "AWS-LC 1.29.0", "LibreSSL 3.8.2".
func shortVersion(v string) string {
	switch f, n := inspect.FamilyOf(v); f {
	case "":
		return v
	case inspect.FamilyOpenSSL:
		return n
	case inspect.FamilyBoringSSL:
		return string(f)
	default:
		return string(f) + " " + n
	}
}

// Text writes the table, at most width runes wide (0: no limit; see
// report.Table), then every failure and note in full, then a one-line
// verdict.
func Text(w io.Writer, res *Result, width int) error {
	if err := report.Table(w, Rows(res), width); err != nil {
		return err
	}
	var adv []string
	for _, bin := range res.Binaries {
		for _, s := range bin.Slices {
			adv = append(adv, advisoryLines(bin, s)...)
		}
	}
	var b strings.Builder
	if len(res.Failures)+len(res.Notes)+len(adv) > 0 {
		b.WriteString("\n")
	}
	for _, f := range res.Failures {
		fmt.Fprintf(&b, "FAIL %s\n", report.Printable(f))
	}
	for _, n := range res.Notes {
		fmt.Fprintf(&b, "note: %s\n", report.Printable(n))
	}
	for _, l := range adv {
		fmt.Fprintf(&b, "advisory: %s\n", report.Printable(l))
	}
	if a := res.Advisories; a != nil && a.Stale != "" {
		fmt.Fprintf(&b, "warning: %s\n", a.Stale)
	}
	if line := AdvisorySummary(res); line != "" {
		fmt.Fprintf(&b, "\n%s\n", report.Printable(line))
	}
	fmt.Fprintf(&b, "\n%s\n", Verdict(res))
	_, err := io.WriteString(w, b.String())
	return err
}

// Verdict is the one-line summary the table ends with, and the step
// summary too: what was looked at, what was not judged, the policy and
// the verdict.
func Verdict(res *Result) string {
	verdict := "ok"
	if !res.OK {
		verdict = fmt.Sprintf("FAILED (%d problems)", len(res.Failures))
	}
	policy := "minimum " + res.MinOpt
	if res.Strict {
		policy += ", unknown and end of life fail (-strict)"
	}
	if a := res.Advisories; a != nil && a.FailOn != "" {
		policy += ", advisories at or above " + a.FailOn + " fail (-fail-on)"
	}
	var extra []string
	if res.NotJudged > 0 {
		extra = append(extra, fmt.Sprintf("%d not judged (no OpenSSL code)", res.NotJudged))
	}
	if res.Ended > 0 {
		extra = append(extra, fmt.Sprintf("%d past end of life", res.Ended))
	}
	if a := res.Advisories; a != nil && a.Affected > 0 {
		extra = append(extra, fmt.Sprintf("%d with known advisories", a.Affected))
	}
	slices := fmt.Sprintf("%d slices", res.Slices)
	if len(extra) > 0 {
		slices += " (" + strings.Join(extra, ", ") + ")"
	}
	arts := ""
	if n := len(res.Artifacts); n > 0 {
		arts = fmt.Sprintf(", %d osslbuild artifacts verified against their manifests", n)
	}
	return fmt.Sprintf("check %s: %d binaries, %s, %d other files skipped%s; %s: %s",
		report.Printable(res.Path), len(res.Binaries), slices, res.Skipped, arts, policy, verdict)
}

// footer is what the step summary says under its table: the verdict, the
// SBOMs' problems (one located line each), the advisories over the whole
// input, and a stale table's warning.
func footer(res *Result) []string {
	out := []string{Verdict(res)}
	for _, s := range res.SBOMs {
		for _, p := range s.Problems {
			out = append(out, fmt.Sprintf("%s: %s: %s", p.Rule, s.Name(), p.Message))
		}
	}
	if line := AdvisorySummary(res); line != "" {
		out = append(out, line)
	}
	if a := res.Advisories; a != nil && a.Stale != "" {
		out = append(out, "warning: "+a.Stale)
	}
	return out
}

// Annotate writes one ::error annotation per failing slice, per binary
// with a file-level problem (inspection error, missing architecture), and
// one for a check that found nothing to judge.
func Annotate(w io.Writer, res *Result) error {
	// The first write that fails ends the output: nothing after it is
	// written, and it is the error returned.
	var err error
	write := func(command func(io.Writer, report.Annotation) error, file, title, msg string) {
		if err == nil {
			err = command(w, report.Annotation{File: file, Title: title, Msg: msg})
		}
	}
	emit := func(file, title, msg string) { write(report.Error, file, title, msg) }
	for _, b := range res.Binaries {
		// file= carries the path; the title names the member (or file) only,
		// short enough to read in the annotation list.
		title := "osslbuild check: " + cmp.Or(b.Member, filepath.Base(b.Path))
		if b.Error != "" {
			emit(b.Path, title, b.Error)
			continue
		}
		if len(b.Problems) > 0 {
			emit(b.Path, title, joinProblems(b, "", b.Problems))
		}
		for _, s := range b.Slices {
			if len(s.Problems) > 0 {
				emit(b.Path, title+" "+s.Arch, joinProblems(b, " "+s.Arch, s.Problems))
			}
		}
	}
	for _, a := range res.Artifacts {
		if len(a.Problems) > 0 {
			emit(a.Path, "osslbuild check: artifact "+a.Name, strings.Join(a.Problems, "\n"))
		}
	}
	for _, s := range res.SBOMs {
		for _, p := range s.Problems {
			// The title names the SBOM by its member, or its file.
			emit(s.Path, "osslbuild check: SBOM "+cmp.Or(s.Member, filepath.Base(s.Path)), s.Name()+": "+p.Message)
		}
	}
	if res.nothing != "" {
		emit("", "osslbuild check: nothing to judge", res.nothing)
	}
	// Known high or critical advisories that do not fail (no -fail-on, or
	// below it) are worth a look; so is a table too old to trust.
	for _, b := range res.Binaries {
		for _, s := range b.Slices {
			sa := s.Advisories
			if sa == nil || len(sa.Failing) > 0 || sa.Highest != string(advisory.Critical) && sa.Highest != string(advisory.High) {
				continue
			}
			write(report.Warning, b.Path, "osslbuild check: known advisories "+s.Arch, strings.Join(advisoryLines(b, s), "\n"))
		}
	}
	if a := res.Advisories; a != nil && a.Stale != "" {
		write(report.Warning, "", "osslbuild check: advisory table", a.Stale)
	}
	// An unknown optimisation that does not fail is still worth a look.
	for _, b := range res.Binaries {
		for _, s := range b.Slices {
			if s.OptStatus == string(validate.OptUnknown) && s.OK {
				write(report.Warning, b.Path, "osslbuild check: optimisation unknown "+s.Arch, fmt.Sprintf("%s %s: %s", b.Name(), s.Arch, s.Unknown))
			}
		}
	}
	return err
}

// joinProblems is one located line per problem: "lib.a(member.o) arm64: ...".
func joinProblems(b Binary, arch string, ps []Problem) string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.where(b) + arch + ": " + p.Message
	}
	return strings.Join(msgs, "\n")
}
