// Package recipe loads osslbuild's declarative recipes (TOML, see
// recipes/openssl.toml), validates them strictly, and resolves a Plan for one
// release and one target: the single description of what a build must do and
// what its result must be.
package recipe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/hashicorp/go-version"

	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/recipes"
)

// ErrInvalid marks a recipe that does not satisfy the schema.
var ErrInvalid = errors.New("invalid recipe")

// ErrUnknown marks a request for a release or target the recipe lacks.
var ErrUnknown = errors.New("not in recipe")

// Recipe is a parsed, validated recipe file.
type Recipe struct {
	Name     string // file name without extension, e.g. "openssl"
	Path     string // where it was read from (embedded: "recipes/<file>")
	SHA256   string // digest of the file's bytes, recorded in manifests
	Default  string
	Prefix   string
	Options  []Option
	Targets  map[string]Target
	Releases []Release
	// Universal2Dispatch are the public headers allowed to differ between
	// the universal2 slices (merged with a per-architecture dispatch);
	// any other difference refuses the merge.
	Universal2Dispatch []string
}

// Option is one Configure option, optionally limited to some releases.
type Option struct {
	Name     string     `toml:"name"`
	Versions string     `toml:"versions"`
	when     Constraint // parsed Versions; nil matches every release
}

// Target is one build target as the recipe writes it: the slice it builds
// (its options not yet resolved for a release) and its own extra options,
// which a release's Plan resolves into the Slice's.
type Target struct {
	platform.Slice
	Options []Option `toml:"options"` // extra Configure options for this target only
}

// Release is one pinned upstream OpenSSL release.
type Release struct {
	Version   string   `toml:"version"`
	SHA256    string   `toml:"sha256"`
	Size      int64    `toml:"size"`
	URLs      []string `toml:"urls"`
	Signers   []string `toml:"signers"`   // primary key fingerprints from keys/
	Signature string   `toml:"signature"` // "required" (default) or "optional"
}

// FileName is the upstream tarball name, openssl-<version>.tar.gz.
func (r Release) FileName() string { return "openssl-" + r.Version + ".tar.gz" }

// SignatureRequired reports whether a missing signature is fatal.
func (r Release) SignatureRequired() bool { return r.Signature != "optional" }

type fileSchema struct {
	Default  string            `toml:"default"`
	Prefix   string            `toml:"prefix"`
	Options  []Option          `toml:"options"`
	Targets  map[string]Target `toml:"targets"`
	Releases []Release         `toml:"release"`
	// Headers that may differ between the universal2 slices, e.g.
	// "include/openssl/configuration.h" when an option applies to one
	// architecture only.
	Universal2Dispatch []string `toml:"universal2_dispatch"`
}

// Load reads a recipe by path; a bare name such as "openssl" or
// "openssl.toml" that is not an existing file refers to an embedded recipe.
func Load(nameOrPath string) (*Recipe, error) {
	if nameOrPath == "" {
		nameOrPath = recipes.Default
	}
	if b, err := os.ReadFile(nameOrPath); err == nil {
		return Parse(nameOrPath, b)
	} else if strings.ContainsRune(nameOrPath, os.PathSeparator) {
		return nil, fmt.Errorf("recipe %s: %w", nameOrPath, err)
	}
	name := nameOrPath
	if !strings.HasSuffix(name, ".toml") {
		name += ".toml"
	}
	b, err := fs.ReadFile(recipes.FS, name)
	if err != nil {
		return nil, fmt.Errorf("recipe %q: neither a file nor one of the embedded recipes (%s): %w", nameOrPath, strings.Join(Embedded(), ", "), ErrUnknown)
	}
	return Parse("recipes/"+name, b)
}

// Embedded lists the recipes built into osslbuild.
func Embedded() []string {
	ents, _ := fs.ReadDir(recipes.FS, ".")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".toml"))
	}
	return out
}

var (
	hex64      = regexp.MustCompile(`^[0-9a-f]{64}$`)
	fpr40      = regexp.MustCompile(`^[0-9A-F]{40}$`)
	versionRe  = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+[a-z]?$`)
	minOSRe    = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
	targetName = regexp.MustCompile(`^[a-z0-9_-]+$`)
)

// Parse decodes and validates recipe bytes; path names the file in errors.
func Parse(path string, data []byte) (*Recipe, error) {
	var s fileSchema
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&s)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("recipe %s:%d: %s: %w", path, pe.Position.Line, pe.Message, ErrInvalid)
		}
		return nil, fmt.Errorf("recipe %s: %v: %w", path, err, ErrInvalid)
	}
	if und := md.Undecoded(); len(und) > 0 {
		var keys []string
		for _, k := range und {
			keys = append(keys, k.String())
		}
		return nil, fmt.Errorf("recipe %s: unknown field %s: %w", path, strings.Join(keys, ", "), ErrInvalid)
	}
	sum := sha256.Sum256(data)
	r := &Recipe{
		Name:     strings.TrimSuffix(filepath.Base(path), ".toml"),
		Path:     path,
		SHA256:   hex.EncodeToString(sum[:]),
		Default:  s.Default,
		Prefix:   s.Prefix,
		Options:  s.Options,
		Targets:  map[string]Target{},
		Releases: s.Releases,

		Universal2Dispatch: s.Universal2Dispatch,
	}
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("recipe %s: %s: %s", path, field, fmt.Sprintf(format, args...)))
	}
	for i, h := range r.Universal2Dispatch {
		if !strings.HasPrefix(h, "include/") || !strings.HasSuffix(h, ".h") || filepath.ToSlash(filepath.Clean(h)) != h || strings.Contains(h, "..") {
			bad(fmt.Sprintf("universal2_dispatch[%d]", i), "want a public header path such as include/openssl/configuration.h, got %q", h)
		}
	}
	if !strings.HasPrefix(r.Prefix, "/") || filepath.Clean(r.Prefix) != r.Prefix {
		bad("prefix", "want a clean absolute path, got %q", r.Prefix)
	}
	parseOptions := func(field string, opts []Option) {
		for i := range opts {
			o := &opts[i]
			f := fmt.Sprintf("%s[%d]", field, i)
			if err := CheckOption(o.Name); err != nil {
				bad(f+".name", "%v", err)
			}
			if o.Versions != "" {
				c, err := ParseConstraint(o.Versions)
				if err != nil {
					bad(f+".versions", "%v", err)
				}
				o.when = c
			}
		}
	}
	parseOptions("options", r.Options)
	if len(s.Targets) == 0 {
		bad("targets", "no targets defined")
	}
	for name, t := range s.Targets {
		f := "targets." + name
		t.Name = name
		if !targetName.MatchString(name) {
			bad(f, "target names are lower-case letters, digits, _ and -")
		}
		if t.Configure == "" {
			bad(f+".configure", "missing (an OpenSSL Configure target such as darwin64-arm64-cc)")
		}
		checkPlatform(f, t.Slice, bad)
		for i, fl := range t.Flags {
			if !strings.HasPrefix(fl, "-") || strings.ContainsAny(fl, " \t\n") {
				bad(fmt.Sprintf("%s.flags[%d]", f, i), "want one compiler flag, got %q", fl)
			}
			if strings.HasPrefix(fl, "-O") {
				bad(fmt.Sprintf("%s.flags[%d]", f, i), "optimisation is OpenSSL's own -O3; a recipe must not override it (got %q)", fl)
			}
		}
		if !strings.HasPrefix(t.OpenSSLDir, "/") {
			bad(f+".openssldir", "want an absolute path, got %q", t.OpenSSLDir)
		}
		if !targetName.MatchString(t.Artifact) {
			bad(f+".artifact", "want a file-name-safe artifact name, got %q", t.Artifact)
		}
		parseOptions(f+".options", t.Options)
		r.Targets[name] = t
	}
	seen := map[string]bool{}
	for i, rel := range r.Releases {
		f := fmt.Sprintf("release[%d]", i)
		if !versionRe.MatchString(rel.Version) {
			bad(f+".version", "want X.Y.Z, got %q", rel.Version)
		} else {
			f = fmt.Sprintf("release %s", rel.Version)
		}
		if seen[rel.Version] {
			bad(f, "duplicate release")
		}
		seen[rel.Version] = true
		if !hex64.MatchString(rel.SHA256) {
			bad(f+".sha256", "want 64 lower-case hex digits, got %q", rel.SHA256)
		}
		if rel.Size <= 0 {
			bad(f+".size", "want the tarball's size in bytes, got %d", rel.Size)
		}
		if len(rel.URLs) == 0 {
			bad(f+".urls", "at least one download URL is required")
		}
		for j, u := range rel.URLs {
			pu, err := url.Parse(u)
			if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
				bad(fmt.Sprintf("%s.urls[%d]", f, j), "want an http(s) URL, got %q", u)
			} else if !strings.HasSuffix(pu.Path, "/"+rel.FileName()) {
				bad(fmt.Sprintf("%s.urls[%d]", f, j), "want a URL ending in /%s, got %q", rel.FileName(), u)
			}
		}
		switch rel.Signature {
		case "", "required", "optional":
		default:
			bad(f+".signature", "want required or optional, got %q", rel.Signature)
		}
		if len(rel.Signers) == 0 && rel.SignatureRequired() {
			bad(f+".signers", "a required signature needs at least one pinned key fingerprint")
		}
		for j, k := range rel.Signers {
			if !fpr40.MatchString(k) {
				bad(fmt.Sprintf("%s.signers[%d]", f, j), "want a 40-digit upper-case key fingerprint, got %q", k)
			}
		}
	}
	if len(r.Releases) == 0 {
		bad("release", "no releases defined")
	} else if !seen[r.Default] {
		bad("default", "%q is not one of the releases", r.Default)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", errors.Join(errs...), ErrInvalid)
	}
	return r, nil
}

// Release returns the release with the given version ("" = default).
func (r *Recipe) Release(v string) (Release, error) {
	if v == "" {
		v = r.Default
	}
	for _, rel := range r.Releases {
		if rel.Version == v {
			return rel, nil
		}
	}
	return Release{}, fmt.Errorf("recipe %s: release %s: %w (have %s)", r.Path, v, ErrUnknown, strings.Join(r.Versions(), ", "))
}

// Versions lists the releases, newest first.
func (r *Recipe) Versions() []string {
	var vs []*version.Version
	for _, rel := range r.Releases {
		vs = append(vs, version.Must(version.NewVersion(rel.Version)))
	}
	sort.Sort(sort.Reverse(version.Collection(vs)))
	var out []string
	for _, v := range vs {
		out = append(out, v.Original())
	}
	return out
}

// Target returns the named target.
func (r *Recipe) Target(name string) (Target, error) {
	t, ok := r.Targets[name]
	if !ok {
		var names []string
		for n := range r.Targets {
			names = append(names, n)
		}
		sort.Strings(names)
		return Target{}, fmt.Errorf("recipe %s: target %s: %w (have %s)", r.Path, name, ErrUnknown, strings.Join(names, ", "))
	}
	return t, nil
}

// Universal2 names the targets a universal2 artifact merges: every target
// whose platform merges into universal2, sorted by name. It needs exactly two, of different architectures.
func (r *Recipe) Universal2() ([]string, error) {
	var names []string
	for n, t := range r.Targets {
		if p, err := platform.Lookup(t.Slice); err == nil && p.Universal == "universal2" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) != 2 || r.Targets[names[0]].Arch == r.Targets[names[1]].Arch {
		return nil, fmt.Errorf("recipe %s: universal2 needs two macOS targets of different architectures, have %q", r.Path, names)
	}
	return names, nil
}

// checkPlatform holds a target to its row of the platform table: the row
// must exist, and where the platform states a deployment target the flags
// must state min_os with it (the flag sets minos in every object; the
// validator checks min_os, so disagreeing values would fail every build).
func checkPlatform(f string, s platform.Slice, bad func(field, format string, args ...any)) {
	if !slices.Contains(platform.OSes(), s.OS) {
		bad(f+".os", "want %s, got %q", strings.Join(platform.OSes(), " or "), s.OS)
		return
	}
	p, err := platform.Lookup(s)
	if err != nil {
		bad(f+".arch", "want %s, got %q", strings.Join(platform.Archs(s.OS), " or "), s.Arch)
		return
	}
	switch {
	case p.MinOSFlag == "" && s.MinOS != "":
		bad(f+".min_os", "only meaningful where the platform has a deployment target, and %s %s has none", p.Name, p.Arch)
	case p.MinOSFlag == "":
	case !minOSRe.MatchString(s.MinOS):
		bad(f+".min_os", "want a %s version such as 11.0, got %q", p.Name, s.MinOS)
	case !slices.Contains(s.Flags, p.MinOSFlag+s.MinOS):
		bad(f+".flags", "must contain %s to match min_os", p.MinOSFlag+s.MinOS)
	}
}
