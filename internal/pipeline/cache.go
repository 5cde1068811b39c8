package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/codeclass"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/configure"
	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/link"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/sbom"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// The artifact cache keeps validated artifact trees and their tarballs,
// keyed by everything that determines their bytes, so a repeated build with
// unchanged inputs is served in about a second. Nothing an entry says about
// itself is trusted (a CI cache restored from elsewhere is anyone's): every
// hit verifies the served copy against its manifest, validates its
// libraries again from their bytes (the rules, the machine code, the
// instruction set), checks the cached tarball against the copy, and writes
// the asking run's own facts (which recipe file asked) into what it
// serves. Only the link, which proves nothing about the bytes that
// validation does not, is skipped while the record beside the entry says
// the same rules and toolchain linked it. An entry that fails any of this
// is deleted and the slice rebuilt, saying why. It wraps any builder.
type cachingBuilder struct {
	run     *run
	variant *Variant
	inner   builder
}

func (c *cachingBuilder) build(ctx context.Context, p *recipe.Plan) (*built, error) {
	r := c.run
	_, id, err := r.toolchain(ctx, p.Slice)
	if err != nil {
		return nil, err
	}
	key, err := cacheKey(p, c.variant, r.Revision, id)
	if err != nil {
		return nil, err
	}
	e, err := r.entry(key, artifactName(p, c.variant), id)
	if err != nil {
		return nil, err
	}
	// The release's own lists every hit is held to (run.holdToRelease),
	// and the verification of its source the hit states, run beside the
	// copy and the proofs.
	go r.releaseOf(ctx, p.Release)
	go r.releaseSource(ctx, p.Release.Version, p.Release.SHA256)
	if b, ok, err := r.cached(ctx, e, r.fitsPlan(p, c.variant, e.name, id), r.proveSlice(p, c.variant, e.name), r.ownSlice(p)); err != nil || ok {
		return b, err
	}
	b, err := c.inner.build(ctx, p)
	if err != nil {
		return nil, err
	}
	r.store(ctx, e, b)
	return b, nil
}

// ownSlice writes the asking run's own facts into a slice it is served:
// its recipe, and its source as it verified it (the URL it came from, the
// signature and its signer), not the run's that filled the entry, whose
// release fitsPlan holds to the plan.
func (r *run) ownSlice(p *recipe.Plan) func(*artifact.Manifest) error {
	return func(m *artifact.Manifest) error {
		v, err := r.releaseSource(context.Background(), p.Release.Version, p.Release.SHA256) // verified by the proofs a moment ago
		if err != nil {
			return err
		}
		m.Recipe, m.OpenSSL = recipeRef(p.Recipe), sourceRef(v)
		return nil
	}
}

// fitsPlan refuses a cached manifest that does not say, field by field,
// what this run's record stage would write for plan p built as variant v
// with toolchain id: the artifact name, the slice, the release (version,
// sha256, size, a signer the plan accepts), osslbuild, the toolchain, the
// variant, the patches and (for osslbuild's own build) the Configure argv.
// An entry from another release, osslbuild or toolchain under a forged key
// is not served; its libraries are then held to the same release
// (Expect's version) from their bytes.
func (r *run) fitsPlan(p *recipe.Plan, v *Variant, name string, id toolchain.Identity) func(*artifact.Manifest) error {
	return func(m *artifact.Manifest) error {
		var why []string
		same := func(what string, got, want any) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				why = append(why, fmt.Sprintf("%s %s, the plan's %s", what, g, w))
			}
		}
		same("name", m.Name, name)
		same("target", m.Target, p.Slice)
		same("release", []any{m.OpenSSL.Version, m.OpenSSL.SHA256}, []any{p.Release.Version, p.Release.SHA256})
		if p.Release.Size != 0 {
			same("source size", m.OpenSSL.Size, p.Release.Size)
		}
		same("osslbuild", m.Osslbuild, r.Revision)
		same("toolchain", m.Toolchain, id)
		same("variant", m.Variant, v.Name)
		if want, err := Patches(p.Release.Version); err == nil {
			same("patches", m.Patches, want)
		}
		if v.Name == "" {
			same("Configure argv", m.Configure.Argv, configure.Args(p))
		}
		if accepted := p.Release.Signers; len(accepted) > 0 && !slices.Contains(accepted, m.OpenSSL.Signer) {
			why = append(why, fmt.Sprintf("signer %q, which the plan does not accept (%s)", m.OpenSSL.Signer, strings.Join(accepted, ", ")))
		}
		// The key file that verified the source is one the plan verifies
		// with: osslbuild's keys/ or the recipe's, byte for byte.
		if k := m.OpenSSL.SignerKey; m.OpenSSL.Signer != "" && (k == nil || k.Fingerprint != m.OpenSSL.Signer || !slices.Contains(keyRefs(p.Release), *k)) {
			g, _ := json.Marshal(k)
			why = append(why, fmt.Sprintf("signer key %s, not one of the plan's key files", g))
		}
		if len(m.Slices) > 0 || len(m.HeaderDispatch) > 0 {
			why = append(why, "it records slices or a header dispatch: a merge, not a slice")
		}
		if len(why) > 0 {
			return fmt.Errorf("its manifest is not this plan's: %s", strings.Join(why, "; "))
		}
		return nil
	}
}

// cacheKey digests the inputs of one slice build: the plan (the slice as
// the recipe resolves it, the release with its pins, URLs and signers, the
// recipe's release keys by origin, path and digest, the install prefix),
// the patches, the toolchain, osslbuild (and so its keys/) and the
// variant, not the recipe file's bytes. Two recipe files that plan the same slice
// (pyca's example and the embedded recipe, a comment apart) share an
// entry; each hit writes its own recipe into what it serves (cached). The
// pinned source digest stands for the verified tarball: nothing else can
// get past verification.
func cacheKey(p *recipe.Plan, v *Variant, revision string, id toolchain.Identity) (string, error) {
	ps, err := Patches(p.Release.Version)
	if err != nil {
		return "", err
	}
	var pd []string
	for _, x := range ps {
		pd = append(pd, x.Name+"@"+x.SHA256)
	}
	in := struct {
		Format    int
		Osslbuild string
		Variant   string
		Slice     platform.Slice
		Release   recipe.Release
		Keys      []signature.Key `json:",omitempty"` // the manifest records which verified the source
		Prefix    string
		Patches   []string
		Toolchain toolchain.Identity
	}{3, revision, v.Name, p.Slice, p.Release, p.Release.Keys, p.Recipe.Prefix, pd, id}
	return digestJSON(in)
}

func digestJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return artifact.SHA256(b), nil
}

// entry is one artifact in the cache: <root>/artifacts/<key>/ holding the
// tree <name>/, its tarball <name>.tar.gz and proved.json.
type entry struct {
	dir, name string
	proved    provedBy // what a proof now would be made with
}

// provedBy records what last proved an entry: the digest of the sources of
// the packages that decide a verdict (rulesDigest), of the toolchain, and
// of the manifest it proved (a tree edited together with its manifest is
// proved again, not taken on trust).
type provedBy struct {
	Rules     string `json:"rules"`
	Toolchain string `json:"toolchain"`
	Manifest  string `json:"manifest"`
}

// provedFor is e.proved for the tree dir's manifest.
func (e entry) provedFor(dir string) provedBy {
	p := e.proved
	p.Manifest, _ = ctxio.SHA256(context.Background(), filepath.Join(dir, artifact.ManifestName), true)
	return p
}

func (r *run) entry(key, name string, id toolchain.Identity) (entry, error) {
	// The cache root is the fetch cache's: Fetch.CacheDir, else
	// <user cache dir>/osslbuild.
	f, err := fetch.New(r.Fetch)
	if err != nil {
		return entry{}, err
	}
	tc, err := digestJSON(id)
	if err != nil {
		return entry{}, err
	}
	return entry{dir: filepath.Join(f.CacheDir(), "artifacts", key), name: name, proved: provedBy{Rules: r.rulesDigest(), Toolchain: tc}}, nil
}

func (e entry) tree() string    { return filepath.Join(e.dir, e.name) }
func (e entry) tarball() string { return filepath.Join(e.dir, e.name+".tar.gz") }
func (e entry) record() string  { return filepath.Join(e.dir, "proved.json") }

// rulesDigest digests the sources of what decides a verdict on an artifact
// (validate, inspect, codeclass, link) and the program the link check
// links: the code itself, embedded by each package, never a constant kept
// by hand.
func (r *run) rulesDigest() string {
	h := sha256.New()
	for _, src := range []fs.FS{validate.Sources, inspect.Sources, codeclass.Sources, link.Sources} {
		// In lexical order, as fs.WalkDir walks.
		fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := fs.ReadFile(src, p)
				fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
				h.Write(b)
			}
			return nil
		})
	}
	prog := LinkProgram(r.Runtime)
	fmt.Fprintf(h, "%s\x00%d\x00", prog.Name, len(prog.Source))
	h.Write(prog.Source)
	return hex.EncodeToString(h.Sum(nil))
}

// prover runs the proof stages over a tree (the link stages too when link
// is set) and returns what they record; without the link, the links are
// the manifest's.
type prover func(ctx context.Context, dir string, m *artifact.Manifest, link bool) (proofRecords, error)

// proofRecords are what the proof stages measure of a tree and a manifest
// records: the compiler lines, the code evidence and the link records.
type proofRecords struct {
	lines []artifact.CompilerLine
	code  []artifact.CodeEvidence
	links []artifact.LinkCheck
}

// refresh puts recs into m, and for a universal manifest each slice's
// share of them by architecture (artifact.Distribute), as a build now would
// write them; it reports whether anything changed.
func (recs proofRecords) refresh(m *artifact.Manifest) bool {
	before := recordsOf(m)
	m.CompilerLines, m.CodeEvidence, m.LinkChecks = recs.lines, recs.code, recs.links
	artifact.Distribute(m)
	return !slices.EqualFunc(before, recordsOf(m), proofRecords.same)
}

// recordsOf lists m's records, then each slice's.
func recordsOf(m *artifact.Manifest) []proofRecords {
	out := []proofRecords{{m.CompilerLines, m.CodeEvidence, m.LinkChecks}}
	for _, s := range m.Slices {
		if s != nil {
			out = append(out, proofRecords{s.CompilerLines, s.CodeEvidence, s.LinkChecks})
		}
	}
	return out
}

func (recs proofRecords) same(o proofRecords) bool {
	return sameList(recs.lines, o.lines) && sameList(recs.code, o.code) && sameList(recs.links, o.links)
}

// sameList compares two record lists, an empty one and none alike (a
// manifest read back from JSON has [] where a build had nil).
func sameList[T any](a, b []T) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}

// proveSlice runs variant's proof stages over a slice tree of plan p.
func (r *run) proveSlice(p *recipe.Plan, v *Variant, name string) prover {
	return func(ctx context.Context, dir string, m *artifact.Manifest, link bool) (proofRecords, error) {
		check := &job{run: r, plan: p, name: name, dir: dir}
		// The functions the build exempted, as its manifest records them:
		// the proof holds the library to the build's own list.
		if e := artifact.ExpectOf(m, m.Target, m.Target.Libraries()[0]); e.ISA != nil {
			check.dispatch = &e.ISA.Dispatch
		}
		if !link {
			check.links = m.LinkChecks
		}
		for _, stage := range v.proofs(link) {
			if err := stage.run(ctx, check); err != nil {
				return proofRecords{}, fmt.Errorf("%s: %w", stage.name, err)
			}
		}
		return proofRecords{lines: check.lines, code: check.code, links: check.links}, nil
	}
}

// cached serves the entry as a fresh copy in a private directory: the copy
// verified against its manifest, which must fit what is asked for, its
// libraries validated from their bytes, linked again if what proved the
// entry has changed, its tarball checked against the copy, and the asking
// run's own facts written into its manifest and SBOM by own. ok is false
// on a miss; an entry that fails is deleted, and the caller builds.
func (r *run) cached(ctx context.Context, e entry, fits func(*artifact.Manifest) error, prove prover, own func(*artifact.Manifest) error) (_ *built, ok bool, _ error) {
	if _, err := os.Stat(filepath.Join(e.tree(), artifact.ManifestName)); err != nil {
		return nil, false, nil // no entry of this name under the key: a miss, not a bad entry
	}
	work, err := Scratch(r.Work, e.name+"-cached-")
	if err != nil {
		return nil, false, err
	}
	// Unpacking the cached tarball is the dearest part of a hit and reads
	// nothing the rest does: it runs beside the copy, the verification and
	// the proofs, and its tar stream is compared with the tree's after.
	tctx, stopTarball := context.WithCancel(ctx)
	var tarball struct {
		sync.WaitGroup
		d   artifact.Digests
		err error
	}
	tarball.Go(func() { tarball.d, tarball.err = artifact.ReadTarballStream(tctx, e.tarball()) })
	defer func() { stopTarball(); tarball.Wait() }()
	release := func() { os.RemoveAll(work) }
	discard := func(why error) (*built, bool, error) {
		release()
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		if machineFault(why) {
			// A full disk is not a bad entry: it stays, and the build
			// meets the machine on its own terms.
			r.logf("%s: cached artifact %s not served, kept: %v", e.name, e.tree(), why)
			return nil, false, nil
		}
		r.logf("%s: cached artifact %s is invalid, discarding it and building: %v", e.name, e.tree(), why)
		os.RemoveAll(e.dir)
		return nil, false, nil
	}
	// The copy, every file of it against the manifest (nothing missing,
	// added, linked or special) and the tar stream its tarball must hold,
	// in one read of the entry: what is published is what was verified.
	dir := filepath.Join(work, e.name)
	m, tarSum, err := artifact.CopyVerified(ctx, e.tree(), dir, e.name)
	if err != nil {
		return discard(err)
	}
	if err := fits(m); err != nil {
		return discard(err)
	}
	// The manifest and SBOM are what osslbuild writes from the manifest's
	// own values, byte for byte (no duplicate key, field or spelling a
	// reader other than Go's would take for another value), and the
	// tarball unpacks to the verified tree's tar stream, byte for byte,
	// under osslbuild's gzip header with nothing after it (deriving the
	// compressed bytes again would cost a second of compression a hit).
	if err := canonical(dir, m); err != nil {
		return discard(err)
	}
	// The proof record is a hint for the link alone: the libraries are
	// validated from their bytes on every hit, whatever it says.
	want := e.provedFor(dir)
	var last provedBy
	// Missing or unreadable as JSON, it only asks for the link; anything
	// but a regular file (a FIFO, opened without waiting) is a bad entry.
	rb, err := ctxio.ReadFile(ctx, e.record(), false, 1<<20)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return discard(err)
	}
	if err != nil || json.Unmarshal(rb, &last) != nil {
		last = provedBy{}
	}
	link := last != want
	recs, err := prove(ctx, dir, m, link)
	if err != nil {
		stopTarball() // the entry goes anyway: no need to unpack the rest
	}
	tarball.Wait()
	if err == nil {
		if err := cmp.Or(tarball.err, artifact.SameStream(e.tarball(), tarball.d, tarSum)); err != nil {
			return discard(fmt.Errorf("its tarball: %w", err))
		}
	}
	if errors.Is(err, toolchain.ErrSetup) {
		// A machine that cannot link (no lld, no stubs) says so; it does
		// not make the entry invalid.
		release()
		return nil, false, err
	}
	if err != nil {
		return discard(err)
	}
	b := &built{dir: dir, manifest: m, release: release, tarball: e.tarball(), digests: tarball.d}
	// The proofs just ran with this osslbuild's rules, classifier, smoke
	// program and stubs; where the entry records other results (another
	// link program, a classifier that scores a little differently), the
	// served manifest says what a build now would, and its tarball is made
	// anew.
	if recs.refresh(m) {
		// The SBOM states the compiler lines too.
		if err := restamp(ctx, dir, m); err != nil {
			release()
			return nil, false, err
		}
		b.tarball = ""
		r.logf("%s: records refreshed: the entry was proved with other rules, a classifier that measures otherwise, or another smoke program or stub", e.name)
		// The entry takes the refreshed tree, so the next hit need not.
		os.RemoveAll(e.dir)
		r.store(ctx, e, b)
	} else if link {
		writeJSON(e.record(), want)
	}
	// The asking run's own facts, whatever run filled the entry: the same
	// command gives the same bytes from an empty cache or a full one.
	before, _ := artifact.EncodeManifest(m)
	err = own(m)
	if after, _ := artifact.EncodeManifest(m); err == nil && !bytes.Equal(before, after) {
		err = restamp(ctx, dir, m)
		b.tarball = ""
	}
	if err != nil {
		release()
		return nil, false, err
	}
	how := "verified and validated from its bytes; link not run again (rules and toolchain unchanged)"
	if link {
		how = "verified, validated and linked again"
	}
	r.logf("%s: cache hit (%s): %s", e.name, filepath.Base(e.dir)[:12], how)
	return b, true, nil
}

// machineFault says whether err is the machine's (a full disk or quota, a
// read-only file system, no file descriptors or memory left) rather than
// the entry's: such an entry is not deleted.
func machineFault(err error) bool {
	return slices.ContainsFunc([]syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM}, func(errno syscall.Errno) bool {
		return errors.Is(err, errno)
	})
}

// restamp writes the SBOM and the manifest of the tree dir again from m.
func restamp(ctx context.Context, dir string, m *artifact.Manifest) error {
	if err := sbom.Write(dir, m); err != nil {
		return err
	}
	return artifact.WriteManifest(ctx, dir, m)
}

// store copies a proved artifact tree into the entry with its tarball and
// the record of what proved it, atomically, and points b at the stored
// tarball so publishing copies it instead of writing it again. A failure
// only costs the next build its hit.
func (r *run) store(ctx context.Context, e entry, b *built) {
	if err := r.storeEntry(ctx, e, b); err != nil {
		r.logf("%s: warning: not cached: %v", e.name, err)
	}
}

func (r *run) storeEntry(ctx context.Context, e entry, b *built) error {
	if _, err := os.Stat(e.dir); err == nil {
		return nil // another build stored the same entry first
	}
	if err := os.MkdirAll(filepath.Dir(e.dir), 0o755); err != nil {
		return err
	}
	key := filepath.Base(e.dir)
	tmp, err := os.MkdirTemp(filepath.Dir(e.dir), ".tmp-"+key[:12]+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.CopyFS(filepath.Join(tmp, e.name), os.DirFS(b.dir)); err != nil {
		return fmt.Errorf("artifact cache: %w", err)
	}
	d, err := artifact.WriteTarballFile(ctx, b.dir, e.name, time.Unix(b.manifest.SourceDateEpoch, 0), filepath.Join(tmp, e.name+".tar.gz"))
	if err != nil {
		return fmt.Errorf("artifact cache: %w", err)
	}
	if err := writeJSON(filepath.Join(tmp, "proved.json"), e.provedFor(b.dir)); err != nil {
		return err
	}
	if err := os.Rename(tmp, e.dir); err != nil {
		if _, serr := os.Stat(e.dir); serr == nil {
			return nil // another build stored the entry first: its tarball is not ours
		}
		return fmt.Errorf("artifact cache: %w", err)
	}
	b.tarball, b.digests = e.tarball(), d
	return nil
}

// writeJSON writes v to path by rename (writeFile).
func writeJSON(path string, v any) error {
	bs, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return ctxio.WriteFile(path, bs, 0o644) // by rename: a reader sees all or nothing
}

// canonical refuses a tree whose manifest.json or sbom.json is not what
// osslbuild writes from the manifest's values.
func canonical(dir string, m *artifact.Manifest) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".canonical-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	c := *m
	if err := sbom.Write(tmp, &c); err != nil {
		return err
	}
	wantSBOM, err := os.ReadFile(filepath.Join(tmp, artifact.SBOMName))
	if err != nil {
		return err
	}
	wantManifest, err := artifact.EncodeManifest(m)
	if err != nil {
		return err
	}
	for name, want := range map[string][]byte{artifact.ManifestName: wantManifest, artifact.SBOMName: wantSBOM} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("its %s is not what osslbuild writes from the manifest's values", name)
		}
	}
	return nil
}
