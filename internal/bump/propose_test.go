package bump

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/internal/testsupport/bumptest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// standIn is bumptest.StandIn with older's upstream URLs.
func standIn(t *testing.T, text, real, older string) string {
	t.Helper()
	return bumptest.StandIn(t, text, real, older, UpstreamURLs(older))
}

func listingOf(versions ...string) []byte {
	var parts []string
	for _, v := range versions {
		parts = append(parts, `{"tag_name": "openssl-`+v+`", "draft": false, "prerelease": false}`)
	}
	return []byte("[" + strings.Join(parts, ",") + "]")
}

func TestSeriesOf(t *testing.T) {
	r, err := recipe.Parse("test", []byte(bumptest.RepoRecipe(t)))
	if err != nil {
		t.Fatal(err)
	}
	if got := SeriesOf(r); !slices.Equal(got, []string{"4.0", "3.6", "3.5", "3.0"}) {
		t.Errorf("SeriesOf = %v", got)
	}
}

// TestProposeSeriesIndependent: 4.0.2 (genuine) is newer than the recipe's
// 4.0.1 and 3.5.7 (tampered) newer than its 3.5.6. The 4.0 proposal is
// made, moving the default; 3.5 is refused with the reason; 3.0 has nothing
// new. Only the 4.0 proposal is written.
func TestProposeSeriesIndependent(t *testing.T) {
	fx := testfixture.Get(t, "4.0.2")
	bad := testfixture.Get(t, "3.5.7")
	text := withDefault(t, standIn(t, standIn(t, bumptest.RepoRecipe(t), "4.0.2", "4.0.1"), "3.5.7", "3.5.6"), "4.0.1")
	path := writeRecipe(t, text)
	n := newFakeNet(t)
	n.blob(DefaultListingURL, listingOf("4.0.2", "4.0.1", "3.6.3", "3.5.7", "3.5.6", "3.0.22"), "application/json")
	n.release("4.0.2", fx.Tarball, fx.Signature)
	data, err := os.ReadFile(bad.Tarball)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/3] ^= 0x80
	u := UpstreamURLs("3.5.7")[0]
	n.blob(u, data, "application/octet-stream")
	n.file(u+".asc", bad.Signature)

	var log bytes.Buffer
	staging := t.TempDir()
	ps, err := Propose(context.Background(), ProposeOptions{Options: Options{Recipe: path, Fetch: fetch.Options{Transport: n}, TempDir: staging, Log: &log}})
	if !errors.Is(err, signature.ErrBadSignature) || !strings.HasPrefix(err.Error(), "series 3.5: bump 3.5.7: refusing openssl-3.5.7.tar.gz from "+u+": ") {
		t.Errorf("err = %v, want series 3.5's bad signature", err)
	}
	if len(ps) != 1 || ps[0].Series != "4.0" || ps[0].Release.Version != "4.0.2" || ps[0].Pinned != "4.0.1" {
		t.Fatalf("proposals %+v, want one: 4.0.2 for series 4.0", ps)
	}
	p := ps[0]
	if p.Written || p.NewDefault != "4.0.2" || p.OldDefault != "4.0.1" || p.Release.SHA256 != fx.SHA256 || p.Signature.Signer != currentKey {
		t.Errorf("proposal: written %v, default %s -> %s, sha256 %s, signer %s", p.Written, p.OldDefault, p.NewDefault, p.Release.SHA256, p.Signature.Signer)
	}
	if want := "recipe: OpenSSL 4.0.2 (4.0 series), the new default"; p.Title() != want {
		t.Errorf("title %q, want %q", p.Title(), want)
	}
	body := p.Body()
	for _, want := range []string{
		"| default | 4.0.1 → **4.0.2** |",
		"| signer | `" + currentKey + "` (OpenSSL &lt;openssl@openssl.org&gt;), pinned in `keys/`; signing subkey `C46ED3F2CBEFDA1FDAADA44264ED7B1DCCE71CB2` |",
		"| downloaded from | " + UpstreamURLs("4.0.2")[0] + " |",
		"-default = \"4.0.1\"\n+default = \"4.0.2\"\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	assertFile(t, path, text)
	assertEmpty(t, staging)
	for _, want := range []string{
		"series 3.5: nothing proposed: bump 3.5.7: refusing",
		"series 4.0: proposing 4.0.2",
		"series 3.0: newest release 3.0.22 is in the recipe; nothing to do",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}

	out := filepath.Join(t.TempDir(), "out")
	if err := WriteProposals(out, ps); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(out)
	if len(ents) != 1 || ents[0].Name() != "4.0" {
		t.Errorf("%s holds %v, want 4.0 only", out, ents)
	}
	got, err := os.ReadFile(filepath.Join(out, "4.0", ProposalRecipe))
	if err != nil || !bytes.Equal(got, p.After) {
		t.Errorf("written recipe differs from the proposal's (%v)", err)
	}
	// A second write into the same directory refuses, leaving it as it was.
	if err := WriteProposals(out, ps); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second WriteProposals: %v, want already exists", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Errorf("%s holds %v after a refused write", out, ents)
	}
}

// TestProposeListingBehind: a listing whose newest 3.0 is older than the
// recipe's proposes nothing and downloads nothing.
func TestProposeListingBehind(t *testing.T) {
	path := writeRecipe(t, bumptest.RepoRecipe(t))
	n := newFakeNet(t)
	n.blob(DefaultListingURL, listingOf("4.0.2", "3.5.7", "3.0.20"), "application/json")
	var log bytes.Buffer
	ps, err := Propose(context.Background(), ProposeOptions{Options: Options{Recipe: path, Fetch: fetch.Options{Transport: n}, Log: &log}, Series: []string{"3.0"}})
	if err != nil || len(ps) != 0 {
		t.Fatalf("Propose = %v, %v; want nothing", ps, err)
	}
	if want := "series 3.0: the recipe's 3.0.22 is newer than the listing's newest, 3.0.20; nothing to do"; !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, log.String())
	}
	if got := n.requested(); len(got) != 1 {
		t.Errorf("requests %v, want the listing only", got)
	}
}

// TestProposeNoSeriesInListing: a pinned series the listing does not list
// at all is an error (ErrNoRelease), not a quiet "nothing new".
func TestProposeNoSeriesInListing(t *testing.T) {
	path := writeRecipe(t, bumptest.RepoRecipe(t))
	n := newFakeNet(t)
	n.blob(DefaultListingURL, listingOf("4.0.2", "3.5.7"), "application/json")
	ps, err := Propose(context.Background(), ProposeOptions{Options: Options{Recipe: path, Fetch: fetch.Options{Transport: n}}})
	if !errors.Is(err, ErrNoRelease) || !strings.Contains(err.Error(), "series 3.0: no release found in the release listing "+DefaultListingURL) || len(ps) != 0 {
		t.Errorf("Propose = %v, %v; want ErrNoRelease for 3.0", ps, err)
	}
}
