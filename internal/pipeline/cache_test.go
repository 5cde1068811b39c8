package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/sbom"
	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
	"github.com/osslbuild/osslbuild/internal/testsupport/standin"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/internal/universal"
)

func TestCacheKeyChangesWithEveryInput(t *testing.T) {
	t.Parallel()
	p := plan(t, "arm64")
	id := toolchain.Identity{Kind: "cross", Compiler: "clang 14"}
	base, err := pipeline.CacheKey(p, pipeline.Osslbuild, "rev1", id)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := pipeline.CacheKey(p, pipeline.Osslbuild, "rev1", id); again != base {
		t.Fatal("key is not stable")
	}
	variants := map[string]func() string{
		"target": func() string { k, _ := pipeline.CacheKey(plan(t, "x86_64"), pipeline.Osslbuild, "rev1", id); return k },
		"options": func() string {
			q := *p
			q.Slice.Options = append([]string{}, p.Slice.Options...)
			q.Slice.Options[0] = "zlib"
			k, _ := pipeline.CacheKey(&q, pipeline.Osslbuild, "rev1", id)
			return k
		},
		"recipe's install prefix": func() string {
			r := *p.Recipe
			r.Prefix = "/opt/other"
			q := *p
			q.Recipe = &r
			k, _ := pipeline.CacheKey(&q, pipeline.Osslbuild, "rev1", id)
			return k
		},
		"release's URLs": func() string {
			q := *p
			q.Release.URLs = []string{"https://mirror.example/openssl.tar.gz"}
			k, _ := pipeline.CacheKey(&q, pipeline.Osslbuild, "rev1", id)
			return k
		},
		"slice's openssldir": func() string {
			q := *p
			q.Slice.OpenSSLDir = "/etc/other"
			k, _ := pipeline.CacheKey(&q, pipeline.Osslbuild, "rev1", id)
			return k
		},
		"source": func() string {
			q := *p
			q.Release.SHA256 = strings.Repeat("1", 64)
			k, _ := pipeline.CacheKey(&q, pipeline.Osslbuild, "rev1", id)
			return k
		},
		"toolchain": func() string {
			k, _ := pipeline.CacheKey(p, pipeline.Osslbuild, "rev1", toolchain.Identity{Kind: "macos", Compiler: "Apple clang 17"})
			return k
		},
		"osslbuild revision": func() string { k, _ := pipeline.CacheKey(p, pipeline.Osslbuild, "rev2", id); return k },
		"variant":            func() string { k, _ := pipeline.CacheKey(p, pipeline.PycaWay, "rev1", id); return k },
	}
	for name, f := range variants {
		if f() == base {
			t.Errorf("changing the %s does not change the key", name)
		}
	}
	// The recipe's release keys: a key, where it comes from and its bytes
	// (what the manifest records of the key that verified the source).
	withKey := func(k signature.Key) string {
		q := *p
		q.Release.Keys = []signature.Key{k}
		key, err := pipeline.CacheKey(&q, pipeline.Osslbuild, "rev1", id)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	k := signature.Key{Fingerprint: strings.Repeat("AB", 20), Origin: signature.OriginRecipe, Path: "keys/openssl-next.asc", SHA256: strings.Repeat("1", 64)}
	keyed := withKey(k)
	moved, edited, other := k, k, k
	moved.Path = "keys/elsewhere.asc"
	edited.SHA256 = strings.Repeat("2", 64)
	other.Fingerprint = strings.Repeat("CD", 20)
	for name, got := range map[string]string{"its path": withKey(moved), "its file's bytes": withKey(edited), "its fingerprint": withKey(other)} {
		if keyed == base || got == keyed || got == base {
			t.Errorf("a recipe's release key: changing %s does not change the key", name)
		}
	}
	// Another recipe file with the same plan (another name, path, origin
	// and digest: a comment apart) shares the entry.
	r := *p.Recipe
	r.SHA256, r.Name, r.Path, r.Origin = strings.Repeat("0", 64), "copy", "ci/copy.toml", "file"
	q := *p
	q.Recipe = &r
	if k, _ := pipeline.CacheKey(&q, pipeline.Osslbuild, "rev1", id); k != base {
		t.Error("a recipe file with the same plan (only its bytes, name and path differ) changes the key")
	}
}

// TestCacheKeyFollowsTheMacOSSDK: the identity the macOS toolchain reports
// (here from a stand-in xcrun, the same code that runs on a Mac) keys the
// artifact cache, so a new SDK, or the same version installed elsewhere,
// never serves a slice built against another.
func TestCacheKeyFollowsTheMacOSSDK(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := plan(t, "arm64")
	key := func(x *standin.Xcrun) (string, toolchain.Identity) {
		t.Helper()
		id, err := toolchain.MacOS(x.Path).Identity(ctx)
		if err != nil {
			t.Fatal(err)
		}
		k, err := pipeline.CacheKey(p, pipeline.Osslbuild, "rev1", id)
		if err != nil {
			t.Fatal(err)
		}
		return k, id
	}
	a := standin.New(t, "11.3")
	ka, ida := key(a)
	if again, _ := key(a); again != ka {
		t.Fatal("key is not stable for one SDK")
	}
	if ida.SDKPath != a.SDK || ida.SDK != "macOS SDK 11.3" {
		t.Fatalf("identity %+v does not name the SDK %s", ida, a.SDK)
	}
	kb, _ := key(standin.New(t, "14.0"))
	kc, _ := key(standin.New(t, "11.3")) // same version, another directory
	if kb == ka || kc == ka || kb == kc {
		t.Errorf("keys for SDK 11.3, 14.0 and 11.3 elsewhere: %s %s %s; want three different keys", ka[:12], kb[:12], kc[:12])
	}
}

// TestCacheServesOnlyValidEntries stores a real validated slice, serves it,
// then corrupts it: a corrupted entry is discarded, not served.
func TestCacheServesOnlyValidEntries(t *testing.T) {
	src := e2e.Slice(t, "arm64")
	pipeline.CacheRevision = e2e.Runtime(t).Revision
	p := plan(t, "arm64")
	o := pipeline.Settings{Work: t.TempDir()}
	o.Fetch.CacheDir, o.Fetch.Mirror, o.Fetch.Offline = t.TempDir(), testfixture.Dir(), true // the release a hit is held to
	key := strings.Repeat("ab", 32)
	if _, ok, err := pipeline.CacheLookup(o, key, p); ok || err != nil {
		t.Fatalf("empty cache served an entry: %v", err)
	}
	if err := pipeline.CacheStore(o, key, src, p); err != nil {
		t.Fatal(err)
	}
	dir, ok, err := pipeline.CacheLookup(o, key, p)
	if !ok || err != nil {
		t.Fatalf("stored entry not served: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "lib", "libcrypto.a")); err != nil {
		t.Error("served tree lacks libcrypto.a")
	}
	// The x86_64 plan must not accept the arm64 tree even under its key.
	if _, ok, _ := pipeline.CacheLookup(o, key, plan(t, "x86_64")); ok {
		t.Error("served an arm64 tree for x86_64")
	}
	// Corrupt the entry: flip a byte in libssl.a.
	entry := filepath.Join(o.Fetch.CacheDir, "artifacts", key, "openssl-macos-arm64", "lib", "libssl.a")
	b, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	os.WriteFile(entry, b, 0o644)
	if _, ok, err := pipeline.CacheLookup(o, key, p); ok || err != nil {
		t.Fatalf("corrupted entry served (err %v)", err)
	}
	if _, err := os.Stat(filepath.Join(o.Fetch.CacheDir, "artifacts", key)); !os.IsNotExist(err) {
		t.Error("corrupted entry was not removed")
	}
}

// TestCacheRelinks: a cache hit runs the link stage too. An entry whose
// files match its manifest but whose libcrypto.a lost a member only other
// members use is discarded, not served; a good entry stored without (or
// with another) link record is served with the record a build now writes.
func TestCacheRelinks(t *testing.T) {
	src := e2e.Slice(t, "arm64")
	pipeline.CacheRevision = e2e.Runtime(t).Revision
	p := plan(t, "arm64")
	o := pipeline.Settings{Work: t.TempDir()}
	o.Fetch.CacheDir, o.Fetch.Mirror, o.Fetch.Offline = t.TempDir(), testfixture.Dir(), true // the release a hit is held to
	good, bad := strings.Repeat("cd", 32), strings.Repeat("ef", 32)
	for _, key := range []string{good, bad} {
		if err := pipeline.CacheStore(o, key, src, p); err != nil {
			t.Fatal(err)
		}
	}
	tree := filepath.Join(o.Fetch.CacheDir, "artifacts", good, "openssl-macos-arm64")
	m, err := artifact.LoadManifest(context.Background(), tree)
	if err != nil {
		t.Fatal(err)
	}
	m.LinkChecks = []artifact.LinkCheck{{Arch: "arm64", Program: "an older smoke.c"}}
	if err := artifact.WriteManifest(context.Background(), tree, m); err != nil {
		t.Fatal(err)
	}
	rewriteTarball(t, tree)
	dir, ok, err := pipeline.CacheLookup(o, good, p)
	if !ok || err != nil {
		t.Fatalf("good entry not served: %v", err)
	}
	served, err := artifact.LoadManifest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(served.LinkChecks) != 1 || served.LinkChecks[0].Program != "smoke/smoke.c" || served.LinkChecks[0].Platform != "macos 11.0" {
		t.Errorf("served link record %+v, want this build's", served.LinkChecks)
	}

	tree = filepath.Join(o.Fetch.CacheDir, "artifacts", bad, "openssl-macos-arm64")
	e2e.DropLinkOnlyMember(t, tree)
	m, _ = artifact.LoadManifest(context.Background(), tree)
	if err := artifact.WriteManifest(context.Background(), tree, m); err != nil { // the hashes now agree
		t.Fatal(err)
	}
	rewriteTarball(t, tree) // and the tarball: only the link can tell
	if _, ok, err := pipeline.CacheLookup(o, bad, p); ok || err != nil {
		t.Fatalf("unlinkable entry served (err %v)", err)
	}
	if _, err := os.Stat(filepath.Join(o.Fetch.CacheDir, "artifacts", bad)); !os.IsNotExist(err) {
		t.Error("unlinkable entry was not removed")
	}
}

// TestMiniCacheHit: a second build:universal2 of the same inputs is served
// by the artifact cache, slices and merge alike, as the same bytes: every
// file verified against its manifest, every library validated again from
// its bytes, the cached tarballs checked against the verified trees and
// copied, not written again; only the link is skipped while what proved an
// entry is unchanged. An entry whose record names other rules is linked
// again; a cached tarball that does not hold the tree discards its entry,
// and the slice is built again.
func TestMiniCacheHit(t *testing.T) {
	t.Parallel()
	s := miniSettings(t, nil)
	s.Rebuild = false
	var log strings.Builder
	rt := minitest.Runtime(t, &log)
	build := func() *pipeline.Result {
		t.Helper()
		log.Reset()
		res, err := pipeline.Universal2(context.Background(), s, rt)
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		return res
	}
	if _, err := os.Stat(s.Work); err == nil {
		t.Fatal("work directory exists before the first build")
	}
	first := build()
	if strings.Contains(log.String(), "cache hit") {
		t.Fatalf("first build hit the cache:\n%s", log.String())
	}
	want := miniTarballs(t, s.Out)

	second := build()
	l := log.String()
	for _, n := range miniArtifacts {
		if !strings.Contains(l, n+": cache hit") || !strings.Contains(l, "validated from its bytes; link not run again") {
			t.Errorf("%s not served by the cache, validated, without linking again:\n%s", n, l)
		}
	}
	for _, lib := range []string{"openssl-macos-arm64: validated libcrypto.a arm64", "openssl-macos-x86-64: validated libcrypto.a x86_64", "openssl-macos-universal2: validated libcrypto.a"} {
		if !strings.Contains(l, lib) {
			t.Errorf("a hit did not validate the served libraries (%q):\n%s", lib, l)
		}
	}
	if strings.Contains(l, "configure") || strings.Contains(l, "linked ") {
		t.Errorf("a hit rebuilt or re-linked:\n%s", l)
	}
	if got := miniTarballs(t, s.Out); !equal(got, want) || second.Published.Digests.SHA256 != first.Published.Digests.SHA256 {
		t.Errorf("served tarballs %v, built %v", got, want)
	}

	// Other rules proved the entries: they are linked again.
	records, _ := filepath.Glob(filepath.Join(s.Fetch.CacheDir, "artifacts", "*", "proved.json"))
	if len(records) != 3 {
		t.Fatalf("%d proof records, want 3 (two slices, one merge)", len(records))
	}
	for _, rec := range records {
		b, _ := os.ReadFile(rec)
		var p map[string]string
		json.Unmarshal(b, &p)
		p["rules"] = "older rules"
		b, _ = json.Marshal(p)
		os.WriteFile(rec, b, 0o644)
	}
	build()
	l = log.String()
	if c := strings.Count(l, "verified, validated and linked again"); c != 3 {
		t.Errorf("%d entries linked again, want 3:\n%s", c, l)
	}
	if got := miniTarballs(t, s.Out); !equal(got, want) {
		t.Errorf("tarballs after proving again %v, want %v", got, want)
	}

	// A cached tarball that lost a byte is not the tree: the entry goes,
	// the slice is built again, and the result is the same bytes.
	tgz, _ := filepath.Glob(filepath.Join(s.Fetch.CacheDir, "artifacts", "*", "openssl-macos-arm64.tar.gz"))
	if len(tgz) != 1 {
		t.Fatalf("cached arm64 tarballs %v", tgz)
	}
	b, _ := os.ReadFile(tgz[0])
	b[len(b)/2] ^= 0xff
	os.WriteFile(tgz[0], b, 0o644)
	build()
	l = log.String()
	if !strings.Contains(l, "openssl-macos-arm64: cached artifact") || !strings.Contains(l, "discarding it and building: its tarball") {
		t.Errorf("the damaged tarball did not discard its entry:\n%s", l)
	}
	if !strings.Contains(l, "openssl-macos-arm64: configure") && !strings.Contains(l, "openssl-macos-arm64: validated libcrypto.a arm64") {
		t.Errorf("arm64 was not built again:\n%s", l)
	}
	if got := miniTarballs(t, s.Out); !equal(got, want) {
		t.Errorf("tarballs after rebuilding %v, want %v", got, want)
	}
}

// TestMiniCacheRefusesFIFOs: a FIFO in place of an entry's proved.json or
// its tarball is refused by name, opened without waiting for a writer
// (open(2) of a FIFO blocks where no context or signal reaches): the
// entry goes, the slice is built again, the same tarball is published and
// the work directory is left as it was.
func TestMiniCacheRefusesFIFOs(t *testing.T) {
	t.Parallel()
	s := miniSettings(t, nil)
	s.Rebuild = false
	var log strings.Builder
	build := func() string {
		t.Helper()
		log.Reset()
		res, err := pipeline.Slice(context.Background(), s, minitest.Runtime(t, &log), "arm64", nil)
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		if left, _ := filepath.Glob(filepath.Join(s.Work, "*-cached-*")); len(left) > 0 {
			t.Errorf("the work directory keeps what a hit copied: %v", left)
		}
		return res.Published.Digests.SHA256
	}
	want := build()
	for _, name := range []string{"proved.json", "openssl-macos-arm64.tar.gz"} {
		entries, _ := filepath.Glob(filepath.Join(s.Fetch.CacheDir, "artifacts", "*", name))
		if len(entries) != 1 {
			t.Fatalf("cache entries' %s: %v", name, entries)
		}
		os.Remove(entries[0])
		testfixture.FIFO(t, entries[0])
		got := build()
		if l := log.String(); !strings.Contains(l, "discarding it and building") || !strings.Contains(l, entries[0]+": named pipe (FIFO), expected a regular file: not read") {
			t.Errorf("a FIFO for the entry's %s was not refused by name:\n%s", name, l)
		}
		if got != want {
			t.Errorf("after a FIFO for %s: published tarball %s, built %s", name, got, want)
		}
		if fi, err := os.Lstat(entries[0]); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("the entry was not stored again: %s %v", entries[0], err)
		}
	}
}

// miniArtifacts are what a mini build:universal2 publishes.
var miniArtifacts = []string{"openssl-macos-arm64", "openssl-macos-x86-64", "openssl-macos-universal2"}

// miniTarballs are the sha256 of the published tarballs of miniArtifacts.
func miniTarballs(t *testing.T, out string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, n := range miniArtifacts {
		sum, err := ctxio.SHA256(context.Background(), filepath.Join(out, n+".tar.gz"), true)
		if err != nil {
			t.Fatal(err)
		}
		got[n] = sum
	}
	return got
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// miniO0Library is a mini libcrypto.a built at -O0 under a compiler line
// that says -O3 (the rules add -O0 after the recorded flags), with enough
// functions for the machine code to say so: what an attacker who can
// write the artifact cache puts in an entry.
func miniO0Library(t *testing.T, target string) string {
	t.Helper()
	var funcs strings.Builder
	for i := range 60 {
		fmt.Fprintf(&funcs, "int mini_f%d(int a, int b, const int *p) { int s = 0; for (int i = 0; i < a; i++) s += p[i] * b + %d; return s ^ a; }\n", i, i)
	}
	s := miniSettings(t, map[string][2]string{
		"Makefile.in":  {"MINI_EXTRA=\n", "MINI_EXTRA=-O0\n"},
		"crypto/mem.c": {"#include <stddef.h>\n", "#include <stddef.h>\n" + funcs.String()},
	})
	s.Keep = true
	if _, err := pipeline.Slice(context.Background(), s, minitest.Runtime(t, io.Discard), target, nil); err == nil {
		t.Fatal("the -O0 build was published")
	}
	libs, _ := filepath.Glob(filepath.Join(s.Work, "*", "artifact", "*", "lib", "libcrypto.a"))
	if len(libs) != 1 {
		t.Fatalf("kept -O0 libraries: %v", libs)
	}
	return libs[0]
}

// resealEntry replaces rel in the cached tree of the entry holding name
// with the file from, and reseals everything that could vouch for the
// tree: the manifest's digests, the tarball (made anew from the tree) and
// the proof record (its manifest digest).
func resealEntry(t testing.TB, cache, name, rel, from string) {
	t.Helper()
	resealManifest(t, cache, name, func(tree string, _ *artifact.Manifest) {
		testfixture.CopyFile(t, from, filepath.Join(tree, rel))
	})
}

// resealManifest is resealEntry for any edit of the entry's tree and its
// manifest (the SBOM written again from the manifest, as osslbuild does).
func resealManifest(t testing.TB, cache, name string, edit func(tree string, m *artifact.Manifest)) {
	t.Helper()
	trees, _ := filepath.Glob(filepath.Join(cache, "artifacts", "*", name))
	if len(trees) != 1 {
		t.Fatalf("cache entries of %s: %v", name, trees)
	}
	tree, entry := trees[0], filepath.Dir(trees[0])
	m, err := artifact.LoadManifest(context.Background(), tree)
	if err != nil {
		t.Fatal(err)
	}
	edit(tree, m)
	if err := sbom.Write(tree, m); err != nil {
		t.Fatal(err)
	}
	if err := artifact.WriteManifest(context.Background(), tree, m); err != nil {
		t.Fatal(err)
	}
	rewriteTarball(t, tree)
	rec := filepath.Join(entry, "proved.json")
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]string
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	p["manifest"], _ = ctxio.SHA256(context.Background(), filepath.Join(tree, artifact.ManifestName), true)
	b, _ = json.Marshal(p)
	if err := os.WriteFile(rec, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rewriteTarball makes the cache entry's tarball anew from its tree (an
// entry's tree path, .../artifacts/<key>/<name>), as its maker would.
func rewriteTarball(t testing.TB, tree string) {
	t.Helper()
	m, err := artifact.LoadManifest(context.Background(), tree)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(tree + ".tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := artifact.WriteTarball(context.Background(), tree, filepath.Base(tree), time.Unix(m.SourceDateEpoch, 0), f); err != nil {
		t.Fatal(err)
	}
}

// TestMiniCacheRefusesResealedO0: a cache entry whose libcrypto.a was
// replaced by an -O0 archive, with the manifest, the tarball and the proof
// record all resealed to match, is never published: the hit validates the
// library from its bytes, discards the entry, says why, and builds; what
// reaches -out is the genuine build's bytes. The same for a universal2
// entry (whose fat libcrypto.a gets an -O0 slice) and for its slices.
func TestMiniCacheRefusesResealedO0(t *testing.T) {
	t.Parallel()
	minitest.Require(t)
	o0 := miniO0Library(t, "arm64")
	s := miniSettings(t, nil)
	s.Rebuild = false
	rt := minitest.Runtime(t, io.Discard)
	if _, err := pipeline.Universal2(context.Background(), s, rt); err != nil {
		t.Fatal(err)
	}
	want := miniTarballs(t, s.Out)
	genuine, _ := ctxio.SHA256(context.Background(), filepath.Join(s.Out, "openssl-macos-arm64", "lib", "libcrypto.a"), true)

	t.Run("slice", func(t *testing.T) {
		resealEntry(t, s.Fetch.CacheDir, "openssl-macos-arm64", "lib/libcrypto.a", o0)
		var log strings.Builder
		out := filepath.Join(t.TempDir(), "dist")
		s := s
		s.Out = out
		res, err := pipeline.Slice(context.Background(), s, minitest.Runtime(t, &log), "arm64", nil)
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		l := log.String()
		if !strings.Contains(l, "openssl-macos-arm64: cached artifact") || !strings.Contains(l, "discarding it and building") || !strings.Contains(l, "-O0") {
			t.Errorf("the resealed entry was not discarded, naming -O0:\n%s", l)
		}
		if got, _ := ctxio.SHA256(context.Background(), filepath.Join(res.Published.Dir, "lib", "libcrypto.a"), true); got != genuine {
			t.Errorf("published libcrypto.a %s, want the genuine %s", got, genuine)
		}
		if res.Published.Digests.SHA256 != want["openssl-macos-arm64"] {
			t.Errorf("published tarball %s, want %s", res.Published.Digests.SHA256, want["openssl-macos-arm64"])
		}
	})
	t.Run("universal2", func(t *testing.T) {
		// A fat libcrypto.a with the -O0 arm64 slice, resealed in the
		// merge's entry.
		tc := testfixture.NeedToolchain(t)
		x86, _ := filepath.Glob(filepath.Join(s.Fetch.CacheDir, "artifacts", "*", "openssl-macos-x86-64", "lib", "libcrypto.a"))
		if len(x86) != 1 {
			t.Fatalf("cached x86_64 libcrypto.a: %v", x86)
		}
		fat := tc.LipoCreate(t, filepath.Join(t.TempDir(), "libcrypto.a"), x86[0], o0)
		resealEntry(t, s.Fetch.CacheDir, "openssl-macos-universal2", "lib/libcrypto.a", fat)
		var log strings.Builder
		s := s
		s.Out = filepath.Join(t.TempDir(), "dist")
		if _, err := pipeline.Universal2(context.Background(), s, minitest.Runtime(t, &log)); err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		l := log.String()
		if !strings.Contains(l, "openssl-macos-universal2: cached artifact") || !strings.Contains(l, "discarding it and building") {
			t.Errorf("the resealed universal2 entry was not discarded:\n%s", l)
		}
		if got := miniTarballs(t, s.Out); !equal(got, want) {
			t.Errorf("published %v, want the genuine %v", got, want)
		}
	})
}

// TestMiniCacheRefusesProbePayloads: the two libraries an outside probe
// resealed into an arm64 entry, with its manifest, tarball and proof
// record (#56): (a) foreign -O0 objects beside the genuine cversion object,
// (b) the genuine archive with one foreign -O0 member. Validation reads
// nothing wrong in either (the compiler line is the genuine one, the
// foreign code too little to judge); the release's own lists, read from
// its tarball, refuse both: the entry is discarded, saying why, and the
// genuine build is published. build:universal2 over such an entry builds
// the slice again and merges the genuine one; build:merge refuses a given
// slice that holds (b), naming the member.
func TestMiniCacheRefusesProbePayloads(t *testing.T) {
	t.Parallel()
	s := miniSettings(t, nil)
	s.Rebuild = false
	refusesProbePayloads(t, s, func(w io.Writer) pipeline.Runtime { return minitest.Runtime(t, w) }, "openssl-9.9.9.tar.gz", true)
}

// TestRealCacheRefusesProbePayloads is TestMiniCacheRefusesProbePayloads
// with the real 4.0.2, for the arm64 entry: the payloads made from its
// arm64 slice, the cache filled and the discarded slice built again from
// the fixtures' make cache. What is real here is the release's own lists;
// build:universal2 and build:merge refuse the slice by the same code on
// any tree, so those two are the mini tree's.
func TestRealCacheRefusesProbePayloads(t *testing.T) {
	t.Parallel()
	e2e.Require(t)
	dir := t.TempDir()
	s := e2e.Settings(t, dir)
	s.Fetch.CacheDir = filepath.Join(dir, "cache")
	revision := e2e.Runtime(t).Revision
	refusesProbePayloads(t, s, func(w io.Writer) pipeline.Runtime { return pipeline.Runtime{Log: w, Revision: revision} }, "openssl-4.0.2.tar.gz", false)
}

// refusesProbePayloads fills the artifact cache of s with the arm64
// slice (and, with whole, the x86_64 one and their merge), then reseals
// each payload into the arm64 entry and requires that nothing but the
// genuine build is published (the tests above); with whole, also by
// build:universal2 and build:merge.
func refusesProbePayloads(t *testing.T, s pipeline.Settings, runtime func(io.Writer) pipeline.Runtime, tarball string, whole bool) {
	ctx := context.Background()
	want := map[string]string{}
	var err error
	if whole {
		_, err = pipeline.Universal2(ctx, s, runtime(io.Discard))
	} else {
		_, err = pipeline.Slice(ctx, s, runtime(io.Discard), "arm64", nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	if whole {
		want = miniTarballs(t, s.Out)
	} else if want["openssl-macos-arm64"], err = ctxio.SHA256(ctx, filepath.Join(s.Out, "openssl-macos-arm64.tar.gz"), true); err != nil {
		t.Fatal(err)
	}
	a, b := e2e.Payloads(t, filepath.Join(s.Out, "openssl-macos-arm64", "lib", "libcrypto.a"), "arm64-apple-macos11")
	for _, c := range []struct{ name, lib, why string }{
		{"foreign objects", a, "symbols " + tarball + "'s .num files export for this configuration; missing"},
		{"extra member", b, "libcrypto.a(zutil.o) arm64: no object of this name is made by the build files of " + tarball},
	} {
		t.Run(c.name, func(t *testing.T) {
			resealEntry(t, s.Fetch.CacheDir, "openssl-macos-arm64", "lib/libcrypto.a", c.lib)
			var log strings.Builder
			s := s
			s.Out = filepath.Join(t.TempDir(), "dist")
			res, err := pipeline.Slice(ctx, s, runtime(&log), "arm64", nil)
			if err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			if l := log.String(); !strings.Contains(l, "openssl-macos-arm64: cached artifact") || !strings.Contains(l, "discarding it and building") || !strings.Contains(l, c.why) {
				t.Errorf("the resealed entry was not discarded, saying %q:\n%s", c.why, l)
			}
			if res.Published.Digests.SHA256 != want["openssl-macos-arm64"] {
				t.Errorf("published %s, want the genuine %s", res.Published.Digests.SHA256, want["openssl-macos-arm64"])
			}
		})
	}
	if !whole {
		return
	}
	t.Run("universal2", func(t *testing.T) {
		resealEntry(t, s.Fetch.CacheDir, "openssl-macos-arm64", "lib/libcrypto.a", b)
		var log strings.Builder
		s := s
		s.Out = filepath.Join(t.TempDir(), "dist")
		if _, err := pipeline.Universal2(ctx, s, runtime(&log)); err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		if l := log.String(); !strings.Contains(l, "openssl-macos-arm64: cached artifact") || !strings.Contains(l, "zutil.o") {
			t.Errorf("the resealed slice entry was not discarded:\n%s", l)
		}
		if got := miniTarballs(t, s.Out); !equal(got, want) {
			t.Errorf("published %v, want the genuine %v", got, want)
		}
	})
	x86 := filepath.Join(s.Out, "openssl-macos-x86-64")
	t.Run("merge", func(t *testing.T) {
		given := filepath.Join(t.TempDir(), "openssl-macos-arm64")
		if err := os.CopyFS(given, os.DirFS(filepath.Join(s.Out, "openssl-macos-arm64"))); err != nil {
			t.Fatal(err)
		}
		testfixture.CopyFile(t, b, filepath.Join(given, "lib", "libcrypto.a"))
		m, err := artifact.LoadManifest(context.Background(), given)
		if err != nil {
			t.Fatal(err)
		}
		if err := artifact.WriteManifest(ctx, given, m); err != nil {
			t.Fatal(err)
		}
		s := s
		s.Out = filepath.Join(t.TempDir(), "dist")
		_, err = pipeline.Merge(ctx, s, runtime(io.Discard), given, x86)
		if !errors.Is(err, universal.ErrRefused) || !strings.Contains(fmt.Sprint(err), "libcrypto.a(zutil.o) arm64") {
			t.Errorf("merge of a slice holding a foreign member: %v, want a refusal naming libcrypto.a(zutil.o)", err)
		}
		emptyOrMissing(t, s.Out)
	})
}

// TestMiniCacheHitStatesItsOwnSource: a hit states the release's source as
// the asking run verified it (where it came from, its signature), not as
// the run that filled the entry did (#56): an entry resealed to name
// another URL is served with the asking run's, the same bytes as on an
// empty cache.
func TestMiniCacheHitStatesItsOwnSource(t *testing.T) {
	t.Parallel()
	minitest.Require(t)
	ctx := context.Background()
	s := miniSettings(t, nil)
	s.Rebuild = false
	first, err := pipeline.Slice(ctx, s, minitest.Runtime(t, io.Discard), "arm64", nil)
	if err != nil {
		t.Fatal(err)
	}
	const elsewhere = "https://mirror.example/openssl-9.9.9.tar.gz"
	if first.Manifest.OpenSSL.URL == elsewhere {
		t.Fatal("the build already records the other URL: the test shows nothing")
	}
	resealManifest(t, s.Fetch.CacheDir, "openssl-macos-arm64", func(_ string, m *artifact.Manifest) { m.OpenSSL.URL = elsewhere })
	var log strings.Builder
	s.Out = filepath.Join(t.TempDir(), "dist")
	res, err := pipeline.Slice(ctx, s, minitest.Runtime(t, &log), "arm64", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "openssl-macos-arm64: cache hit") {
		t.Fatalf("not a hit:\n%s", log.String())
	}
	if got := res.Manifest.OpenSSL.URL; got != first.Manifest.OpenSSL.URL {
		t.Errorf("served source URL %q, want the asking run's %q", got, first.Manifest.OpenSSL.URL)
	}
	if res.Published.Digests.SHA256 != first.Published.Digests.SHA256 {
		t.Errorf("served tarball %s, built %s", res.Published.Digests.SHA256, first.Published.Digests.SHA256)
	}
}

// TestMiniCacheHitRecordsTheAskingRecipe: two byte-identical recipe files
// share cache entries, but each run publishes its own recipe's origin and
// path: the same command gives the same tarball whichever file filled the
// cache, and the same bytes as on an empty cache. Both orders, for the
// slices and the merge of a build:universal2.
func TestMiniCacheHitRecordsTheAskingRecipe(t *testing.T) {
	t.Parallel()
	minitest.Require(t)
	s := miniSettings(t, nil)
	s.Rebuild = false
	first := s.Recipe
	second := testfixture.CopyFile(t, first, filepath.Join(t.TempDir(), "copy.toml"))
	rt := minitest.Runtime(t, io.Discard)
	build := func(recipe, cache string) map[string]string {
		t.Helper()
		s := s
		s.Recipe, s.Fetch.CacheDir = recipe, cache
		s.Out = filepath.Join(t.TempDir(), "dist")
		if _, err := pipeline.Universal2(context.Background(), s, rt); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, n := range miniArtifacts {
			dir := filepath.Join(s.Out, n)
			if _, err := os.Stat(dir); err != nil {
				continue
			}
			m, err := artifact.LoadManifest(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Base(recipe); m.Recipe.Path != want || m.Recipe.Origin != "file" {
				t.Errorf("%s records recipe %+v, want file %s", n, m.Recipe, want)
			}
			got[n], _ = ctxio.SHA256(context.Background(), filepath.Join(s.Out, n+".tar.gz"), true)
		}
		return got
	}
	empty := map[string]map[string]string{}
	for _, r := range []string{first, second} {
		empty[r] = build(r, t.TempDir())
	}
	if equal(empty[first], empty[second]) {
		t.Fatalf("the two recipe paths give the same tarballs: the test shows nothing")
	}
	for _, order := range [][2]string{{first, second}, {second, first}} {
		cache := t.TempDir()
		build(order[0], cache)
		if got := build(order[1], cache); !equal(got, empty[order[1]]) {
			t.Errorf("%s after %s filled the cache gives %v, on an empty cache %v", filepath.Base(order[1]), filepath.Base(order[0]), got, empty[order[1]])
		}
	}
}

// BenchmarkCacheHit measures a cache hit of the real 4.0.2 arm64 slice
// (copy, every file against the manifest, the tarball against the tree),
// with the validation every hit now runs from the libraries' bytes (the
// rules, the machine code, the instruction set) and, side by side in the
// same run, with the entry's own records taken as they are, as a hit did
// before: the difference is what validation costs a hit.
//
//	go test -run '^$' -bench CacheHit -benchtime 10x ./internal/pipeline
func BenchmarkCacheHit(b *testing.B) {
	src := e2e.Slice(b, "arm64")
	pipeline.CacheRevision = e2e.Runtime(b).Revision
	p := plan(b, "arm64")
	o := pipeline.Settings{Work: b.TempDir()}
	o.Fetch.CacheDir, o.Fetch.Mirror, o.Fetch.Offline = b.TempDir(), testfixture.Dir(), true // the release a hit is held to
	key := strings.Repeat("cd", 32)
	if err := pipeline.CacheStore(o, key, src, p); err != nil {
		b.Fatal(err)
	}
	for _, bench := range []struct {
		name   string
		lookup func(pipeline.Settings, string, *recipe.Plan) (string, bool, error)
	}{
		{"validated", pipeline.CacheLookup},
		{"files only", pipeline.CacheLookupFilesOnly},
	} {
		b.Run(bench.name, func(b *testing.B) {
			for b.Loop() {
				dir, ok, err := bench.lookup(o, key, p)
				if !ok || err != nil {
					b.Fatalf("not served: %v", err)
				}
				os.RemoveAll(filepath.Dir(dir))
			}
		})
	}
}

// TestMachineFault: a full disk, a quota, a read-only file system or no
// descriptors left while a hit is checked keeps the entry; a mismatch, a
// missing file or a permission problem of the entry's own is the entry's.
func TestMachineFault(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&fs.PathError{Op: "write", Path: "work/lib/libcrypto.a", Err: syscall.ENOSPC}, true},
		{fmt.Errorf("copy from cache: %w", &os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.EDQUOT}), true},
		{fmt.Errorf("its tree as a tarball: %w", syscall.EROFS), true},
		{fmt.Errorf("verify: %w", syscall.EMFILE), true},
		{fmt.Errorf("verify: %w", artifact.ErrMismatch), false},
		{&fs.PathError{Op: "open", Path: "manifest.json", Err: syscall.ENOENT}, false},
		{&fs.PathError{Op: "open", Path: "lib/libssl.a", Err: syscall.EACCES}, false},
		{errors.New("its manifest is not this plan's"), false},
	} {
		if got := pipeline.MachineFault(c.err); got != c.want {
			t.Errorf("MachineFault(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// BenchmarkUniversal2Hit measures build:universal2 of the real release
// served by the artifact cache: both slice hits and the merge's, each
// verified, validated from its bytes and its tarball checked against its
// tree, then published together. The cache is filled once first (from the
// fixtures' make cache: seconds, when the fixtures are built).
//
//	go test -run '^$' -bench Universal2Hit -benchtime 10x ./internal/pipeline
func BenchmarkUniversal2Hit(b *testing.B) {
	e2e.Require(b)
	dir := b.TempDir()
	s := e2e.Settings(b, dir)
	s.Fetch.CacheDir = filepath.Join(dir, "cache")
	rt := e2e.Runtime(b)
	if _, err := pipeline.Universal2(context.Background(), s, rt); err != nil {
		b.Fatal(err)
	}
	var log strings.Builder
	rt.Log = &log
	for b.Loop() {
		log.Reset()
		b.StopTimer()
		os.RemoveAll(s.Out)
		b.StartTimer()
		if _, err := pipeline.Universal2(context.Background(), s, rt); err != nil {
			b.Fatal(err)
		}
		if n := strings.Count(log.String(), "cache hit"); n != 3 {
			b.Fatalf("%d cache hits, want 3 (both slices and the merge):\n%s", n, log.String())
		}
	}
}
