package validate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// The rules only a built shared library has.
const (
	RuleInstallName Rule = "install-name" // LC_ID_DYLIB (DT_SONAME) missing or not the expected name
	RuleDependency  Rule = "dependency"   // a library loaded that is not the system's or the sibling, or a run path
	RuleBuildPath   Rule = "build-path"   // the build directory named anywhere in the file
	RuleExports     Rule = "exports"      // a symbol exported that no object of the release's libraries defines
)

// DylibExpect is what a dylib the build made must say of itself, beyond
// its Expect (CPU, minos, compiler line, code evidence): its install name,
// the only dylibs it may load (by the names the loader will look for), and
// strings that must appear nowhere in it (the build and staging
// directories).
type DylibExpect struct {
	InstallName string
	Loads       []string
	Forbidden   []string
	// Exports, when set, are the only symbols the dylib may export: the
	// external symbols the same build's objects define (nothing the
	// toolchain or a shim slipped in).
	Exports map[string]bool
}

// Dylib validates a shared library the build made against exps and d: for
// one expectation, one thin MH_DYLIB (an ELF ET_DYN) image of its
// architecture; for more, a universal dylib with exactly one slice per
// expectation, each held to its own. Every rule a static library's objects
// are held to that a linked image can be, a valid code signature on
// arm64, the install name (SONAME), the dependencies, and no build path.
func Dylib(ctx context.Context, path string, exps []Expect, d DylibExpect) (Report, error) {
	f, err := inspectFor(ctx, path, exps)
	if err != nil {
		return Report{Path: path}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Report{Path: path}, fmt.Errorf("validate: %w", err)
	}
	r := DylibFile(f, data, exps, d)
	return r, r.Err()
}

// DylibFile holds already-inspected facts of a dylib (data, its bytes,
// for the build-path rule; nil skips it) to the expectations: one for a
// thin dylib, one per slice for a universal one.
func DylibFile(f *inspect.File, data []byte, exps []Expect, d DylibExpect) Report {
	r := Report{Path: f.Path, File: f}
	c := &checker{lib: filepath.Base(f.Path), dylib: true}
	wantFat := len(exps) > 1
	var want []string
	for _, e := range exps {
		want = append(want, e.Slice.Arch)
	}
	fat := f.Format == inspect.FormatFat
	if len(f.Slices) != len(exps) || fat != wantFat {
		c.add("", "", RuleSlices, strings.Join(want, ", "), fmt.Sprintf("%d slices", len(f.Slices)),
			"expected %s dylib of %s, found %d slices", map[bool]string{true: "a universal", false: "a thin"}[wantFat], strings.Join(want, " and "), len(f.Slices))
	}
	for _, s := range f.Slices {
		i := slices.IndexFunc(exps, func(e Expect) bool { return SameArch(e.Slice.Arch, s.Arch) })
		if i < 0 {
			c.add(s.Arch, "", RuleSlices, strings.Join(want, ", "), s.Arch, "a %s slice, expected only %s", s.Arch, strings.Join(want, " and "))
			continue
		}
		r.Slices = append(r.Slices, c.slice(s, exps[i]))
		for _, o := range s.Objects {
			c.dylibFacts(exps[i].Slice.Arch, o, d, data)
		}
	}
	for _, bad := range d.Forbidden {
		if bad != "" && bytes.Contains(data, []byte(bad)) {
			c.add("", "", RuleBuildPath, "no build path", bad, "the file names the build directory %s; nothing of the build machine may reach the artifact", bad)
		}
	}
	r.Violations = c.out
	return r
}

// dylibFacts holds one image's load commands (an ELF library's dynamic
// section) and exports to d.
func (c *checker) dylibFacts(arch string, o inspect.Object, d DylibExpect, data []byte) {
	switch {
	case o.MachO != nil:
		c.machoFacts(arch, o.MachO, d)
	case o.ELF != nil:
		c.elfFacts(arch, o.ELF, d)
	default:
		return
	}
	if d.Exports != nil && data != nil {
		c.exports(arch, data[o.Offset:o.Offset+o.Size], d.Exports)
	}
}

func (c *checker) machoFacts(arch string, m *inspect.MachO, d DylibExpect) {
	switch {
	case m.ID == nil:
		c.add(arch, "", RuleInstallName, d.InstallName, "none", "no LC_ID_DYLIB: a dylib needs an install name")
	case m.ID.Name != d.InstallName:
		c.add(arch, "", RuleInstallName, d.InstallName, m.ID.Name, "install name is %s, expected %s", m.ID.Name, d.InstallName)
	}
	for _, l := range m.Loads {
		if !slices.Contains(d.Loads, l.Name) {
			c.add(arch, "", RuleDependency, strings.Join(d.Loads, ", "), l.Name, "%s %s: expected only %s", l.Cmd, l.Name, strings.Join(d.Loads, " and "))
		}
	}
	for _, p := range m.Rpaths {
		c.add(arch, "", RuleDependency, "no run path", p, "LC_RPATH %s: a library leaves its run paths to the program that loads it", p)
	}
}

// elfFacts holds an ELF library's dynamic section to d: its SONAME is the
// name programs record, DT_NEEDED what the loader must find, and a
// DT_RPATH or DT_RUNPATH would make the loader look wherever it says (the
// build directory, a world-writable path) before the program's own.
func (c *checker) elfFacts(arch string, e *inspect.ELF, d DylibExpect) {
	dyn := e.Dynamic
	if e.DynamicErr != nil {
		c.add(arch, "", RuleFormat, "a readable dynamic section", "malformed", "%v", e.DynamicErr)
		return
	}
	if dyn == nil {
		c.add(arch, "", RuleInstallName, d.InstallName, "none", "no dynamic section: a shared library needs one, with its SONAME")
		return
	}
	switch {
	case dyn.Soname == "":
		c.add(arch, "", RuleInstallName, d.InstallName, "none", "no DT_SONAME: programs linked against it would record its path, expected SONAME %s", d.InstallName)
	case dyn.Soname != d.InstallName:
		c.add(arch, "", RuleInstallName, d.InstallName, dyn.Soname, "SONAME is %s, expected %s", dyn.Soname, d.InstallName)
	}
	for _, n := range dyn.Needed {
		if !slices.Contains(d.Loads, n) {
			c.add(arch, "", RuleDependency, strings.Join(d.Loads, ", "), n, "DT_NEEDED %s: expected only %s", n, strings.Join(d.Loads, " and "))
		}
	}
	for _, p := range dyn.RunPaths() {
		c.add(arch, "", RuleDependency, "no run path", p, "run path %s (DT_RPATH or DT_RUNPATH): a library leaves its run paths to the program that loads it", p)
	}
}

// exports holds the symbols an image defines for others to the set the
// release's own objects define.
func (c *checker) exports(arch string, image []byte, allowed map[string]bool) {
	syms, err := inspect.DefinedExternals(image)
	if err != nil {
		c.add(arch, "", RuleExports, "a readable symbol table", "unreadable", "%v", err)
		return
	}
	extra := slices.DeleteFunc(syms, func(s string) bool { return allowed[s] })
	if len(extra) > 0 {
		shown := extra
		if len(shown) > maxListed {
			shown = append(shown[:maxListed:maxListed], fmt.Sprintf("and %d more", len(extra)-maxListed))
		}
		c.add(arch, "", RuleExports, "only symbols the release's objects define", strings.Join(extra, " "),
			"exports %d symbols no object of the release's libraries defines: %s", len(extra), strings.Join(shown, ", "))
	}
}
