package check

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/codeclass"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// jobResult is what inspecting one file found.
type jobResult struct {
	binaries []Binary
	notes    []string
	failures []string
	skipped  int
	entry    *artifact.Entry // for a file inside an artifact directory: its digest
	roots    []*root         // artifacts inside a tarball
	sboms    []SBOM          // a wheel's SBOMs, an artifact's sbom.json
}

// rawFile is an open regular file, read with pread. Thousands of small
// files go through here: a bare descriptor spares each the os.File
// allocation, finalizer and poller registration (a system call that fails
// for every regular file on Linux).
type rawFile struct {
	fd   int
	name string
}

// open opens p to read it: never a FIFO, socket or device (opened with
// O_NONBLOCK, then refused on fstat), and, for a file met in a walk, never
// through a link swapped in after the walk listed it (O_NOFOLLOW).
func open(p string, follow bool) (rawFile, int64, error) {
	flags := syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	fd, err := syscall.Open(p, flags, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(p, flags, 0)
	}
	if err == syscall.ELOOP && !follow {
		return rawFile{}, 0, fmt.Errorf("%s: symlink, expected a regular file: not followed", p)
	}
	if err != nil {
		return rawFile{}, 0, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	f := rawFile{fd: fd, name: p}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		f.Close()
		return rawFile{}, 0, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		f.Close()
		// Its type in fs's terms, for the message, is os.Stat's: the
		// same file, as open reached it (O_NOFOLLOW refused a link).
		t := fs.ModeIrregular
		if fi, err := os.Stat(p); err == nil {
			t = fi.Mode().Type()
		}
		return rawFile{}, 0, fmt.Errorf("%s: %s, expected a regular file: not read", p, ctxio.Describe(p, t))
	}
	return f, st.Size, nil
}

// ReadAt fills b from off, as io.ReaderAt does.
func (f rawFile) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		k, err := syscall.Pread(f.fd, b[n:], off+int64(n))
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return n, &fs.PathError{Op: "read", Path: f.name, Err: err}
		case k == 0:
			return n, io.EOF
		}
		n += k
	}
	return n, nil
}

func (f rawFile) Close() error { return syscall.Close(f.fd) }

// smallFile is the size up to which a file is read into the worker's
// buffer rather than mapped: unmapping costs a TLB flush on every CPU,
// which for a small object is more than copying it.
const smallFile = 4 << 20

// smallRead is the size up to which a file is read whole before its magic
// is looked at: most files in a directory of binaries are binaries.
const smallRead = 256 << 10

// worker is one inspecting goroutine's reusable memory.
type worker struct{ buf []byte }

// load returns the size bytes of f: read into the worker's buffer when
// small, mapped when large; release frees a mapping.
func (w *worker) load(f rawFile, size int64) (data []byte, release func(), err error) {
	if size > smallFile {
		return mapFile(f, size)
	}
	if int64(cap(w.buf)) < size {
		w.buf = make([]byte, max(size, 2*int64(cap(w.buf)), smallRead))
	}
	data = w.buf[:size]
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}

// file inspects one file on disk.
func (c *checker) file(j job, w *worker) (r jobResult) {
	p := j.path
	fail := func(size int64, err error) jobResult {
		r.binaries = append(r.binaries, Binary{Path: p, Size: size, Error: err.Error(), Slices: []Slice{}, root: j.root})
		return r
	}
	f, size, err := open(p, j.explicit)
	if err != nil {
		return fail(0, err)
	}
	defer f.Close()
	// A small file is read whole at once (one system call, not two); of a
	// larger one the magic first, the rest only if it is worth reading.
	var data []byte
	release := func() {}
	defer func() { release() }()
	magic := make([]byte, min(size, 8))
	if size <= smallRead {
		if data, release, err = w.load(f, size); err != nil {
			return fail(size, fmt.Errorf("read %s: %w", p, err))
		}
		copy(magic, data)
	} else if _, err := f.ReadAt(magic, 0); err != nil && err != io.EOF {
		return fail(size, fmt.Errorf("read %s: %w", p, err))
	}
	format := inspect.Identify(magic)
	if format == inspect.FormatUnknown {
		switch {
		case j.explicit && size == 0:
			return fail(0, fmt.Errorf("%s: %w: the file is empty (0 bytes): expected a Mach-O, universal, ar or ELF binary, a wheel (zip) or a .tar.gz", p, inspect.ErrUnknownFormat))
		case j.explicit:
			return fail(size, fmt.Errorf("%s: %w: expected a Mach-O, universal, ar or ELF binary, a wheel (zip) or a .tar.gz, found magic %x", p, inspect.ErrUnknownFormat, magic))
		}
		r.skipped++
		if j.root == nil {
			return r
		}
		// Every file of an artifact is verified.
	}
	if data == nil {
		if data, release, err = w.load(f, size); err != nil {
			return fail(size, fmt.Errorf("read %s: %w", p, err))
		}
	}
	switch format {
	case inspect.FormatUnknown:
		err = guard(p, func() error {
			r.entry = &artifact.Entry{SHA256: artifact.SHA256(data)}
			if j.rel == artifact.SBOMName {
				s := sbomOf(p, "", data)
				s.root = j.root
				r.sboms = append(r.sboms, s)
			}
			return nil
		})
		if err != nil {
			return fail(size, err)
		}
		return r
	case inspect.FormatZip, inspect.FormatGzip:
		err = guard(p, func() error { return c.container(p, format, data, &r) })
		if err != nil && !j.explicit && j.root == nil && errors.Is(err, inspect.ErrNotTar) {
			r.skipped++ // data someone gzipped (a .json.gz): no binary, no tarball
			return r
		}
		if err != nil {
			if cerr := c.ctx.Err(); cerr != nil {
				return r
			}
			r.binaries = append(r.binaries, Binary{Path: p, Size: size, Error: err.Error(), Slices: []Slice{}})
		}
		if j.root != nil {
			r.entry = &artifact.Entry{SHA256: artifact.SHA256(data)}
		}
		return r
	}
	b := c.binary(Binary{Path: p, Size: size, root: j.root}, p, data, c.o.Digests || j.root != nil)
	if j.root != nil && b.SHA256 != "" {
		r.entry = &artifact.Entry{SHA256: b.SHA256}
	}
	r.binaries = append(r.binaries, b)
	return r
}

// binary inspects data and, when digest is set, hashes it: a large file on
// two cores at once (the other workers keep both busy with small ones).
func (c *checker) binary(b Binary, name string, data []byte, digest bool) Binary {
	var herr error
	hash := func() { herr = guard(name, func() error { b.SHA256 = artifact.SHA256(data); return nil }) }
	var hashing sync.WaitGroup
	switch {
	case digest && len(data) > smallFile:
		hashing.Go(hash)
	case digest:
		hash()
	}
	var f *inspect.File
	ierr := guard(name, func() (err error) {
		if f, err = inspect.InspectBytes(name, data); err != nil {
			return err
		}
		return codeclass.MeasureBytesOf(c.ctx, f, data, measured)
	})
	hashing.Wait()
	b.inspected(f, cmp.Or(herr, ierr))
	return b
}

// inspected records what inspecting the binary gave: its file, or the
// error that stopped it.
func (b *Binary) inspected(f *inspect.File, err error) {
	b.Slices = []Slice{}
	if err != nil {
		b.Error = err.Error()
		return
	}
	b.Format, b.file = string(f.Format), f
}

// measured says whose machine code check measures: slices holding
// OpenSSL, the only ones it judges, and static libraries, which an
// artifact's manifest speaks for whatever their strings show. A bundle's
// other libraries (libz, ICU ...) are not decoded.
func measured(s inspect.Slice) bool {
	return s.Format == inspect.FormatAr || validate.HoldsOpenSSL(s)
}

// guard runs fn, turning a fault on a mapped file that shrank underneath
// (SIGBUS) into an error naming the file instead of a crash.
func guard(name string, fn func() error) error { return inspect.GuardFault("read", name, fn) }

// memberErr is an error reading the archive member name; inspect's limit
// errors name the archive and member already.
func memberErr(name string, err error) error {
	if errors.Is(err, inspect.ErrLimit) {
		return err
	}
	return fmt.Errorf("check %s: read member: %w", name, err)
}

// readFile reads size bytes of f into memory: mapFile's fallback.
func readFile(f rawFile, size int64) ([]byte, func(), error) {
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, nil, err
	}
	return b, func() {}, nil
}

// maxInMemory bounds an archive member held in memory for inspection;
// larger ones go to a temporary file.
const maxInMemory = 64 << 20

// container walks a wheel (zip) or tarball (tar.gz) whose bytes are data.
// Binary members are decompressed once, hashed on the way, and inspected;
// in a tarball every member is hashed and every manifest read, so the
// osslbuild artifacts inside can be verified once the walk is over.
func (c *checker) container(p string, format inspect.Format, data []byte, r *jobResult) error {
	tar := format == inspect.FormatGzip
	entries := map[string]artifact.Entry{} // what a tarball's artifacts are verified against
	var manifests []*root
	fn := func(m inspect.Member, rd io.Reader) error {
		if m.Type != "" {
			entries[path.Clean(m.Name)] = artifact.Entry{Type: m.Type}
			return nil
		}
		if tar && path.Base(m.Name) == artifact.ManifestName {
			b, err := io.ReadAll(io.LimitReader(rd, artifact.MaxManifestSize+1))
			if err != nil {
				return err
			}
			entries[path.Clean(m.Name)] = artifact.Entry{SHA256: artifact.SHA256(b)}
			if len(b) > artifact.MaxManifestSize {
				r.failures = append(r.failures, fmt.Sprintf("%s(%s): manifest larger than %d bytes", p, m.Name, artifact.MaxManifestSize))
				return nil
			}
			switch man, err := artifact.ParseIfOurs(b); {
			case err != nil:
				r.failures = append(r.failures, fmt.Sprintf("%s(%s): %v", p, m.Name, err))
			case man != nil:
				manifests = append(manifests, newRoot(p, path.Dir(path.Clean(m.Name)), true, man))
			}
			return nil
		}
		if tar && path.Base(m.Name) == artifact.SBOMName || !tar && isWheelSBOM(m.Name) {
			return c.containerSBOM(p, m, rd, entries, r)
		}
		magic := make([]byte, 8)
		n, err := io.ReadFull(rd, magic)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return err
		}
		magic = magic[:n]
		rest := io.MultiReader(bytes.NewReader(magic), rd)
		// digestOnly records a member check does not inspect: an artifact
		// tarball's manifest still vouches for its bytes.
		digestOnly := func() error {
			if !tar {
				return nil
			}
			h := sha256.New()
			if _, err := io.Copy(h, rest); err != nil {
				return err
			}
			entries[path.Clean(m.Name)] = artifact.Entry{SHA256: hex.EncodeToString(h.Sum(nil))}
			return nil
		}
		switch inspect.Identify(magic) {
		case inspect.FormatUnknown:
			r.skipped++
			return digestOnly()
		case inspect.FormatZip, inspect.FormatGzip:
			r.notes = append(r.notes, fmt.Sprintf("%s(%s): nested archive, not inspected (archives are opened one level deep)", p, m.Name))
			return digestOnly()
		}
		b, err := c.member(p, m, rest, tar || c.o.Digests)
		if err != nil {
			return err
		}
		entries[path.Clean(m.Name)] = artifact.Entry{SHA256: b.SHA256}
		r.binaries = append(r.binaries, b)
		return nil
	}
	var err error
	if tar {
		err = inspect.WalkTarGz(c.ctx, p, bytes.NewReader(data), c.o.Limits, fn)
	} else {
		err = inspect.WalkZip(c.ctx, p, bytes.NewReader(data), int64(len(data)), c.o.Limits, fn)
	}
	if err != nil {
		return err
	}
	// Each artifact in the tarball: its entries, and the binaries it holds.
	for _, rt := range manifests {
		prefix := strings.TrimPrefix(rt.dir+"/", "./") // nothing at the tarball's top (".")
		for name, e := range entries {
			if rel, ok := strings.CutPrefix(name, prefix); ok && rel != artifact.ManifestName {
				rt.found[rel] = e
			}
		}
	}
	for i := range r.binaries {
		b := &r.binaries[i]
		name := path.Clean(b.Member)
		for _, rt := range manifests {
			if (rt.dir == "." || strings.HasPrefix(name, rt.dir+"/")) && (b.root == nil || len(rt.dir) > len(b.root.dir)) {
				b.root = rt
			}
		}
	}
	r.roots = append(r.roots, manifests...)
	attachSBOMs(r, manifests)
	return nil
}

// member decompresses one archive member (into memory, or a temporary
// file when large) and inspects it, hashing it too when digest is set (a
// large one as it is spooled).
func (c *checker) member(p string, m inspect.Member, r io.Reader, digest bool) (Binary, error) {
	b := Binary{Path: p, Member: m.Name}
	name := p + "(" + m.Name + ")"
	// Sized from the declared size (bounded: an archive may lie), the
	// buffer does not grow by doubling, each growth a copy and a cleared
	// allocation: 0.54x the CPU of checking two npm packages.
	var buf bytes.Buffer
	buf.Grow(int(min(max(m.Size, 0), maxInMemory+1)))
	n, err := io.Copy(&buf, io.LimitReader(r, maxInMemory+1))
	if err != nil {
		return b, memberErr(name, err)
	}
	if n <= maxInMemory {
		b.Size = n
		return c.binary(b, name, buf.Bytes(), digest), nil
	}
	// Too large for memory: spool to a temporary file (in os.TempDir),
	// deleted at once.
	tmp, err := os.CreateTemp("", "osslbuild-check-*")
	if err != nil {
		return b, fmt.Errorf("check %s: spool: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	if _, err := io.MultiWriter(tmp, h).Write(buf.Bytes()); err != nil {
		return b, fmt.Errorf("check %s: spool: %w", name, err)
	}
	more, err := io.Copy(io.MultiWriter(tmp, h), r)
	if err != nil {
		return b, memberErr(name, err)
	}
	b.Size = n + more
	if digest {
		b.SHA256 = hex.EncodeToString(h.Sum(nil))
	}
	f, err := inspect.InspectReader(name, tmp, b.Size)
	if err == nil {
		err = codeclass.Measure(c.ctx, f, tmp, measured)
	}
	b.inspected(f, err)
	return b, nil
}
