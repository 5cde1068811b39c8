package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/bump"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/internal/testsupport/bumptest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// upstream is a loopback server standing in for what a runner reaches: the
// release listing at /listing (GitHub's JSON shape, newest first) and a
// mirror at /mirror/<file>.
type upstream struct {
	srv      *httptest.Server
	mu       sync.Mutex
	listing  []string          // tag versions, newest first
	files    map[string]string // mirror file name -> path on disk
	blobs    map[string][]byte // mirror file name -> bytes
	requests []string
}

func newUpstream(t *testing.T, listing ...string) *upstream {
	u := &upstream{listing: listing, files: map[string]string{}, blobs: map[string][]byte{}}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.requests = append(u.requests, r.URL.Path)
	u.mu.Unlock()
	if r.URL.Path == "/listing" {
		var rels []map[string]any
		for _, v := range u.listing {
			rels = append(rels, map[string]any{"tag_name": "openssl-" + v, "draft": false, "prerelease": false})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(rels)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/mirror/")
	u.mu.Lock()
	file, isFile := u.files[name]
	blob, isBlob := u.blobs[name]
	u.mu.Unlock()
	switch {
	case ok && isFile:
		http.ServeFile(w, r, file)
	case ok && isBlob:
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(blob))
	default:
		http.NotFound(w, r)
	}
}

// serve puts a fixture's tarball and signature in the mirror as release as
// (the fixture's own version, or another one: a relabelled release).
func (u *upstream) serveAs(fx testfixture.Release, as string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.files["openssl-"+as+".tar.gz"] = fx.Tarball
	u.files["openssl-"+as+".tar.gz.asc"] = fx.Signature
}

func (u *upstream) tampered(t *testing.T, fx testfixture.Release) {
	b, err := os.ReadFile(fx.Tarball)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	u.mu.Lock()
	defer u.mu.Unlock()
	u.blobs["openssl-"+fx.Version+".tar.gz"] = b
	u.files["openssl-"+fx.Version+".tar.gz.asc"] = fx.Signature
}

func (u *upstream) requested() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.requests)
}

// standIn is bumptest.StandIn with older's upstream URLs.
func standIn(t *testing.T, text, real, older string) string {
	t.Helper()
	return bumptest.StandIn(t, text, real, older, bump.UpstreamURLs(older))
}

// loopbackOnly fails the test on any request that is not for the test's
// server: every source these tests mean to use is on loopback, and a
// request elsewhere (the upstream URLs a failed mirror falls back to) would
// depend on the internet.
type loopbackOnly struct{ t *testing.T }

func (l loopbackOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if h, _, _ := net.SplitHostPort(r.URL.Host); h != "127.0.0.1" {
		l.t.Errorf("request to %s: not the loopback upstream", r.URL)
		return nil, errors.New("not on loopback")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// inDir writes text as recipes/openssl.toml under a fresh directory, makes
// that the working directory (as the repository root is in the workflow)
// and returns it.
func inDir(t *testing.T, text string) string {
	t.Helper()
	if _, err := recipe.Parse("test", []byte(text)); err != nil {
		t.Fatalf("test recipe is invalid: %v", err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "recipes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bump.DefaultRecipe), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return dir
}

// proposalsRun runs the program as the workflow does, against u.
func proposalsRun(t *testing.T, u *upstream, env map[string]string) (out string, log string, err error) {
	t.Helper()
	transport = loopbackOnly{t}
	t.Cleanup(func() { transport = nil })
	out = filepath.Join(t.TempDir(), "proposals")
	getenv := func(k string) string {
		if k == "OSSLBUILD_MIRROR" {
			return u.srv.URL + "/mirror"
		}
		return env[k]
	}
	var buf bytes.Buffer
	err = run(context.Background(), []string{"-out", out, "-listing", u.srv.URL + "/listing"}, getenv, &buf)
	return out, buf.String(), err
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func assertUnchanged(t *testing.T, dir, want string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, bump.DefaultRecipe))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("the recipe was written:\n%s", bump.UnifiedDiff("want", "got", want, string(got)))
	}
}

func assertContains(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}

// TestOneSeriesNewer: the recipe's newest 3.5 release is 3.5.6, and the
// listing and mirror hold the real 3.5.7; 4.0 and 3.0 have nothing newer.
// Exactly one proposal is written, for 3.5: a recipe whose diff is the
// recipe.diff beside it (checked with git apply), a title, a commit message
// and a body naming the sha256, size, signer, signature and URLs. The
// other series are only logged, and nothing of theirs is downloaded.
func TestOneSeriesNewer(t *testing.T) {
	fx := testfixture.Get(t, "3.5.7")
	before := standIn(t, bumptest.RepoRecipe(t), "3.5.7", "3.5.6")
	dir := inDir(t, before)
	u := newUpstream(t, "4.0.2", "3.6.3", "3.5.7", "3.5.6", "3.0.22", "3.0.20")
	u.serveAs(fx, "3.5.7")

	out, log, err := proposalsRun(t, u, nil)
	if err != nil {
		t.Fatalf("run: %v\nlog:\n%s", err, log)
	}
	assertUnchanged(t, dir, before)
	if got := entries(t, out); !slices.Equal(got, []string{"3.5"}) {
		t.Fatalf("%s holds %v, want exactly one proposal, 3.5", out, got)
	}
	p := filepath.Join(out, "3.5")
	if got, want := entries(t, p), []string{bump.ProposalBody, bump.ProposalCommit, bump.ProposalRecipe, bump.ProposalFacts, bump.ProposalDiff, bump.ProposalTitle}; !slices.Equal(got, want) {
		t.Errorf("%s holds %v, want %v", p, got, want)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(p, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	// The proposed recipe: 3.5.7 added with the fixture's pins, default kept.
	proposed := read(bump.ProposalRecipe)
	r, err := recipe.Parse("proposed", []byte(proposed))
	if err != nil {
		t.Fatalf("proposed recipe: %v", err)
	}
	if got := r.Versions(); !slices.Equal(got, []string{"4.0.2", "3.6.3", "3.5.7", "3.5.6", "3.0.22", "3.0.20"}) {
		t.Errorf("proposed recipe's releases: %v", got)
	}
	rel, err := r.Release("3.5.7")
	if err != nil || rel.SHA256 != fx.SHA256 || rel.Size != fx.Size || !slices.Equal(rel.URLs, bump.UpstreamURLs("3.5.7")) || len(rel.Signers) != 1 {
		t.Errorf("proposed release 3.5.7 = %+v, %v", rel, err)
	}
	if r.Default != "4.0.2" {
		t.Errorf("default = %s; a 3.5 release must not move it from 4.0.2", r.Default)
	}

	// The diff turns the recipe into the proposed one.
	diff := read(bump.ProposalDiff)
	cmd := exec.Command("git", "apply", "-p0", "--unidiff-zero", filepath.Join(p, bump.ProposalDiff))
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply %s: %v\n%s", bump.ProposalDiff, err, b)
	}
	assertUnchanged(t, dir, proposed)

	signer := rel.Signers[0]
	assertContains(t, "title", read(bump.ProposalTitle), "recipe: OpenSSL 3.5.7 (3.5 series)\n")
	assertContains(t, "proposal.json", read(bump.ProposalFacts), `"series": "3.5"`, `"pinned": "3.5.6"`, `"version": "3.5.7"`)
	assertContains(t, "body", read(bump.ProposalBody),
		"OpenSSL **3.5.7** is the newest 3.5 release",
		"the recipe's newest 3.5 release is 3.5.6",
		"| sha256 | `"+fx.SHA256+"` |",
		fmt.Sprintf("| tarball | `openssl-3.5.7.tar.gz`, %d bytes |", fx.Size),
		"| downloaded from | "+u.srv.URL+"/mirror/openssl-3.5.7.tar.gz |",
		"| signature | "+u.srv.URL+"/mirror/openssl-3.5.7.tar.gz.asc, made ",
		"| signer | `"+signer+"` (OpenSSL &lt;openssl@openssl.org&gt;), pinned in `keys/`",
		"| top-level directory | `openssl-3.5.7/` |",
		"| version file | `openssl-3.5.7/VERSION.dat` says 3.5.7 |",
		"| default | stays 4.0.2 |",
		"- "+bump.UpstreamURLs("3.5.7")[0]+"\n- "+bump.UpstreamURLs("3.5.7")[1]+"\n",
		"```diff\n"+diff+"```\n",
		"go tool mage recipe:bump 3.5.7 -dryrun")
	assertContains(t, "commit message", read(bump.ProposalCommit),
		"recipe: OpenSSL 3.5.7 (3.5 series)\n\n", "sha256 "+fx.SHA256, "by "+signer)
	assertContains(t, "log", log,
		"series 4.0: newest release 4.0.2 is in the recipe; nothing to do",
		"series 3.0: newest release 3.0.22 is in the recipe; nothing to do",
		"series 3.5: 3.5.7 is newer than the recipe's 3.5.6; verifying it",
		"series 3.5: proposing 3.5.7")
	for _, req := range u.requested() {
		if req != "/listing" && !strings.Contains(req, "openssl-3.5.7.") {
			t.Errorf("requested %s: only the listing and 3.5.7 are needed", req)
		}
	}
}

// TestRefused: a newer release that fails a check is not proposed: nothing
// is written, the recipe is untouched, the log and the error say why and
// name the series, and in GitHub Actions the reason is an error annotation.
func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		recipe  func(t *testing.T) string
		listing []string
		serve   func(t *testing.T, u *upstream)
		want    error
		log     []string
	}{{
		name:    "bad signature",
		recipe:  func(t *testing.T) string { return standIn(t, bumptest.RepoRecipe(t), "3.5.7", "3.5.6") },
		listing: []string{"4.0.2", "3.6.3", "3.5.7", "3.5.6", "3.0.22"},
		serve:   func(t *testing.T, u *upstream) { u.tampered(t, testfixture.Get(t, "3.5.7")) },
		want:    signature.ErrBadSignature,
		log:     []string{"series 3.5: nothing proposed: bump 3.5.7: refusing openssl-3.5.7.tar.gz from ", "bad signature"},
	}, {
		// The genuine 3.5.7 served as 3.5.8: the recipe pins its sha256.
		name:    "older release relabelled, pinned",
		recipe:  bumptest.RepoRecipe,
		listing: []string{"4.0.2", "3.6.3", "3.5.8", "3.5.7", "3.0.22"},
		serve:   func(t *testing.T, u *upstream) { u.serveAs(testfixture.Get(t, "3.5.7"), "3.5.8") },
		want:    bump.ErrRelabelled,
		log:     []string{"series 3.5: nothing proposed: bump 3.5.8: refusing openssl-3.5.8.tar.gz from ", "is OpenSSL 3.5.7 in recipes/openssl.toml, so it cannot be OpenSSL 3.5.8"},
	}, {
		// The same, to a recipe that does not pin 3.5.7: the signature
		// verifies, the tarball's top-level directory gives it away.
		name:    "older release relabelled, not pinned",
		recipe:  func(t *testing.T) string { return standIn(t, bumptest.RepoRecipe(t), "3.5.7", "3.5.6") },
		listing: []string{"4.0.2", "3.6.3", "3.5.8", "3.5.6", "3.0.22"},
		serve:   func(t *testing.T, u *upstream) { u.serveAs(testfixture.Get(t, "3.5.7"), "3.5.8") },
		want:    source.ErrIdentity,
		log:     []string{"series 3.5: signature ", `top-level directory "openssl-3.5.7/", want "openssl-3.5.8/"`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.recipe(t)
			dir := inDir(t, before)
			u := newUpstream(t, tc.listing...)
			tc.serve(t, u)
			out, log, err := proposalsRun(t, u, map[string]string{"GITHUB_ACTIONS": "true"})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v\nlog:\n%s", err, tc.want, log)
			}
			if !strings.HasPrefix(err.Error(), "series 3.5: ") {
				t.Errorf("error does not start with the series: %v", err)
			}
			assertContains(t, "log", log, tc.log...)
			assertContains(t, "log", log, "\n::error title=recipe-bump::series 3.5: ", "series 4.0: newest release 4.0.2 is in the recipe; nothing to do")
			if got := entries(t, out); len(got) != 0 {
				t.Errorf("%s holds %v, want nothing", out, got)
			}
			assertUnchanged(t, dir, before)
		})
	}
}

// TestNothingNew: every series' newest release is pinned: no proposal, no
// error, one quiet line per series, and only the listing is read.
func TestNothingNew(t *testing.T) {
	before := bumptest.RepoRecipe(t)
	dir := inDir(t, before)
	u := newUpstream(t, "4.0.2", "3.6.3", "3.6.0", "3.5.7", "3.4.2", "3.0.22", "3.0.20")
	out, log, err := proposalsRun(t, u, nil)
	if err != nil {
		t.Fatalf("run: %v\nlog:\n%s", err, log)
	}
	if got := entries(t, out); len(got) != 0 {
		t.Errorf("%s holds %v, want nothing", out, got)
	}
	assertUnchanged(t, dir, before)
	assertContains(t, "log", log, "series 4.0: newest release 4.0.2 is in the recipe; nothing to do",
		"series 3.6: newest release 3.6.3 is in the recipe; nothing to do",
		"series 3.5: newest release 3.5.7 is in the recipe; nothing to do",
		"series 3.0: newest release 3.0.22 is in the recipe; nothing to do",
		"no series has a newer release")
	if strings.Contains(log, "series 3.4") {
		t.Errorf("3.4, older than the newest pinned series and not pinned, was considered:\n%s", log)
	}
	if got := u.requested(); !slices.Equal(got, []string{"/listing"}) {
		t.Errorf("requests %v, want the listing only", got)
	}
}

// TestListingUnreachable: with no listing there is no newest release to
// know; the run fails saying so, naming the URL, and writes nothing.
func TestListingUnreachable(t *testing.T) {
	before := bumptest.RepoRecipe(t)
	dir := inDir(t, before)
	u := newUpstream(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	gone := closed.URL + "/listing"
	closed.Close()

	transport = loopbackOnly{t}
	t.Cleanup(func() { transport = nil })
	out := filepath.Join(t.TempDir(), "proposals")
	var log bytes.Buffer
	err := run(context.Background(), []string{"-out", out, "-listing", gone},
		func(k string) string { return map[string]string{"OSSLBUILD_MIRROR": u.srv.URL + "/mirror"}[k] }, &log)
	if !errors.Is(err, bump.ErrListing) {
		t.Fatalf("err = %v, want ErrListing", err)
	}
	assertContains(t, "error", err.Error(), "cannot read the release listing "+gone+"?per_page=100: unreachable: ", "the newest release of a series is unknown")
	assertContains(t, "log", log.String(), "release listing: cannot read the release listing "+gone)
	if got := entries(t, out); len(got) != 0 {
		t.Errorf("%s holds %v, want nothing", out, got)
	}
	assertUnchanged(t, dir, before)
}

func TestArguments(t *testing.T) {
	inDir(t, bumptest.RepoRecipe(t))
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "3.5"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, "-out is required"},
		{[]string{"-out", full}, nil, "not empty"},
		{[]string{"-out", t.TempDir(), "extra"}, nil, `unexpected argument "extra"`},
		{[]string{"-out", t.TempDir(), "-series", "3.4"}, nil, `series "3.4": recipes/openssl.toml pins no release of it`},
		{[]string{"-out", t.TempDir()}, map[string]string{"OSSLBUILD_OFFLINE": "1"}, "offline mode is on"},
		{[]string{"-out", t.TempDir()}, map[string]string{"OSSLBUILD_OFFLINE": "maybe"}, "OSSLBUILD_OFFLINE"},
	} {
		var log bytes.Buffer
		err := run(context.Background(), tc.args, func(k string) string { return tc.env[k] }, &log)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %v %v: err = %v, want %q", tc.args, tc.env, err, tc.want)
		}
	}
}

// TestNewSeries: upstream has a series newer than any the recipe pins (the
// recipe here stops at 3.6; the listing and mirror hold the real 4.0.2).
// It is proposed as its own change, titled as a new series, and the
// default stays where it was although 4.0.2 is newer than it.
func TestNewSeries(t *testing.T) {
	fx := testfixture.Get(t, "4.0.2")
	text := bumptest.RepoRecipe(t)
	start := strings.Index(text, "[[release]]\nversion = \"4.0.2\"")
	end := strings.Index(text[start+1:], "[[release]]") + start + 1
	if start < 0 || end <= start {
		t.Fatal("no 4.0.2 block in the recipe")
	}
	text = strings.Replace(text[:start]+text[end:], `default = "4.0.2"`, `default = "3.5.7"`, 1)
	dir := inDir(t, text)
	u := newUpstream(t, "4.0.2", "3.6.3", "3.5.7", "3.0.22", "3.0.20")
	u.serveAs(fx, "4.0.2")

	out, log, err := proposalsRun(t, u, nil)
	if err != nil {
		t.Fatalf("run: %v\nlog:\n%s", err, log)
	}
	assertUnchanged(t, dir, text)
	if got := entries(t, out); !slices.Equal(got, []string{"4.0"}) {
		t.Fatalf("%s holds %v, want one proposal, 4.0", out, got)
	}
	b, err := os.ReadFile(filepath.Join(out, "4.0", bump.ProposalRecipe))
	if err != nil {
		t.Fatal(err)
	}
	r, err := recipe.Parse("proposed", b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Default != "3.5.7" {
		t.Errorf("default moved to %s; a new series must not move it", r.Default)
	}
	if _, err := r.Release("4.0.2"); err != nil {
		t.Error(err)
	}
	title, _ := os.ReadFile(filepath.Join(out, "4.0", bump.ProposalTitle))
	assertContains(t, "title", string(title), "recipe: OpenSSL 4.0.2 (new 4.0 series)")
	body, _ := os.ReadFile(filepath.Join(out, "4.0", bump.ProposalBody))
	assertContains(t, "body", string(body), "a series newer than any the recipe pins", "which stays 3.5.7", "| default | stays 3.5.7 |")
	assertContains(t, "log", log, "series 4.0: a new series upstream, newest release 4.0.2")
}
