// Package recipe loads osslbuild's declarative recipes (TOML, see
// recipes/openssl.toml), validates them strictly, and resolves a Plan for one
// release and one target: the single description of what a build must do and
// what its result must be.
package recipe

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/osslver"
	"github.com/osslbuild/osslbuild/internal/osslver/constraint"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/source/release"
	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/keys"
	"github.com/osslbuild/osslbuild/recipes"
)

// ErrInvalid marks a recipe that does not satisfy the schema.
var ErrInvalid = errors.New("invalid recipe")

// Where a recipe came from, as its manifest records it.
const (
	OriginEmbedded = "embedded" // built into osslbuild (recipes/)
	OriginFile     = "file"     // a file the user named (-recipe=FILE)
)

// ErrUnknown marks a request for a release or target the recipe lacks.
var ErrUnknown = errors.New("not in recipe")

// Recipe is a parsed, validated recipe file.
type Recipe struct {
	Name    string // file name without extension, e.g. "openssl"
	Path    string // where it was read from (embedded: "recipes/<file>")
	Origin  string // OriginEmbedded or OriginFile
	SHA256  string // digest of the file's bytes, recorded in manifests
	Bytes   []byte // the file's bytes (a manifest holds a file recipe's)
	Schema  int    // the file's schema version (Schema)
	Default string
	Prefix  string
	// Shared is what every target makes of shared libraries (libraries,
	// install_name); nil when the recipe builds static libraries only.
	Shared   *platform.Shared
	Options  []Option
	Targets  map[string]Target
	Releases []Release
	// Keys are the recipe's release_keys, read and checked to hold the
	// fingerprint written beside each: used with osslbuild's keys/ to
	// verify every release, listed or not.
	Keys []signature.Key
	// Universal2Dispatch are the public headers allowed to differ between
	// the universal2 slices (merged with a per-architecture dispatch);
	// any other difference refuses the merge.
	Universal2Dispatch []string
	lines              lines // where the file writes each key
}

// Option is one Configure option, optionally limited to some releases.
type Option struct {
	Name     string                `toml:"name"`
	Versions string                `toml:"versions"`
	when     constraint.Constraint // parsed Versions; the zero value matches every release
	field    string                // where the recipe writes Versions: "targets.x.options[0].versions"
}

// Target is one build target as the recipe writes it: the slice it builds
// (its options not yet resolved for a release) and its own extra options,
// which a release's Plan resolves into the Slice's.
type Target struct {
	platform.Slice
	Options []Option `toml:"options"` // extra Configure options for this target only
	// flagKeys are the key paths of Flags in the recipe file
	// ("targets.arm64.flags[1]"; "" for a flag osslbuild derived), so a
	// refusal after the sources are read can name the recipe's line.
	flagKeys []string
}

// Release is one pinned upstream OpenSSL release, defined below the
// recipe (internal/source/release) so that the sources need not import it.
type Release = release.Release

// ReleaseKey is an OpenSSL release key a recipe pins beside osslbuild's
// keys/: a file of the consumer's, by its path relative to the recipe,
// and the full fingerprint of its primary key, so that a file swapped for
// another key's is refused.
type ReleaseKey struct {
	Path        string `toml:"path"`
	Fingerprint string `toml:"fingerprint"`
}

// Schema is the recipe format this osslbuild reads and writes. A recipe
// states it with `schema = 1`; a recipe without the key was written before
// the key existed and is read as schema 1. A later osslbuild that changes
// the format keeps reading every schema it has published.
const Schema = 1

// MaxSize bounds a recipe file: the embedded one is 4 KB, and a path that
// names something endless (a device) must not be read to the end.
const MaxSize = 1 << 20

type fileSchema struct {
	Schema  *int     `toml:"schema"`
	Default string   `toml:"default"`
	Prefix  string   `toml:"prefix"`
	Options []Option `toml:"options"`
	// Libraries are what the artifacts hold: "static" (the default),
	// "shared", or both; InstallName the dylibs' install name, "@rpath"
	// (the default) or "prefix".
	Libraries   []string          `toml:"libraries"`
	InstallName string            `toml:"install_name"`
	Targets     map[string]Target `toml:"targets"`
	Releases    []Release         `toml:"release"`
	// ReleaseKeys are OpenSSL release keys kept beside the recipe.
	ReleaseKeys []ReleaseKey `toml:"release_keys"`
	// Headers that may differ between the universal2 slices, e.g.
	// "include/openssl/configuration.h" when an option applies to one
	// architecture only.
	Universal2Dispatch []string `toml:"universal2_dispatch"`
}

// LoadOptions are what a Go caller may relax; no flag, variable or recipe
// key reaches them.
type LoadOptions struct {
	// Unsigned accepts `signature = "optional"` on a release: only for
	// tests that build synthetic trees nobody signs. A recipe a user gives
	// can never waive the signature.
	Unsigned bool
}

// Load reads a recipe by path; a bare name such as "openssl" or
// "openssl.toml" that is not an existing file refers to an embedded recipe.
func Load(nameOrPath string) (*Recipe, error) { return LoadWith(nameOrPath, LoadOptions{}) }

// LoadWith is Load with options.
func LoadWith(nameOrPath string, o LoadOptions) (*Recipe, error) {
	nameOrPath = cmp.Or(nameOrPath, recipes.Default)
	b, err := ReadFile(nameOrPath)
	switch {
	case err == nil:
		return parse(nameOrPath, OriginFile, b, o, keysBeside(nameOrPath))
	case !errors.Is(err, fs.ErrNotExist) || strings.ContainsRune(nameOrPath, os.PathSeparator) || strings.ContainsRune(nameOrPath, '/'):
		return nil, err
	}
	name := nameOrPath
	if !strings.HasSuffix(name, ".toml") {
		name += ".toml"
	}
	b, err = fs.ReadFile(recipes.FS, name)
	if err != nil {
		return nil, fmt.Errorf("recipe %q: neither a file nor one of the embedded recipes (%s): %w", nameOrPath, strings.Join(Embedded(), ", "), ErrUnknown)
	}
	return parse("recipes/"+name, OriginEmbedded, b, o, noKeys)
}

// ReadFile reads a recipe file a user named: a regular file (or a link to
// one) of at most MaxSize bytes. A directory, a FIFO or a device is
// refused by name before it is opened, and again from the open file, so a
// FIFO swapped in meanwhile is not read either (it is opened
// non-blocking).
func ReadFile(path string) ([]byte, error) { return readRegular("recipe", path, MaxSize) }

// MaxKeySize bounds a release key file: OpenSSL's are a few KB.
const MaxKeySize = 1 << 20

// readRegular is ReadFile for a file of kind (errors name it so) of at most
// max bytes.
func readRegular(kind, path string, max int64) ([]byte, error) {
	want, short := "a regular TOML file", "a recipe is a short TOML file"
	if kind != "recipe" {
		want, short = "a regular file (an armored OpenPGP public key)", "an OpenPGP key file is a few KB"
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", kind, path, err)
	}
	var what string
	switch m := fi.Mode(); {
	case m.IsRegular():
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	default:
		what = "not a regular file"
	}
	if what != "" {
		return nil, fmt.Errorf("%s %s: %s; want %s: %w", kind, path, what, want, ErrInvalid)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s %s: larger than %d bytes; %s: %w", kind, path, max, short, ErrInvalid)
	}
	// Again from the open file, opened without waiting: a FIFO swapped
	// in since the stat is refused, not waited on (as is a file grown
	// past max).
	b, err := ctxio.ReadFile(context.Background(), path, true, max)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", kind, path, err)
	}
	return b, nil
}

// keysBeside reads the release keys of the recipe file at path, by their
// paths relative to it.
func keysBeside(path string) func(string) ([]byte, error) {
	return func(rel string) ([]byte, error) {
		return readRegular("release key", filepath.Join(filepath.Dir(path), filepath.FromSlash(rel)), MaxKeySize)
	}
}

// noKeys is an embedded recipe's key reader: nothing lies beside it.
func noKeys(string) ([]byte, error) {
	return nil, errors.New("an embedded recipe has no files beside it: osslbuild's own keys are in keys/")
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
	targetName = regexp.MustCompile(`^[a-z0-9_-]+$`)
	// configureRe is a Configure target name: never an option or a path.
	configureRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)
	// dirRe is an install path osslbuild passes to Configure and that
	// OpenSSL embeds in C strings and the Makefile: no spaces, quotes,
	// "$" (make would expand it), "%" or "\\".
	dirRe = regexp.MustCompile(`^/[A-Za-z0-9._/@+-]*$`)
	// keyPathRe is a release key file's path relative to the recipe.
	keyPathRe = regexp.MustCompile(`^[A-Za-z0-9._@+-][A-Za-z0-9._/@+-]*$`)
	// headerRe is a public header of the installed tree.
	headerRe = regexp.MustCompile(`^include/[A-Za-z0-9_/.-]+\.h$`)
)

// Parse decodes and validates recipe bytes; path names the file in errors,
// and its release keys are read relative to it. A release cannot waive
// its signature (see LoadOptions).
func Parse(path string, data []byte) (*Recipe, error) {
	return parse(path, "", data, LoadOptions{}, keysBeside(path))
}

// checker collects a recipe's refusals, each placed at file:line.
type checker struct {
	path  string
	lines lines
	errs  []error
}

// bad refuses the value at key path loc; field is how the message names
// it (loc, or a friendlier "release 4.0.2.sha256").
func (c *checker) bad(loc, field, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("recipe %s: %s: %s", c.lines.where(c.path, loc), field, fmt.Sprintf(format, args...)))
}

// utf8BOM is the byte-order mark some Windows editors put first in a
// UTF-8 file; TOML does not allow it.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func parse(path, origin string, data []byte, o LoadOptions, readKey func(string) ([]byte, error)) (*Recipe, error) {
	// Refused rather than skipped: the recipe's digest in every manifest is
	// of the file's bytes, and a decoder error would not say what is wrong.
	if bytes.HasPrefix(data, utf8BOM) {
		return nil, fmt.Errorf("recipe %s:1: the file starts with a UTF-8 byte-order mark (BOM, the bytes EF BB BF), which TOML does not allow: save it as UTF-8 without a BOM: %w", path, ErrInvalid)
	}
	var s fileSchema
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, decodeError(path, err)
	}
	c := &checker{path: path, lines: locate(data)}
	bad := c.bad
	schema := Schema
	if s.Schema != nil {
		schema = *s.Schema
	}
	if schema != Schema {
		bad("schema", "schema", "this osslbuild reads recipe schema %d, not %d (written for another osslbuild?)", Schema, schema)
		return nil, fmt.Errorf("%w: %w", errors.Join(c.errs...), ErrInvalid)
	}
	sum := sha256.Sum256(data)
	r := &Recipe{
		Name:     strings.TrimSuffix(filepath.Base(path), ".toml"),
		Path:     path,
		Origin:   origin,
		SHA256:   hex.EncodeToString(sum[:]),
		Bytes:    data,
		Schema:   schema,
		Default:  s.Default,
		Prefix:   s.Prefix,
		Options:  s.Options,
		Targets:  map[string]Target{},
		Releases: s.Releases,
		lines:    c.lines,

		Universal2Dispatch: s.Universal2Dispatch,
	}
	for i, h := range r.Universal2Dispatch {
		if !headerRe.MatchString(h) || filepath.ToSlash(filepath.Clean(h)) != h || strings.Contains(h, "..") {
			f := fmt.Sprintf("universal2_dispatch[%d]", i)
			bad(f, f, "want a public header path such as include/openssl/configuration.h, got %q", h)
		}
	}
	if !dirRe.MatchString(r.Prefix) || filepath.Clean(r.Prefix) != r.Prefix {
		bad("prefix", "prefix", "want a clean absolute path of letters, digits and ._/@+-, got %q", r.Prefix)
	}
	r.Shared = checkLibraries(c, s.Libraries, s.InstallName)
	parseOptions := func(field string, opts []Option) {
		for i := range opts {
			o := &opts[i]
			f := fmt.Sprintf("%s[%d]", field, i)
			if err := CheckOption(o.Name); err != nil {
				bad(f+".name", f+".name", "%v", err)
			} else if unknown, from := unknownFeatures("", []string{o.Name}); len(unknown) > 0 {
				bad(f+".name", f+".name", "option %q: no feature of the Configure of %s (the releases osslbuild has read; docs/recipes.md lists their features): %v", o.Name, from, ErrOption)
			}
			if o.Versions != "" {
				c, err := constraint.Parse(o.Versions)
				if err != nil {
					bad(f+".versions", f+".versions", "bad %v", err)
				}
				o.when, o.field = c, f+".versions"
			}
		}
	}
	parseOptions("options", r.Options)
	if len(s.Targets) == 0 {
		bad("targets", "targets", "no targets defined")
	}
	for _, name := range slices.Sorted(maps.Keys(s.Targets)) {
		t := s.Targets[name]
		f := "targets." + name
		t.Name = name
		if !targetName.MatchString(name) {
			bad(f, f, "target names are lower-case letters, digits, _ and -")
		}
		if !configureRe.MatchString(t.Configure) {
			bad(f+".configure", f+".configure", "want an OpenSSL Configure target such as darwin64-arm64-cc, got %q", t.Configure)
		}
		given := len(t.Flags)
		t.Flags = checkPlatform(c, f, t.Slice)
		t.flagKeys = make([]string, len(t.Flags)) // a derived flag comes first, and has none
		for i := range given {
			t.flagKeys[len(t.Flags)-given+i] = fmt.Sprintf("%s.flags[%d]", f, i)
		}
		if !dirRe.MatchString(t.OpenSSLDir) || filepath.Clean(t.OpenSSLDir) != t.OpenSSLDir {
			bad(f+".openssldir", f+".openssldir", "want a clean absolute path of letters, digits and ._/@+-, got %q", t.OpenSSLDir)
		}
		if !targetName.MatchString(t.Artifact) {
			bad(f+".artifact", f+".artifact", "want a plain artifact name (lower-case letters, digits, _ and -), got %q", t.Artifact)
		}
		parseOptions(f+".options", t.Options)
		r.Targets[name] = t
	}
	r.Keys = checkKeys(c, s.ReleaseKeys, readKey)
	pinned := keys.Fingerprints()
	var own []string
	for _, k := range r.Keys {
		own = append(own, k.Fingerprint)
	}
	seen := map[string]bool{}
	for i, rel := range r.Releases {
		loc := fmt.Sprintf("release[%d]", i)
		f := loc
		if _, err := osslver.ParseRelease(rel.Version); err != nil {
			bad(loc+".version", f+".version", "want X.Y.Z, got %q", rel.Version)
		} else {
			f = fmt.Sprintf("release %s", rel.Version)
		}
		if seen[rel.Version] {
			bad(loc, f, "duplicate release")
		}
		seen[rel.Version] = true
		if !hex64.MatchString(rel.SHA256) {
			bad(loc+".sha256", f+".sha256", "want 64 lower-case hex digits, got %q", rel.SHA256)
		}
		if rel.Size <= 0 {
			bad(loc+".size", f+".size", "want the tarball's size in bytes, got %d", rel.Size)
		}
		if len(rel.URLs) == 0 {
			bad(loc+".urls", f+".urls", "at least one download URL is required")
		}
		for j, u := range rel.URLs {
			pu, err := url.Parse(u)
			l, ff := fmt.Sprintf("%s.urls[%d]", loc, j), fmt.Sprintf("%s.urls[%d]", f, j)
			if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
				bad(l, ff, "want an http(s) URL, got %q", u)
			} else if !strings.HasSuffix(pu.Path, "/"+rel.FileName()) {
				bad(l, ff, "want a URL ending in /%s, got %q", rel.FileName(), u)
			}
		}
		switch rel.Signature {
		case "", "required":
		case "optional":
			if !o.Unsigned {
				bad(loc+".signature", f+".signature", "a recipe cannot waive the signature: every release is verified against a key pinned in keys/ (remove the key)")
			}
		default:
			bad(loc+".signature", f+".signature", "want required, got %q", rel.Signature)
		}
		if len(rel.Signers) == 0 && rel.SignatureRequired() {
			bad(loc+".signers", f+".signers", "a required signature needs at least one pinned key fingerprint (%s)", strings.Join(append(slices.Clone(pinned), own...), ", "))
		}
		for j, k := range rel.Signers {
			l, ff := fmt.Sprintf("%s.signers[%d]", loc, j), fmt.Sprintf("%s.signers[%d]", f, j)
			switch {
			case !fpr40.MatchString(k):
				bad(l, ff, "want a 40-digit upper-case key fingerprint, got %q", k)
			case !slices.Contains(pinned, k) && !slices.Contains(own, k):
				bad(l, ff, "key %s is not pinned in keys/ (pinned: %s) nor in the recipe's release_keys (%s); a new signing key comes in by a reviewed osslbuild commit or by the recipe's release_keys", k, strings.Join(pinned, ", "), orNone(own))
			}
		}
		r.Releases[i].Keys = r.Keys
	}
	// A recipe may list no release: a consumer that keeps its OpenSSL
	// version and sha256 elsewhere (pyca's openssl-version.sh) gives them
	// to every build (-version, -sha256), and the recipe holds its targets.
	switch {
	case len(r.Releases) == 0 && r.Default != "":
		bad("default", "default", "%q names a release, but the recipe lists none (remove default, or add the [[release]])", r.Default)
	case len(r.Releases) > 0 && !seen[r.Default]:
		bad("default", "default", "%q is not one of the releases", r.Default)
	}
	if len(c.errs) > 0 {
		return nil, fmt.Errorf("%w: %w", errors.Join(c.errs...), ErrInvalid)
	}
	return r, nil
}

// checkKeys reads the recipe's release_keys with readKey and holds each
// file to the fingerprint written beside it.
func checkKeys(c *checker, rks []ReleaseKey, readKey func(string) ([]byte, error)) []signature.Key {
	var out []signature.Key
	paths, fprs := map[string]bool{}, map[string]bool{}
	for i, rk := range rks {
		f := fmt.Sprintf("release_keys[%d]", i)
		refused := len(c.errs)
		if !keyPathRe.MatchString(rk.Path) || path.Clean(rk.Path) != rk.Path || !filepath.IsLocal(filepath.FromSlash(rk.Path)) {
			c.bad(f+".path", f+".path", "want a clean path relative to the recipe, inside its directory (such as keys/openssl-release.asc), got %q", rk.Path)
		} else if paths[rk.Path] {
			c.bad(f+".path", f+".path", "%s given twice", rk.Path)
		}
		paths[rk.Path] = true
		if !fpr40.MatchString(rk.Fingerprint) {
			c.bad(f+".fingerprint", f+".fingerprint", "want the primary key's full fingerprint, 40 upper-case hex digits without spaces, got %q", rk.Fingerprint)
		} else if fprs[rk.Fingerprint] {
			c.bad(f+".fingerprint", f+".fingerprint", "key %s given twice", rk.Fingerprint)
		}
		fprs[rk.Fingerprint] = true
		if len(c.errs) > refused {
			continue // a key whose path or fingerprint is refused is not read
		}
		b, err := readKey(rk.Path)
		if err != nil {
			c.bad(f+".path", f+".path", "%v", err)
			continue
		}
		if got, err := signature.PrimaryFingerprint(b); err == nil && got != rk.Fingerprint {
			c.bad(f+".fingerprint", f+".fingerprint", "the file %s holds the primary key %s, not %s: a swapped file or a wrong fingerprint (OpenSSL publishes its keys' fingerprints at %s)", rk.Path, got, rk.Fingerprint, signature.PublishedAt)
			continue
		}
		k, err := signature.NewKey(rk.Fingerprint, signature.OriginRecipe, rk.Path, b)
		if err != nil {
			c.bad(f+".path", f+".path", "%s: %v", rk.Path, err)
			continue
		}
		out = append(out, k)
	}
	return out
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// checkLibraries reads libraries and install_name: nil for static
// libraries only.
func checkLibraries(c *checker, libs []string, installName string) *platform.Shared {
	static, shared := len(libs) == 0, false
	seen := map[string]bool{}
	for i, l := range libs {
		f := fmt.Sprintf("libraries[%d]", i)
		switch {
		case seen[l]:
			c.bad(f, f, "%q given twice", l)
		case l == "static":
			static = true
		case l == "shared":
			shared = true
		default:
			c.bad(f, f, "want static or shared, got %q", l)
		}
		seen[l] = true
	}
	if libs != nil && len(libs) == 0 {
		c.bad("libraries", "libraries", "empty: want static, shared or both")
	}
	switch {
	case !shared && installName != "":
		c.bad("install_name", "install_name", "only meaningful with libraries = [\"shared\"]")
		return nil
	case !shared:
		return nil
	case installName == "":
		installName = "@rpath"
	case installName != "@rpath" && installName != "prefix":
		c.bad("install_name", "install_name", "want @rpath or prefix, got %q", installName)
	}
	return &platform.Shared{Static: static, InstallName: installName}
}

// decodeError places a decoding error at file:line: a syntax error, a
// value of the wrong type, or a key the schema does not have (each one
// named).
func decodeError(path string, err error) error {
	if strict, ok := errors.AsType[*toml.StrictMissingError](err); ok {
		var errs []error
		for _, e := range strict.Errors {
			row, _ := e.Position()
			errs = append(errs, fmt.Errorf("recipe %s:%d: unknown field %s (see docs/recipes.md)", path, row, strings.Join(e.Key(), ".")))
		}
		return fmt.Errorf("%w: %w", errors.Join(errs...), ErrInvalid)
	}
	if de, ok := errors.AsType[*toml.DecodeError](err); ok {
		row, _ := de.Position()
		msg := de.Error()
		if k := de.Key(); len(k) > 0 {
			msg = strings.Join(k, ".") + ": " + msg
		}
		return fmt.Errorf("recipe %s:%d: %s: %w", path, row, msg, ErrInvalid)
	}
	return fmt.Errorf("recipe %s: %v: %w", path, err, ErrInvalid)
}

// RecordedPath is where a manifest says the recipe came from: the embedded
// file's "recipes/<name>.toml", a relative path inside the directory the
// build ran in as given (the consumer's "ci/openssl.toml"), else only the
// file's name, so no machine's absolute paths reach an artifact (two
// checkouts of one repository build identical manifests).
func (r *Recipe) RecordedPath() string {
	if r.Origin == OriginEmbedded || filepath.IsLocal(r.Path) {
		return filepath.ToSlash(filepath.Clean(r.Path))
	}
	return filepath.Base(r.Path)
}

// Release returns the release with the given version ("" = default).
func (r *Recipe) Release(v string) (Release, error) {
	if v == "" {
		if r.Default == "" {
			return Release{}, fmt.Errorf("recipe %s lists no releases: give the release to build (-version=X.Y.Z, with -sha256): %w", r.Path, ErrUnknown)
		}
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
	var out []string
	for _, rel := range r.Releases {
		out = append(out, rel.Version)
	}
	slices.SortStableFunc(out, func(a, b string) int { return osslver.Compare(osslver.MustParse(b), osslver.MustParse(a)) })
	return out
}

// Target returns the named target.
func (r *Recipe) Target(name string) (Target, error) {
	t, ok := r.Targets[name]
	if !ok {
		return Target{}, fmt.Errorf("recipe %s: target %s: %w (have %s)", r.Path, name, ErrUnknown, strings.Join(slices.Sorted(maps.Keys(r.Targets)), ", "))
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
	slices.Sort(names)
	if len(names) != 2 || r.Targets[names[0]].Arch == r.Targets[names[1]].Arch {
		return nil, fmt.Errorf("recipe %s: universal2 needs two macOS targets of different architectures, have %q", r.Path, names)
	}
	return names, nil
}

// checkPlatform holds a target to its row of the platform table and
// checks its flags (CheckFlag), and returns the flags Configure gets.
// Where the platform states a deployment target, min_os says it and
// osslbuild derives the flag (the flag sets minos in every object, and the
// validator checks min_os): the flag comes first, as recipes wrote it
// before it was derived, so their Configure argv is unchanged. A recipe
// may still give the flag in flags, once and equal to min_os (schema-1
// recipes do); it then stays where the recipe put it.
func checkPlatform(c *checker, f string, s platform.Slice) []string {
	bad := func(k, format string, args ...any) { c.bad(f+k, f+k, format, args...) }
	if !slices.Contains(platform.OSes(), s.OS) {
		bad(".os", "want %s, got %q", strings.Join(platform.OSes(), " or "), s.OS)
		return s.Flags
	}
	p, err := platform.Lookup(s)
	if err != nil {
		bad(".arch", "want %s, got %q", strings.Join(platform.Archs(s.OS), " or "), s.Arch)
		return s.Flags
	}
	want := p.MinOSFlag + s.MinOS
	given := false
	cpu := map[string]int{}
	for i, fl := range s.Flags {
		ff := fmt.Sprintf(".flags[%d]", i)
		switch {
		case deploymentFlag(fl) && p.MinOSFlag == "":
			bad(ff, "%q sets a deployment target, and %s %s has none", fl, p.Name, p.Arch)
		case deploymentFlag(fl) && fl != want:
			bad(ff, "%q sets a deployment target other than min_os %q (osslbuild derives %s from min_os: remove the flag)", fl, s.MinOS, want)
		case deploymentFlag(fl) && given:
			bad(ff, "%q given twice (osslbuild derives it from min_os: the flag may be left out)", fl)
		case deploymentFlag(fl):
			given = true
		default:
			if err := CheckFlag(p, fl); err != nil {
				bad(ff, "%v", err)
				continue
			}
			// clang takes the last -march, validation reads the first.
			if name, _, ok := strings.Cut(fl, "="); ok && (name == "-march" || name == "-mcpu" || name == "-mtune") {
				if j, seen := cpu[name]; seen {
					bad(ff, "flag %q: a second %s (flags[%d] gives one): the compiler takes the last, validation holds the code to the first (%s): %v", fl, name, j, allowedFlags(p), ErrFlag)
				}
				cpu[name] = i
			}
		}
	}
	// The parser validation holds every object's deployment target to:
	// what it would refuse after the build is refused here, before.
	_, minOSErr := platform.ParseMinOS(s.MinOS)
	switch {
	case p.MinOSFlag == "" && s.MinOS != "":
		bad(".min_os", "only meaningful where the platform has a deployment target, and %s %s has none", p.Name, p.Arch)
	case p.MinOSFlag == "":
	case minOSErr != nil:
		bad(".min_os", "want a %s version such as 11.0: %v", p.Name, minOSErr)
	case !given:
		return append([]string{want}, s.Flags...)
	}
	return s.Flags
}
