package check

import (
	"fmt"
	"io/fs"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// root is an osslbuild artifact: a directory, or a directory inside a
// tarball, with the manifest it holds and what was found in it.
type root struct {
	path     string // the directory, or the tarball
	dir      string // the directory (on disk, or inside the tarball)
	inTar    bool
	manifest *artifact.Manifest
	found    map[string]artifact.Entry // every entry under dir but the manifest, by slash path relative to dir
	art      *Artifact
}

func newRoot(p, dir string, inTar bool, m *artifact.Manifest) *root {
	r := &root{path: p, dir: dir, inTar: inTar, manifest: m, found: map[string]artifact.Entry{}}
	r.art = &Artifact{Path: p, Name: m.Name, Version: m.OpenSSL.Version, Files: len(m.Files)}
	if inTar {
		r.art.Member = dir
	}
	return r
}

// where names the artifact in messages: its directory inside a tarball is
// its Member.
func (r *root) where() string { return memberName(r.path, r.art.Member) }

// dirManifest reads dir/manifest.json; it returns the artifact when the
// manifest is osslbuild's, nil when there is none or it is someone else's.
func (c *checker) dirManifest(dir string, e fs.DirEntry) *root {
	p := filepath.Join(dir, artifact.ManifestName)
	if !e.Type().IsRegular() {
		c.res.Failures = append(c.res.Failures, fmt.Sprintf("%s: %s, expected a regular file: not read", p, ctxio.Describe(p, e.Type())))
		return nil
	}
	b, err := ctxio.ReadFile(c.ctx, p, false, artifact.MaxManifestSize)
	if err != nil {
		c.res.Failures = append(c.res.Failures, err.Error())
		return nil
	}
	m, err := artifact.ParseIfOurs(b)
	if err != nil {
		c.res.Failures = append(c.res.Failures, fmt.Sprintf("%s: %v", p, err))
		return nil
	}
	if m == nil {
		return nil // someone else's manifest.json
	}
	r := newRoot(dir, dir, false, m)
	c.roots = append(c.roots, r)
	return r
}

// library reports whether rel is one of the artifact's libraries (its
// manifest's: the static pair, and a shared build's dylibs).
func (r *root) library(rel string) (string, bool) {
	lib := strings.TrimPrefix(rel, "lib/")
	return lib, lib != rel && slices.Contains(r.manifest.Target.Libraries(), lib)
}

// expects are what the artifact's manifest promises for lib, one per
// slice: the build's own expectations, with its OpenSSL version.
func (r *root) expects(lib string) []validate.Expect {
	var exps []validate.Expect
	for _, s := range r.manifest.Parts() {
		exps = append(exps, artifact.ExpectOf(r.manifest, s, lib))
	}
	return exps
}

// verify holds the artifact's files against its manifest and the manifest
// against itself; problems become failures.
func (c *checker) verify(r *root) {
	fail := func(msg string) {
		r.art.Problems = append(r.art.Problems, msg)
		c.res.Failures = append(c.res.Failures, fmt.Sprintf("%s: %s", r.where(), msg))
	}
	for _, p := range artifact.CompareFiles(r.manifest.Files, r.found) {
		fail(p.String())
	}
	m := r.manifest
	for _, p := range artifact.VerifyManifest(m) {
		fail("manifest: " + p)
	}
	if m.OpenSSL.Version == "" {
		fail("manifest records no OpenSSL version")
	}
	if len(m.Slices) == 0 && m.Target.Arch == "" {
		fail("manifest records no target architecture")
	}
	for _, s := range m.Slices {
		switch {
		case s == nil:
			fail("manifest has an empty slice entry")
		case s.OpenSSL.Version != m.OpenSSL.Version:
			fail(fmt.Sprintf("manifest's %s slice records OpenSSL %s, the artifact OpenSSL %s", s.Target.Arch, s.OpenSSL.Version, m.OpenSSL.Version))
		}
	}
	have := map[string]bool{}
	for _, b := range c.res.Binaries {
		if b.root != r || b.Error != "" {
			continue // another artifact's binary: not placed in this one's tree
		}
		if lib, ok := r.library(c.relIn(r, b)); ok {
			have[lib] = true
			for _, msg := range codeDisagrees(m.CodeEvidence, lib, b.Slices) {
				fail(msg)
			}
		}
	}
	for _, lib := range r.manifest.Target.Libraries() {
		if !have[lib] {
			fail("no lib/" + lib + " library was found in the artifact")
		}
	}
	r.art.OK = len(r.art.Problems) == 0
	c.res.Artifacts = append(c.res.Artifacts, *r.art)
}

// relIn is a binary's slash path inside its artifact.
func (c *checker) relIn(r *root, b Binary) string {
	if r.inTar {
		// Less its directory and a slash: nothing at the tarball's top (".").
		return strings.TrimPrefix(path.Clean(b.Member), strings.TrimPrefix(r.dir+"/", "./"))
	}
	rel, _ := filepath.Rel(r.dir, b.Path) // "" when it has none
	return filepath.ToSlash(rel)
}

// codeDisagrees compares the code verdicts the manifest records for lib
// with what check measured in its slices: every field, class, score and
// functions alike. The classifier is deterministic, so the same library
// gets the same verdict from the same osslbuild; a manifest claiming
// optimised code for a library whose code looks -O0 (or a better score, or
// more functions measured) was not written by the build that made it, and
// a manifest that records code evidence must record it for every slice of
// every library. Manifests from before code evidence record none, and
// nothing is compared.
func codeDisagrees(recorded []artifact.CodeEvidence, lib string, slices []Slice) []string {
	if len(recorded) == 0 {
		return nil
	}
	var out []string
	for _, s := range slices {
		if s.Code == nil {
			continue
		}
		found := false
		for _, e := range recorded {
			if e.Library != lib || !validate.SameArch(s.Arch, e.Arch) {
				continue
			}
			found = true
			score := math.Round(s.Code.Score*1000) / 1000
			if s.Code.Class != e.Class || score != e.Score || s.Code.Functions != e.Functions {
				out = append(out, fmt.Sprintf("manifest records the machine code of lib/%s %s as %s (score %.3f over %d functions), but it measures %s (score %.3f over %d functions)",
					lib, e.Arch, e.Class, e.Score, e.Functions, s.Code.Class, score, s.Code.Functions))
			}
		}
		if !found {
			out = append(out, fmt.Sprintf("manifest records no machine-code verdict for lib/%s %s, which it measures as %s (score %.3f over %d functions)",
				lib, s.Arch, s.Code.Class, s.Code.Score, s.Code.Functions))
		}
	}
	return out
}
