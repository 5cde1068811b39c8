package check

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/report"
)

// ErrFailed is matched (errors.Is) by Run's error when the input was
// inspected and broke a rule; other errors mean it could not be checked.
var ErrFailed = errors.New("check failed")

// DefaultMinOpt is the optimisation required when Options.MinOpt is empty.
const DefaultMinOpt = inspect.O2

// Options say what to check and how to report it.
type Options struct {
	Path   string   // file or directory
	MinOpt string   // minimum optimisation: "2", "3", "-O3", "s", "fast"; "" means -O2
	Archs  []string // architectures every binary must have, e.g. arm64, x86_64
	JSON   bool     // print the Result as JSON instead of a table

	Stdout io.Writer      // nil: os.Stdout
	Stderr io.Writer      // nil: os.Stderr (annotations go here in JSON mode)
	Env    report.Env     // nil: os.Getenv (GITHUB_ACTIONS, GITHUB_STEP_SUMMARY)
	Limits inspect.Limits // decompression bounds for wheels and tarballs
	// TempDir receives one spooled archive member at a time; "" means
	// os.TempDir().
	TempDir string
}

// FromFlags maps the mage target's optional flags onto Options:
// -minopt=3, -arch=arm64,x86_64, -json.
func FromFlags(path string, minOpt *int, arch *string, asJSON *bool) Options {
	o := Options{Path: path}
	if minOpt != nil {
		o.MinOpt = strconv.Itoa(*minOpt)
	}
	if arch != nil {
		for _, a := range strings.Split(*arch, ",") {
			if a = strings.TrimSpace(a); a != "" {
				o.Archs = append(o.Archs, a)
			}
		}
	}
	if asJSON != nil {
		o.JSON = *asJSON
	}
	return o
}

// Run checks o.Path, prints the result (table or JSON; annotations and the
// step summary under GitHub Actions) and returns an error wrapping
// ErrFailed when any rule is broken.
func Run(ctx context.Context, o Options) error {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	res, err := Check(ctx, o)
	if err != nil {
		return err
	}
	if o.JSON {
		err = report.JSON(o.Stdout, res)
	} else {
		err = Text(o.Stdout, res)
	}
	if err != nil {
		return fmt.Errorf("check %s: write report: %w", o.Path, err)
	}
	if report.InActions(o.Env) {
		w := o.Stdout
		if o.JSON {
			w = o.Stderr // keep stdout one JSON document; the runner reads both
		}
		if err := Annotate(w, res); err != nil {
			return fmt.Errorf("check %s: annotations: %w", o.Path, err)
		}
	}
	if err := report.AppendSummary(o.Env, "osslbuild check "+o.Path, Rows(res)); err != nil {
		return fmt.Errorf("check %s: %w", o.Path, err)
	}
	if !res.OK {
		first := res.Failures[0]
		more := ""
		if n := len(res.Failures); n > 1 {
			more = fmt.Sprintf(" (and %d more)", n-1)
		}
		return fmt.Errorf("check %s: %w: %s%s", o.Path, ErrFailed, first, more)
	}
	return nil
}

// Check inspects o.Path and applies the rules; it prints nothing. The error
// is for bad options or an unreadable path; rule breaches are in Result.
func Check(ctx context.Context, o Options) (*Result, error) {
	min := DefaultMinOpt
	if o.MinOpt != "" {
		var err error
		if min, err = inspect.ParseOptLevel(o.MinOpt); err != nil {
			return nil, fmt.Errorf("check: -minopt: %w", err)
		}
	}
	if o.Path == "" {
		return nil, errors.New("check: no path given")
	}
	c := &checker{ctx: ctx, o: o, res: &Result{Schema: Schema, Path: o.Path, MinOpt: min.String(),
		Archs: o.Archs, Binaries: []Binary{}, Notes: []string{}, Failures: []string{}}}
	if c.res.Archs == nil {
		c.res.Archs = []string{}
	}
	if c.o.TempDir == "" {
		c.o.TempDir = os.TempDir()
	}
	fi, err := os.Stat(o.Path)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	if fi.IsDir() {
		err = c.walk(o.Path)
	} else {
		err = c.file(o.Path, true)
	}
	if err != nil {
		return nil, err // cancellation or an unreadable directory
	}
	c.assignArtifacts()
	evaluate(c.res, min)
	return c.res, nil
}

type checker struct {
	ctx   context.Context
	o     Options
	res   *Result
	roots []artifactRoot
}

// artifactRoot is an osslbuild artifact: a directory (container "") or a
// directory inside a tarball, and what its manifest promises.
type artifactRoot struct {
	container, dir string
	exp            *expect
}

type expect struct {
	name  string
	archs []string
	minos map[string]string // per arch
}

func (c *checker) walk(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if cerr := c.ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			return fmt.Errorf("check: %w", err)
		}
		if d.IsDir() {
			c.dirManifest(p)
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // symlinks are not followed; devices, sockets are no binaries
		}
		return c.file(p, false)
	})
}

// dirManifest records dir as an artifact when it holds osslbuild's manifest.
func (c *checker) dirManifest(dir string) {
	if _, err := os.Stat(filepath.Join(dir, artifact.ManifestName)); err != nil {
		return
	}
	m, err := artifact.ReadManifest(dir)
	if err != nil {
		c.fail(fmt.Sprintf("%s: %v", dir, err))
		return
	}
	c.addRoot("", dir, m)
}

func (c *checker) addRoot(container, dir string, m *artifact.Manifest) {
	if m.Schema != artifact.Schema {
		return // someone else's manifest.json
	}
	e := &expect{name: m.Name, minos: map[string]string{}}
	parts := m.Slices
	if len(parts) == 0 {
		parts = []*artifact.Manifest{m}
	}
	for _, s := range parts {
		if s == nil || s.Target.Arch == "" {
			continue
		}
		e.archs = append(e.archs, s.Target.Arch)
		e.minos[normArch(s.Target.Arch)] = s.Target.MinOS
	}
	if container == "" {
		dir = filepath.Clean(dir)
	} else {
		dir = path.Clean(dir)
	}
	c.roots = append(c.roots, artifactRoot{container: container, dir: dir, exp: e})
}

// assignArtifacts gives each binary the innermost artifact holding it. It
// runs after the walk: a tarball's manifest.json comes after its lib/.
func (c *checker) assignArtifacts() {
	for i := range c.res.Binaries {
		b := &c.res.Binaries[i]
		container, p := "", filepath.Clean(b.Path)
		if b.Member != "" {
			container, p = b.Path, path.Clean(b.Member)
		}
		best := -1
		for j, r := range c.roots {
			if r.container == container && (r.dir == "." || strings.HasPrefix(p, r.dir+"/")) &&
				(best < 0 || len(r.dir) > len(c.roots[best].dir)) {
				best = j
			}
		}
		if best >= 0 {
			b.expect = c.roots[best].exp
			b.Artifact = b.expect.name
		}
	}
}

func (c *checker) fail(msg string) { c.res.Failures = append(c.res.Failures, msg) }

func (c *checker) note(msg string) { c.res.Notes = append(c.res.Notes, msg) }

// file checks one file on disk; explicit is true for the path the user
// named, which must be something check understands.
func (c *checker) file(p string, explicit bool) error {
	f, err := os.Open(p)
	if err != nil {
		c.addError(Binary{Path: p}, err)
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		c.addError(Binary{Path: p}, err)
		return nil
	}
	size := st.Size()
	magic := make([]byte, min(size, 8))
	if _, err := f.ReadAt(magic, 0); err != nil && err != io.EOF {
		c.addError(Binary{Path: p, Size: size}, fmt.Errorf("read %s: %w", p, err))
		return nil
	}
	switch inspect.Identify(magic) {
	case inspect.FormatUnknown:
		if explicit {
			c.addError(Binary{Path: p, Size: size}, fmt.Errorf("%s: %w: expected a Mach-O, universal, ar or ELF binary, a wheel (zip) or a .tar.gz, found magic %x", p, inspect.ErrUnknownFormat, magic))
		} else {
			c.res.Skipped++
		}
		return nil
	case inspect.FormatZip:
		err = inspect.WalkZip(c.ctx, p, f, size, c.o.Limits, c.memberFunc(p))
	case inspect.FormatGzip:
		err = inspect.WalkTarGz(c.ctx, p, f, c.o.Limits, c.memberFunc(p))
	default:
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(f, 0, size)); err != nil {
			c.addError(Binary{Path: p, Size: size}, fmt.Errorf("read %s: %w", p, err))
			return nil
		}
		c.binary(Binary{Path: p, Size: size, SHA256: hex.EncodeToString(h.Sum(nil))}, p, f)
		return nil
	}
	if err != nil {
		if cerr := c.ctx.Err(); cerr != nil {
			return cerr
		}
		c.addError(Binary{Path: p, Size: size}, err)
	}
	return nil
}

// maxManifest bounds an archived manifest.json read into memory.
const maxManifest = 4 << 20

// memberFunc handles the members of the archive at p: binaries are spooled
// and inspected, manifests remembered, nested archives noted.
func (c *checker) memberFunc(p string) inspect.WalkFunc {
	return func(m inspect.Member, r io.Reader) error {
		if path.Base(m.Name) == artifact.ManifestName {
			return c.archivedManifest(p, m, r)
		}
		magic := make([]byte, 8)
		n, err := io.ReadFull(r, magic)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return err
		}
		magic = magic[:n]
		switch inspect.Identify(magic) {
		case inspect.FormatUnknown:
			c.res.Skipped++
			return nil
		case inspect.FormatZip, inspect.FormatGzip:
			c.note(fmt.Sprintf("%s(%s): nested archive, not inspected (archives are opened one level deep)", p, m.Name))
			return nil
		}
		return c.spool(p, m, io.MultiReader(bytes.NewReader(magic), r))
	}
}

func (c *checker) archivedManifest(p string, m inspect.Member, r io.Reader) error {
	b, err := io.ReadAll(io.LimitReader(r, maxManifest+1))
	if err != nil {
		return err
	}
	if len(b) > maxManifest {
		c.fail(fmt.Sprintf("%s(%s): manifest larger than %d bytes", p, m.Name, maxManifest))
		return nil
	}
	man, err := artifact.ParseManifest(b)
	if err != nil {
		c.fail(fmt.Sprintf("%s(%s): %v", p, m.Name, err))
		return nil
	}
	c.addRoot(p, path.Dir(m.Name), man)
	return nil
}

// spool decompresses one member into a temporary file (inspect needs an
// io.ReaderAt; the decompressed stream is read exactly once), hashing it on
// the way, inspects it and deletes it.
func (c *checker) spool(p string, m inspect.Member, r io.Reader) error {
	tmp, err := os.CreateTemp(c.o.TempDir, "osslbuild-check-*")
	if err != nil {
		return fmt.Errorf("check %s(%s): spool: %w", p, m.Name, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), r)
	if err != nil {
		if errors.Is(err, inspect.ErrLimit) {
			return err // already names the archive and member
		}
		return fmt.Errorf("check %s(%s): read member: %w", p, m.Name, err)
	}
	c.binary(Binary{Path: p, Member: m.Name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, p+"("+m.Name+")", tmp)
	return nil
}

func (c *checker) addError(b Binary, err error) {
	b.Error = err.Error()
	b.Slices = []Slice{}
	c.res.Binaries = append(c.res.Binaries, b)
}

// binary inspects r (b.Size bytes) and records its slices.
func (c *checker) binary(b Binary, name string, r io.ReaderAt) {
	f, err := inspect.InspectReader(name, r, b.Size)
	if err != nil {
		c.addError(b, err)
		return
	}
	b.Format = string(f.Format)
	b.Slices = make([]Slice, 0, len(f.Slices))
	for _, s := range f.Slices {
		b.Slices = append(b.Slices, facts(s))
	}
	c.res.Binaries = append(c.res.Binaries, b)
}
