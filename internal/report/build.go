package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/lifecycle"
)

// Builds is the GitHub Actions front end of the build targets (a
// pipeline.Observer): when GITHUB_ACTIONS=true, a slice's full build log is
// folded into a group, every validation failure becomes an ::error::
// annotation naming the file and slice, and each published artifact adds
// one row per slice to the step summary. Outside Actions it does nothing.
type Builds struct {
	W   io.Writer        // the build's log
	Env Env              // nil: the process environment
	Now func() time.Time // the clock for end-of-life marks; nil: time.Now
	mu  sync.Mutex
}

// BuildLog prints the build log inside a ::group::, each line made safe
// (SafeOutput): a line of make's output cannot end the group or start a
// command.
func (b *Builds) BuildLog(name, logPath string) {
	if !InActions(b.Env) {
		return
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	Group(b.W, b.Env, name+": full build log", func() error {
		_, err := b.W.Write(SafeOutput(b.Env, data, false))
		return err
	})
}

// Failed turns the validation failures in err into ::error:: annotations,
// or annotates the failure as a whole.
func (b *Builds) Failed(name string, err error) {
	if !InActions(b.Env) || err == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var ve *validate.Error
	found := false
	for _, e := range flatten(err) {
		if errors.As(e, &ve) {
			found = true
			for _, v := range ve.Violations {
				Error(b.W, Annotation{
					File:  relPath(ve.Path),
					Title: fmt.Sprintf("%s %s: %s", name, v.Arch, v.Rule),
					Msg:   v.String(),
				})
			}
		}
	}
	if !found {
		Error(b.W, Annotation{Title: name + ": build failed", Msg: err.Error()})
	}
}

// Published appends the artifact's slices to the step summary, and under
// Actions annotates a release whose series has ended (the summary's
// version cells say so too) or that has a known high or critical advisory.
func (b *Builds) Published(m *artifact.Manifest, pub *artifact.Published) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if b.Now != nil {
		now = b.Now()
	}
	if msg, ended := lifecycle.Warning(m.OpenSSL.Version, now); ended && InActions(b.Env) {
		Warning(b.W, Annotation{Title: m.Name + ": end of life", Msg: msg})
	}
	if msg, ok := advisory.Warning(m.OpenSSL.Version); ok && InActions(b.Env) {
		Warning(b.W, Annotation{Title: m.Name + ": known advisories", Msg: msg})
	}
	if err := AppendSummary(b.Env, "osslbuild: "+m.Name, SummaryRows(m, pub, now)); err != nil {
		fmt.Fprintf(b.W, "warning: %v\n", err)
	}
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	if u := errors.Unwrap(err); u != nil {
		return append([]error{err}, flatten(u)...)
	}
	return []error{err}
}

func relPath(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return p
}

// SummaryRows is one row per slice and library carrying a compiler line:
// version (marked when its series has ended by now), arch, minos,
// compiler line, optimisation, tarball digest.
func SummaryRows(m *artifact.Manifest, pub *artifact.Published, now time.Time) []Row {
	version := VersionCell(m.OpenSSL.Version, now)
	minos := map[string]string{}
	for _, s := range m.Parts() {
		minos[s.Arch] = s.MinOS
	}
	row := func(lib, arch string) Row {
		return Row{Artifact: filepath.Base(pub.Tarball) + "(" + lib + ")", Arch: arch,
			Version: version, MinOS: minos[arch], Digest: pub.Digests.SHA256, Status: "ok"}
	}
	var rows []Row
	at := map[[2]string]int{} // library and arch: the row
	for _, l := range m.CompilerLines {
		if _, ok := at[[2]string{l.Library, l.Arch}]; !ok {
			at[[2]string{l.Library, l.Arch}] = len(rows)
		}
		r := row(l.Library, l.Arch)
		r.Opt, r.Compiler = l.Opt, strings.TrimPrefix(l.Line, "compiler: ")
		rows = append(rows, r)
	}
	// The machine code's verdict beside each line; libssl.a, which records
	// no line, is shown by its code alone.
	for _, e := range m.CodeEvidence {
		i, ok := at[[2]string{e.Library, e.Arch}]
		if !ok {
			rows = append(rows, row(e.Library, e.Arch))
			i = len(rows) - 1
		}
		rows[i].Code = CodeCell(e.Class, e.Score, e.Functions)
		if e.ISA != nil {
			rows[i].ISA = ISACell(e.ISA.Level, e.ISA.Limit, len(e.ISA.Dispatched))
		}
	}
	return rows
}

// VersionCell is a release for a table cell, marked when its series has
// ended by now: "3.0.22 (end of life 2026-09-07)". check's tables mark
// theirs the same way.
func VersionCell(version string, now time.Time) string {
	if s, ok := lifecycle.Of(version); ok && s.Ended(now) {
		return EndOfLifeCell(version, s.EndOfLife)
	}
	return version
}

// EndOfLifeCell appends the end-of-life date to a version cell.
func EndOfLifeCell(version, date string) string { return version + " (end of life " + date + ")" }

// ISACell is the instruction set for a table cell: "core2", or
// "x86-64-v3 (12 dispatched)" when the code above the limit is functions
// compiled for a higher target on purpose.
func ISACell(level, limit string, dispatched int) string {
	if dispatched > 0 && level != limit {
		return fmt.Sprintf("%s (%d dispatched)", level, dispatched)
	}
	return level
}

// CodeCell is a machine-code verdict for a table cell: "optimised
// 0.02/2674" (score over functions measured), "-O0-like 0.91/412", "too
// little 0/3".
func CodeCell(class string, score float64, functions int) string {
	if class == string(inspect.CodeTooLittle) {
		class = "too little"
	}
	return fmt.Sprintf("%s %.2f/%d", class, score, functions)
}
