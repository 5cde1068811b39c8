// Package diff compares two osslbuild artifacts (directories, their
// .tar.gz, or an artifact's manifest.json alone), each verified against its
// manifest first, and says what changes for a program that links them:
// release and options, Configure's argv and environment, compiler lines,
// per-library size, member count and exported symbols, instruction-set
// level and extensions, code evidence, deployment targets, dylibs' install
// names and what they load, and the file list and digests (a changed file
// explained down to the archive member and section by Explain, the
// explainer verify:reproducible and verify:rebuild use too). It renders
// text for a terminal, Markdown for a pull request's body and JSON for
// tools.
package diff

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/artifact/unpacked"
	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// Side is one of the two things compared, verified.
type Side struct {
	Path     string // as given
	Manifest *artifact.Manifest
	// Dir is the verified artifact directory; "" when only a manifest was
	// given (then nothing but what the manifest records is compared).
	Dir       string
	Libraries map[string]artifact.Library // by path in the artifact (lib/libcrypto.a)
}

// Open verifies path and reads what Compare needs: a directory or a
// .tar.gz (unpacked under work) is held to its manifest (every file's
// sha256, nothing added, linked or special; the manifest held to itself);
// a manifest.json file alone is held to itself. A mismatch is an error
// wrapping artifact.ErrMismatch.
func Open(ctx context.Context, path, work string) (*Side, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	want := "(want an osslbuild artifact: a directory, its .tar.gz or its " + artifact.ManifestName + ")"
	if fi.Mode().IsRegular() && !strings.HasSuffix(path, ".tar.gz") && !strings.HasSuffix(path, ".tgz") {
		m, err := artifact.LoadManifestFile(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("diff: %w %s", err, want)
		}
		return &Side{Path: path, Manifest: m}, nil
	}
	dir, err := unpacked.Dir(ctx, path, work)
	if err != nil {
		return nil, fmt.Errorf("diff: %w %s", err, want)
	}
	m, err := artifact.Verify(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("diff: artifact %s: %w", path, err)
	}
	s := &Side{Path: path, Manifest: m, Dir: dir, Libraries: map[string]artifact.Library{}}
	for _, rel := range slices.Sorted(maps.Keys(m.Files)) {
		if !isLibrary(rel) {
			continue
		}
		l, err := artifact.ReadLibrary(ctx, filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, fmt.Errorf("diff: artifact %s: %s: %w", path, rel, err)
		}
		s.Libraries[rel] = l
	}
	return s, nil
}

func isLibrary(rel string) bool {
	base := filepath.Base(rel)
	return strings.HasPrefix(rel, "lib/") && (strings.HasSuffix(base, ".a") || strings.HasSuffix(base, ".dylib") || strings.Contains(base, ".so"))
}

// Report is what differs between A and B, section by section, in a fixed
// order; a section with no difference is left out.
type Report struct {
	A         string    `json:"a"`
	B         string    `json:"b"`
	NameA     string    `json:"name_a"`
	NameB     string    `json:"name_b"`
	Identical bool      `json:"identical"`
	Notes     []string  `json:"notes,omitempty"` // what could not be compared, and why
	Sections  []Section `json:"sections"`
}

// Section is one kind of fact: values that changed, and members of a set
// (options, symbols, files) only in A (Removed) or only in B (Added).
type Section struct {
	Title   string   `json:"title"`
	Changed []Change `json:"changed,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Added   []string `json:"added,omitempty"`
}

// Change is one value in A and in B ("" where that side has none).
type Change struct {
	Key    string   `json:"key"`
	A      string   `json:"a"`
	B      string   `json:"b"`
	Detail []string `json:"detail,omitempty"` // for a changed file: where it differs
}

func (s Section) empty() bool { return len(s.Changed)+len(s.Removed)+len(s.Added) == 0 }

// Compare opens a and b (see Open; tarballs are unpacked under a scratch
// directory removed before it returns) and compares them.
func Compare(ctx context.Context, a, b string) (*Report, error) {
	work, err := os.MkdirTemp("", "osslbuild-diff-")
	if err != nil {
		return nil, fmt.Errorf("diff: scratch directory: %w", err)
	}
	defer os.RemoveAll(work)
	sa, err := Open(ctx, a, filepath.Join(work, "a"))
	if err != nil {
		return nil, err
	}
	sb, err := Open(ctx, b, filepath.Join(work, "b"))
	if err != nil {
		return nil, err
	}
	return CompareSides(ctx, sa, sb)
}

// CompareSides compares two opened sides.
func CompareSides(ctx context.Context, a, b *Side) (*Report, error) {
	r := &Report{A: a.Path, B: b.Path, NameA: a.Manifest.Name, NameB: b.Manifest.Name}
	fa, fb := facts(a.Manifest), facts(b.Manifest)
	for _, title := range order {
		s := Section{Title: title}
		s.Changed = changes(fa.values[title], fb.values[title])
		s.Removed, s.Added = setDiff(fa.sets[title], fb.sets[title])
		if !s.empty() {
			r.Sections = append(r.Sections, s)
		}
		if title == "code evidence" {
			// The libraries themselves come after what the manifest says
			// of their code.
			libs, err := libraries(a, b, r)
			if err != nil {
				return nil, err
			}
			r.Sections = append(r.Sections, libs...)
		}
	}
	files, err := fileSection(ctx, a, b)
	if err != nil {
		return nil, err
	}
	if !files.empty() {
		r.Sections = append(r.Sections, files)
	}
	r.Identical = len(r.Sections) == 0
	return r, nil
}

// order is the sections' order, most consequential first.
var order = []string{"release", "target", "deployment targets", "options", "Configure argv", "Configure environment", "compiler lines", "instruction set", "code evidence", "dylibs"}

type factSet struct {
	values map[string]map[string]string
	sets   map[string][]string
}

// facts flattens what a manifest records into sections of keyed values
// and sets. Keys of a universal artifact's slices carry the slice's
// architecture; a thin artifact's carry none, so that an arm64 artifact
// and an x86_64 one compare field by field.
func facts(m *artifact.Manifest) factSet {
	f := factSet{values: map[string]map[string]string{}, sets: map[string][]string{}}
	val := func(sec, key, v string) {
		if f.values[sec] == nil {
			f.values[sec] = map[string]string{}
		}
		if v != "" {
			f.values[sec][key] = v
		}
	}
	add := func(sec string, v ...string) { f.sets[sec] = append(f.sets[sec], v...) }
	val("release", "artifact", m.Name)
	val("release", "OpenSSL", m.OpenSSL.Version)
	val("release", "source sha256", m.OpenSSL.SHA256)
	val("release", "signer", m.OpenSSL.Signer)
	val("release", "osslbuild", m.Osslbuild)
	val("release", "recipe", strings.TrimSpace(m.Recipe.Name+" "+m.Recipe.Path+" sha256 "+m.Recipe.SHA256))
	var patches []string
	for _, p := range m.Patches {
		patches = append(patches, p.Name+" "+p.SHA256)
	}
	val("release", "patches", strings.Join(patches, ", "))
	val("release", "variant", m.Variant)
	val("release", "compiler", m.Toolchain.Compiler)
	val("release", "SDK", m.Toolchain.SDK)
	val("release", "SDK digest", m.Toolchain.SDKDigest)
	universal := len(m.Slices) > 0
	parts := []*artifact.Manifest{m}
	if universal {
		parts = m.Slices
		val("target", "target", m.Target.Name+" "+m.Target.Arch)
	}
	for _, p := range parts {
		if p == nil {
			continue
		}
		prefix := ""
		if universal {
			prefix = p.Target.Arch + " "
		}
		k := func(key string) string { return prefix + key }
		t := p.Target
		val("target", k("target"), t.Name)
		val("target", k("Configure target"), t.Configure)
		val("target", k("os"), t.OS)
		val("target", k("arch"), t.Arch)
		val("target", k("flags"), strings.Join(t.Flags, " "))
		val("target", k("openssldir"), t.OpenSSLDir)
		if t.Shared != nil {
			val("target", k("shared"), fmt.Sprintf("install name %s, version %s, static too: %t", t.Shared.InstallName, t.Shared.Version, t.Shared.Static))
		}
		val("target", k("clang -target"), p.Toolchain.Targets[t.Arch])
		val("deployment targets", k("min_os"), t.MinOS)
		val("Configure argv", k("CFLAGS (Makefile)"), p.Configure.CFLAGS)
		for _, o := range t.Options {
			add("options", k(o))
		}
		for _, o := range t.Skipped {
			add("options", k("skipped: "+o))
		}
		for i, a := range p.Configure.Argv {
			if i == 0 {
				val("Configure argv", k("Configure"), a)
				continue
			}
			add("Configure argv", k(a))
		}
		for _, e := range p.Configure.Env {
			add("Configure environment", k(e))
		}
	}
	// Compiler lines, code evidence and dylibs are recorded per library and
	// architecture on the artifact itself (a universal one's slices hold
	// copies: Distribute).
	for _, l := range m.CompilerLines {
		add("compiler lines", fmt.Sprintf("%s %s: %s (%s)", l.Library, l.Arch, l.Line, l.Opt))
	}
	for _, c := range m.CodeEvidence {
		key := c.Library + " " + c.Arch
		val("code evidence", key, fmt.Sprintf("%s, score %.3f over %d functions", c.Class, c.Score, c.Functions))
		if c.ISA != nil {
			val("instruction set", key+" level", c.ISA.Level)
			val("instruction set", key+" extensions", strings.Join(c.ISA.Extensions, " "))
			val("instruction set", key+" held to", c.ISA.Limit)
			var d []string
			for _, fn := range c.ISA.Dispatched {
				d = append(d, fmt.Sprint(fn))
			}
			val("instruction set", key+" dispatched above it", strings.Join(d, ", "))
		}
	}
	for _, d := range m.Dylibs {
		key := d.Library + " " + d.Arch
		val("dylibs", key+" install name", d.InstallName)
		val("dylibs", key+" versions", strings.Trim(d.Current+" (compatibility "+d.Compatibility+")", " ()"))
		val("dylibs", key+" loads", strings.Join(d.Loads, ", "))
		val("dylibs", key+" signature", d.Signature)
		for _, s := range m.Parts() {
			if s.Arch == d.Arch || !universal {
				val("deployment targets", key, s.MinOS)
			}
		}
	}
	for _, l := range m.LinkChecks {
		val("deployment targets", "linked for ("+l.Arch+")", l.Platform)
	}
	return f
}

func changes(a, b map[string]string) []Change {
	var out []Change
	for _, k := range Keys(a, b) {
		if a[k] != b[k] {
			out = append(out, Change{Key: k, A: a[k], B: b[k]})
		}
	}
	return out
}

// setDiff is what only a has and what only b has, sorted, unique.
func setDiff(a, b []string) (removed, added []string) {
	a, b = slices.Compact(slices.Sorted(slices.Values(a))), slices.Compact(slices.Sorted(slices.Values(b)))
	return lacking(a, b), lacking(b, a)
}

// lacking is what of the sorted x the sorted y lacks.
func lacking(x, y []string) (out []string) {
	for _, v := range x {
		if _, found := slices.BinarySearch(y, v); !found {
			out = append(out, v)
		}
	}
	return out
}

// libraries compares the libraries' sizes, members and exported symbols,
// which only files hold (a manifest alone records none of them).
func libraries(a, b *Side, r *Report) ([]Section, error) {
	if a.Dir == "" || b.Dir == "" {
		r.Notes = append(r.Notes, "library sizes, members and exported symbols not compared: "+manifestOnly(a, b)+" is a manifest alone")
		return nil, nil
	}
	sec := Section{Title: "libraries"}
	sec.Removed, sec.Added = setDiff(slices.Collect(maps.Keys(a.Libraries)), slices.Collect(maps.Keys(b.Libraries)))
	var syms []Section
	for _, k := range Keys(a.Libraries, b.Libraries) {
		la, oka := a.Libraries[k]
		lb, okb := b.Libraries[k]
		if !oka || !okb {
			continue
		}
		if la.Size != lb.Size {
			sec.Changed = append(sec.Changed, Change{Key: k + " size", A: fmt.Sprintf("%d bytes", la.Size), B: fmt.Sprintf("%d bytes (%+d)", lb.Size, lb.Size-la.Size)})
		}
		if ma, mb := members(la), members(lb); ma != mb {
			sec.Changed = append(sec.Changed, Change{Key: k + " members", A: ma, B: mb})
		}
		syms = append(syms, symbols(k, la, lb)...)
	}
	var out []Section
	if !sec.empty() {
		out = append(out, sec)
	}
	return append(out, syms...), nil
}

// symbols compares exported symbols slice by slice when either library is
// universal; two thin ones compare whatever their architectures, as facts
// compares thin artifacts.
func symbols(k string, a, b artifact.Library) []Section {
	var out []Section
	add := func(title string, x, y []string) {
		s := Section{Title: title}
		if s.Removed, s.Added = setDiff(x, y); !s.empty() {
			out = append(out, s)
		}
	}
	if !a.Universal && !b.Universal {
		add("exported symbols of "+k, slices.Concat(slices.Collect(maps.Values(a.Symbols))...), slices.Concat(slices.Collect(maps.Values(b.Symbols))...))
		return out
	}
	for _, arch := range Keys(a.Symbols, b.Symbols) {
		add("exported symbols of "+k+" ("+arch+")", a.Symbols[arch], b.Symbols[arch])
	}
	return out
}

func members(l artifact.Library) string {
	var parts []string
	for _, arch := range slices.Sorted(maps.Keys(l.Members)) {
		parts = append(parts, fmt.Sprintf("%d (%s)", l.Members[arch], arch))
	}
	return strings.Join(parts, ", ")
}

func manifestOnly(a, b *Side) string {
	var names []string
	for _, s := range []*Side{a, b} {
		if s.Dir == "" {
			names = append(names, s.Path)
		}
	}
	return strings.Join(names, " and ")
}

// maxDetail bounds how a changed file is explained: the first members and
// sections that differ are the ones a reviewer reads.
const maxDetail = 10

// fileSection lists files only in A or only in B and files whose digest
// differs, explained through Explain where both are on disk.
func fileSection(ctx context.Context, a, b *Side) (Section, error) {
	s := Section{Title: "files"}
	s.Removed, s.Added = setDiff(slices.Collect(maps.Keys(a.Manifest.Files)), slices.Collect(maps.Keys(b.Manifest.Files)))
	for _, p := range slices.Sorted(maps.Keys(a.Manifest.Files)) {
		da, db := a.Manifest.Files[p], b.Manifest.Files[p]
		if db == "" || da == db {
			continue
		}
		c := Change{Key: p, A: "sha256 " + da, B: "sha256 " + db}
		if a.Dir != "" && b.Dir != "" {
			// Reading stops with ctx.
			ba, err := ctxio.ReadFile(ctx, filepath.Join(a.Dir, filepath.FromSlash(p)), false, artifact.MaxTarStream)
			if err != nil {
				return s, fmt.Errorf("diff: %w", err)
			}
			bb, err := ctxio.ReadFile(ctx, filepath.Join(b.Dir, filepath.FromSlash(p)), false, artifact.MaxTarStream)
			if err != nil {
				return s, fmt.Errorf("diff: %w", err)
			}
			diffs := Explain(p, ba, bb)
			for i, d := range diffs {
				if i == maxDetail {
					c.Detail = append(c.Detail, fmt.Sprintf("... and %d more", len(diffs)-maxDetail))
					break
				}
				loc := d.Member
				if loc != "" {
					loc = "(" + loc + ") "
				}
				c.Detail = append(c.Detail, loc+d.Detail)
			}
		}
		s.Changed = append(s.Changed, c)
	}
	return s, nil
}
