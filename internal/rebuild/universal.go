package rebuild

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/diff"
)

// universal rebuilds a universal artifact: whole (build:universal2, every
// file compared) when its own osslbuild and toolchain and every slice's
// are here; else slice by slice where a slice's are, each slice of the
// merged libraries compared with the rebuilt slice's library, saying
// which slices it could not rebuild and why.
func (r *rebuilder) universal(ctx context.Context, m *artifact.Manifest, dir string) (*Result, error) {
	type part struct {
		arch string
		plan plan
		why  []string
	}
	var parts []part
	// Every merged slice's records are claims (universal.claimed), and
	// prepare holds each slice's claimed osslbuild, toolchain, recipe and
	// source to this checkout and machine: when all of them and the
	// merge's own records can be rebuilt here, so can the whole.
	whole := m.Claims == nil
	for _, s := range m.Slices {
		p, why := r.prepare(ctx, s, s.Target.Name)
		parts = append(parts, part{s.Target.Arch, p, why})
		whole = whole && len(why) == 0
	}
	if whole {
		// The merge's own records: its osslbuild and toolchain.
		merge := *m
		merge.Slices, merge.Target = nil, m.Slices[0].Target
		if p, why := r.prepare(ctx, &merge, ""); len(why) == 0 {
			out, err := r.build(ctx, p, "universal2")
			if err != nil {
				return r.res, err
			}
			r.reportFiles(ctx, dir, out)
			return r.verdict(m.Name)
		} else {
			for _, w := range why {
				r.res.Skipped = append(r.res.Skipped, "the merge: "+w)
			}
		}
	}
	var built int
	for _, p := range parts {
		if len(p.why) > 0 {
			for _, w := range p.why {
				r.res.Skipped = append(r.res.Skipped, p.arch+" slice: "+w)
				fmt.Fprintf(r.o.Report, "SKIP %s slice: %s\n", p.arch, w)
			}
			continue
		}
		out, err := r.build(ctx, p.plan, "")
		if err != nil {
			return r.res, err
		}
		built++
		r.compareSlice(ctx, dir, out, p.arch)
	}
	if built == 0 {
		return r.refuse(m.Name, r.res.Skipped)
	}
	return r.verdict(m.Name)
}

// compareSlice compares each universal file of the artifact a with the
// rebuilt slice b's file of the same path: the arch slice of the one must
// be the other's bytes. Files that are not per-architecture are reported
// as SKIP: only a rebuild of every slice makes them.
func (r *rebuilder) compareSlice(ctx context.Context, a, b, arch string) {
	fa, err := artifact.Entries(ctx, a)
	if err != nil {
		r.res.Add(diff.Line{Status: "FAIL", File: ".", Detail: err.Error()})
		return
	}
	for _, n := range slices.Sorted(maps.Keys(fa)) {
		ba, err := ctxio.ReadFile(ctx, filepath.Join(a, n), false, artifact.MaxTarStream)
		if err != nil {
			r.res.Add(diff.Line{Status: "FAIL", File: n, Detail: err.Error()})
			continue
		}
		f, err := inspect.InspectReader(n, bytes.NewReader(ba), int64(len(ba)))
		if err != nil || f.Format != inspect.FormatFat {
			r.res.Add(diff.Line{Status: "SKIP", File: n + " [" + arch + "]", Detail: "not per-architecture: needs every slice rebuilt"})
			continue
		}
		var got []byte
		for _, s := range f.Slices {
			if s.Arch == arch {
				got = span(ba, s.Offset, s.Size)
			}
		}
		file := n + " [" + arch + "]"
		bb, err := ctxio.ReadFile(ctx, filepath.Join(b, n), false, artifact.MaxTarStream)
		switch {
		case got == nil:
			r.res.Add(diff.Line{Status: "FAIL", File: file, Detail: "the artifact's file has no " + arch + " slice"})
		case err != nil:
			r.res.Add(diff.Line{Status: "FAIL", File: file, Detail: "not in the rebuilt slice: " + err.Error()})
		default:
			r.res.File(file, diff.Explain(n, got, bb))
		}
	}
}

func span(b []byte, off, size int64) []byte {
	if off < 0 || size < 0 || off+size > int64(len(b)) {
		return nil
	}
	return b[off : off+size]
}
