package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/report"
	"github.com/osslbuild/osslbuild/internal/validate"
)

// GitHub Actions-native output: when GITHUB_ACTIONS=true, a slice's full
// build log is folded into a group, every validation failure becomes an
// ::error:: annotation naming the file and slice, and each published
// artifact adds one row per slice to the step summary.

func (o *Options) actions() bool { return report.InActions(o.Env) }

// foldLog prints the build log inside a ::group:: in Actions.
func (o *Options) foldLog(name, logPath string) {
	if !o.actions() {
		return
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		return
	}
	report.Group(o.Log, o.Env, name+": full build log", func() error {
		_, err := o.Log.Write(b)
		return err
	})
}

// annotate turns validation failures in err into ::error:: annotations.
func (o *Options) annotate(name string, err error) {
	if !o.actions() || err == nil {
		return
	}
	var ve *validate.Error
	found := false
	for _, e := range flatten(err) {
		if errors.As(e, &ve) {
			found = true
			for _, v := range ve.Violations {
				report.Error(o.Log, report.Annotation{
					File:  relPath(ve.Path),
					Title: fmt.Sprintf("%s %s: %s", name, v.Arch, v.Rule),
					Msg:   v.String(),
				})
			}
		}
	}
	if !found {
		report.Error(o.Log, report.Annotation{Title: name + ": build failed", Msg: err.Error()})
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

// summarise appends the published artifact's slices to the step summary.
func (o *Options) summarise(m *artifact.Manifest, pub *artifact.Published) {
	rows := SummaryRows(m, pub)
	if err := report.AppendSummary(o.Env, "osslbuild: "+m.Name, rows); err != nil {
		o.logf("warning: %v", err)
	}
}

// SummaryRows is one row per slice and library carrying a compiler line:
// version, arch, minos, compiler line, optimisation, tarball digest.
func SummaryRows(m *artifact.Manifest, pub *artifact.Published) []report.Row {
	minos := map[string]string{}
	if len(m.Slices) == 0 {
		minos[m.Target.Arch] = m.Target.MinOS
	}
	for _, s := range m.Slices {
		minos[s.Target.Arch] = s.Target.MinOS
	}
	var rows []report.Row
	for _, l := range m.CompilerLines {
		rows = append(rows, report.Row{
			Artifact: filepath.Base(pub.Tarball) + "(" + l.Library + ")",
			Arch:     l.Arch,
			Version:  m.OpenSSL.Version,
			MinOS:    minos[l.Arch],
			Opt:      l.Opt,
			Compiler: strings.TrimPrefix(l.Line, "compiler: "),
			Digest:   pub.Digests.SHA256,
			Status:   "ok",
		})
	}
	return rows
}
