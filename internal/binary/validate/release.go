package validate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// RuleRelease is a library that is not what its release makes: an archive
// member its build files cannot make or that appears twice, a symbol two
// members define, or a symbol its .num files export that no member (no
// export of a shared library) defines.
const RuleRelease Rule = "release"

// Release is what the release's own files say one slice of a library
// holds (configure.Release, read from the tarball the recipe pins): a
// cached or given artifact is held to it, since nothing it says about
// itself can be.
type Release struct {
	Source  string            // the release tarball, for messages
	Exports []string          // the symbols the slice must define (export)
	Object  func(string) bool // whether the release can make an archive member of this name
}

// HoldToRelease holds each slice of the inspected static or shared library
// f, whose bytes are data, to what rel says of its architecture (nil:
// nothing): the members of an archive each an object the release's build
// files make, once, no symbol defined by two of them, and every symbol
// the release exports defined.
func HoldToRelease(f *inspect.File, data []byte, rel func(arch string) *Release) Report {
	c := &checker{lib: filepath.Base(f.Path)}
	for _, s := range f.Slices {
		if r := rel(s.Arch); r != nil {
			c.release(sliceArch(s), s, data, r)
		}
	}
	return Report{Path: f.Path, File: f, Violations: c.out}
}

func (c *checker) release(arch string, s inspect.Slice, data []byte, r *Release) {
	defined := map[string]string{} // symbol -> the member defining it
	seen := map[string]bool{}
	for _, o := range s.Objects {
		if o.Member != "" {
			switch {
			case seen[o.Member]:
				c.add(arch, o.Member, RuleRelease, "each member once", "twice", "the archive holds a second member of this name: %s makes each object once", r.Source)
			case !r.Object(o.Member):
				c.add(arch, o.Member, RuleRelease, "an object of "+r.Source, o.Member, "no object of this name is made by the build files of %s: not the release's code", r.Source)
			}
			seen[o.Member] = true
		}
		syms, err := inspect.DefinedExternals(data[o.Offset : o.Offset+o.Size])
		if err != nil {
			c.add(arch, o.Member, RuleRelease, "a readable symbol table", "unreadable", "%v", err)
			continue
		}
		for _, n := range syms {
			if o.MachO != nil {
				n = strings.TrimPrefix(n, "_") // C names carry an underscore in Mach-O
			}
			if other, ok := defined[n]; ok && o.Member != "" {
				c.add(arch, o.Member, RuleRelease, "one definition of "+n, "also in "+other, "defines %s, which member %s defines too: one of them is not the release's", n, other)
			}
			defined[n] = o.Member
		}
	}
	missing := slices.DeleteFunc(slices.Clone(r.Exports), func(n string) bool {
		_, ok := defined[n]
		return ok
	})
	if len(missing) > 0 {
		shown := missing[:min(len(missing), 10)]
		rest := ""
		if n := len(missing) - len(shown); n > 0 {
			rest = fmt.Sprintf(" and %d more", n)
		}
		c.add(arch, "", RuleRelease, fmt.Sprintf("the %d symbols %s exports for this configuration", len(r.Exports), r.Source), fmt.Sprintf("%d missing", len(missing)),
			"defines %d of the %d symbols %s's .num files export for this configuration; missing %s%s",
			len(r.Exports)-len(missing), len(r.Exports), r.Source, strings.Join(shown, ", "), rest)
	}
}
