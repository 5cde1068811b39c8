package artifact

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// ErrMismatch is matched (errors.Is) by every error saying that an
// artifact's files are not the ones its manifest lists: a file missing,
// added, changed, or something that is not a regular file.
var ErrMismatch = errors.New("artifact files do not match its manifest")

// MaxManifestSize bounds a manifest.json read into memory. Real ones are a
// few KiB plus one line per file.
const MaxManifestSize = 4 << 20

// Problem kinds, in FileProblem.Kind.
const (
	FileMissing    = "missing"     // listed in the manifest, absent
	FileExtra      = "not listed"  // present, not in the manifest
	FileChanged    = "changed"     // present, other sha256
	FileNotRegular = "not regular" // a symlink, directory-less special file, ...: never opened
)

// FileProblem is one file of an artifact that differs from its manifest.
type FileProblem struct {
	Path string // slash-separated, relative to the artifact root
	Kind string // FileMissing, FileExtra, FileChanged or FileNotRegular
	Want string // sha256 the manifest records; "" when it lists none
	Got  string // sha256 of the file; "" when absent or not a regular file
	Type string // for FileNotRegular: what it is ("symlink to /etc/hostname", "named pipe (FIFO)")
}

func (p FileProblem) String() string {
	want, got := cmp.Or(p.Want, "none"), cmp.Or(p.Got, "none")
	switch p.Kind {
	case FileMissing:
		return fmt.Sprintf("%s: missing: the manifest lists sha256 %s, no such file", p.Path, want)
	case FileExtra:
		return fmt.Sprintf("%s: not listed in the manifest (sha256 %s)", p.Path, got)
	case FileChanged:
		return fmt.Sprintf("%s: changed: the manifest lists sha256 %s, the file has %s", p.Path, want, got)
	}
	listed := "not listed in the manifest"
	if p.Want != "" {
		listed = "the manifest lists sha256 " + p.Want
	}
	return fmt.Sprintf("%s: %s, expected a regular file (%s): not opened", p.Path, p.Type, listed)
}

// VerifyError lists every file of one artifact that differs from its
// manifest. errors.Is(err, ErrMismatch) holds.
type VerifyError struct {
	Dir      string // the artifact, as named by the caller
	Problems []FileProblem
}

func (e *VerifyError) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("verify %s: %s", e.Dir, e.Problems[0])
	}
	return validate.CappedList(fmt.Sprintf("verify %s: %d files differ from %s:", e.Dir, len(e.Problems), ManifestName), e.Problems)
}

// Is makes errors.Is(err, ErrMismatch) hold.
func (e *VerifyError) Is(target error) bool { return target == ErrMismatch }

// Entry is one thing found in an artifact: a regular file and its sha256,
// or something else, described in Type.
type Entry struct {
	SHA256 string // "" when not a regular file
	Type   string // "" for a regular file, else what it is
}

// CompareFiles holds the entries found in an artifact (keyed by
// slash-separated path relative to its root, the manifest itself left out)
// against the digests its manifest lists, and returns every difference,
// sorted by path. It opens nothing: callers that stream a tarball hash as
// they go and compare at the end.
func CompareFiles(listed map[string]string, found map[string]Entry) []FileProblem {
	var out []FileProblem
	for p, e := range found {
		want, ok := listed[p]
		switch {
		case e.Type != "":
			out = append(out, FileProblem{Path: p, Kind: FileNotRegular, Want: want, Type: e.Type})
		case !ok:
			out = append(out, FileProblem{Path: p, Kind: FileExtra, Got: e.SHA256})
		case want != e.SHA256:
			out = append(out, FileProblem{Path: p, Kind: FileChanged, Want: want, Got: e.SHA256})
		}
	}
	for p, want := range listed {
		if _, ok := found[p]; !ok {
			out = append(out, FileProblem{Path: p, Kind: FileMissing, Want: want})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Verify checks that the artifact directory dir holds exactly the files its
// manifest.json lists, each with the listed sha256, and returns the
// manifest. A missing, extra or changed file is refused with a
// *VerifyError naming every such file and both digests. It never follows a
// symbolic link and never opens anything but a regular file: a link, FIFO,
// socket or device inside the artifact is itself a mismatch (osslbuild
// writes none), so a link to a host file or to /dev/zero cannot smuggle
// content in or hang the check.
func Verify(ctx context.Context, dir string) (*Manifest, error) {
	m, _, err := readManifestFile(ctx, dir, ManifestName)
	if err != nil {
		return nil, err
	}
	found, err := Entries(ctx, dir)
	if err != nil {
		return nil, err
	}
	return m, holdFiles(dir, m, found)
}

// LoadManifest reads dir's manifest.json as Verify does (a regular file
// of at most MaxManifestSize, osslbuild's schema) and holds its records
// to each other (VerifyManifest), without hashing the files it lists: for
// a tree this process verified or wrote itself a moment ago.
func LoadManifest(ctx context.Context, dir string) (*Manifest, error) {
	return LoadManifestFile(ctx, filepath.Join(dir, ManifestName))
}

// LoadManifestFile is LoadManifest for a manifest file named by itself,
// away from the files it lists (diff given a manifest.json alone).
func LoadManifestFile(ctx context.Context, path string) (*Manifest, error) {
	dir, name := filepath.Dir(path), filepath.Base(path)
	m, _, err := readManifestFile(ctx, dir, name)
	if err != nil {
		return nil, err
	}
	if ps := VerifyManifest(m); len(ps) > 0 {
		return nil, fmt.Errorf("verify %s: %s: %s: %w", dir, name, strings.Join(ps, "; "), ErrMismatch)
	}
	return m, nil
}

// readManifestFile reads and parses the manifest dir/name, refusing one
// that is not a regular file, too large, or not osslbuild's schema; it
// returns the bytes read too.
func readManifestFile(ctx context.Context, dir, name string) (*Manifest, []byte, error) {
	mb, err := ctxio.ReadFile(ctx, filepath.Join(dir, name), false, MaxManifestSize)
	if err != nil {
		return nil, nil, fmt.Errorf("verify %s: %w", dir, err)
	}
	m, err := ParseManifest(mb)
	if err != nil {
		return nil, nil, fmt.Errorf("verify %s: %s: %w", dir, name, err)
	}
	if m.Schema != Schema {
		return nil, nil, fmt.Errorf("verify %s: %s: schema %q, expected %q", dir, name, m.Schema, Schema)
	}
	return m, mb, nil
}

// holdFiles refuses a tree whose entries (found, manifest.json among them
// or not) are not exactly the files m lists, or whose records disagree.
func holdFiles(dir string, m *Manifest, found map[string]Entry) error {
	delete(found, ManifestName)
	if ps := CompareFiles(m.Files, found); len(ps) > 0 {
		return &VerifyError{Dir: dir, Problems: ps}
	}
	if ps := VerifyManifest(m); len(ps) > 0 {
		return fmt.Errorf("verify %s: %s: %s: %w", dir, ManifestName, strings.Join(ps, "; "), ErrMismatch)
	}
	return nil
}

// Entries walks dir without following links and returns every entry that
// is not a directory: regular files with their sha256, anything else with
// its type and no digest (it is never opened).
func Entries(ctx context.Context, dir string) (map[string]Entry, error) {
	nodes, err := tarOrder(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", dir, err)
	}
	out := map[string]Entry{}
	for _, n := range nodes {
		p := filepath.Join(dir, filepath.FromSlash(n.rel))
		switch {
		case n.typ.IsDir():
		case !n.typ.IsRegular():
			out[n.rel] = Entry{Type: ctxio.Describe(p, n.typ)}
		default:
			sum, err := ctxio.SHA256(ctx, p, false)
			if err != nil {
				return nil, fmt.Errorf("verify %s: %w", dir, err)
			}
			out[n.rel] = Entry{SHA256: sum}
		}
	}
	return out, nil
}
