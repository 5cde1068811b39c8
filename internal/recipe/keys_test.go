package recipe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/lifecycle"
	"github.com/osslbuild/osslbuild/internal/osslver"
	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/internal/testsupport/sigtest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/keys"
)

// keyedRecipe writes a consumer's recipe into a fresh directory: pyca's
// example with release_keys (the text given) and, when release is set, a
// [[release]] signed by signer; files are written beside it.
func keyedRecipe(t *testing.T, releaseKeys string, files map[string][]byte, release, signer string) string {
	t.Helper()
	b, err := os.ReadFile("../../recipes/examples/pyca-infra.toml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	text := strings.Replace(string(b), "schema = 1\n", "schema = 1\n\n"+releaseKeys+"\n", 1)
	if release != "" {
		text = strings.Replace(text, "schema = 1\n", "schema = 1\ndefault = \""+release+"\"\n", 1)
		text += fmt.Sprintf(`
[[release]]
version = "%[1]s"
sha256 = "%[2]s"
size = 55235667
urls = ["https://github.com/openssl/openssl/releases/download/openssl-%[1]s/openssl-%[1]s.tar.gz"]
signers = ["%[3]s"]
`, release, strings.Repeat("ab", 32), signer)
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "cryptography-macos", "osslbuild.toml")
	testfixture.WriteTree(t, dir, map[string]string{"cryptography-macos/osslbuild.toml": text})
	return p
}

// TestReleaseKeys: a recipe's release_keys are read from beside it, each
// held to the fingerprint the recipe writes, and sign its releases, listed
// (signers may name them) and unlisted (Resolve allows them with
// osslbuild's).
func TestReleaseKeys(t *testing.T) {
	k := sigtest.NewKey(t, "OpenSSL next")
	p := keyedRecipe(t, fmt.Sprintf(`release_keys = [
  { path = "keys/openssl-next.asc", fingerprint = %q },
]`, k.Fingerprint()), map[string][]byte{"cryptography-macos/keys/openssl-next.asc": k.Armored(t)}, "4.0.3", k.Fingerprint())
	r, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Keys) != 1 {
		t.Fatalf("keys %+v", r.Keys)
	}
	got := r.Keys[0]
	want, err := signature.NewKey(k.Fingerprint(), signature.OriginRecipe, "keys/openssl-next.asc", k.Armored(t))
	if err != nil {
		t.Fatal(err)
	}
	if got.Fingerprint != want.Fingerprint || got.Origin != "recipe" || got.Path != "keys/openssl-next.asc" || got.SHA256 != want.SHA256 {
		t.Errorf("key %+v, want %+v", got, want)
	}
	rel, listed, err := r.Resolve("4.0.3", "")
	if err != nil || !listed || len(rel.Keys) != 1 || !slices.Equal(rel.Signers, []string{k.Fingerprint()}) {
		t.Errorf("listed 4.0.3: %+v %v %v", rel, listed, err)
	}
	rel, listed, err = r.Resolve("4.0.4", strings.Repeat("cd", 32))
	if err != nil || listed || len(rel.Keys) != 1 || !slices.Equal(rel.Signers, append(keys.Fingerprints(), k.Fingerprint())) {
		t.Errorf("unlisted 4.0.4: signers %v keys %d, %v %v", rel.Signers, len(rel.Keys), listed, err)
	}
	// The plan carries them to the build.
	plan, err := r.PlanFor(rel, "arm64", nil)
	if err != nil || len(plan.Release.Keys) != 1 {
		t.Errorf("plan: %v", err)
	}
}

// TestReleaseKeysRefused: a release key that is not what the recipe says
// is refused at the line that says it, before anything is fetched: a file
// holding another key (a swapped file), a missing or unreadable file, a
// path outside the recipe's directory, a short or spaced fingerprint, a key
// twice, and a signer neither osslbuild nor the recipe pins.
func TestReleaseKeysRefused(t *testing.T) {
	k, other := sigtest.NewKey(t, "OpenSSL next"), sigtest.NewKey(t, "someone else")
	entry := func(path, fpr string) string {
		return fmt.Sprintf("release_keys = [\n  { path = %q, fingerprint = %q },\n]", path, fpr)
	}
	files := map[string][]byte{"cryptography-macos/keys/next.asc": k.Armored(t), "cryptography-macos/keys/other.asc": other.Armored(t),
		"outside.asc": k.Armored(t), "cryptography-macos/keys/not-a-key.asc": []byte("-----BEGIN PGP SIGNATURE-----\n\nxA==\n-----END PGP SIGNATURE-----\n")}
	for _, tt := range []struct {
		name, keys, signer string
		field, why         string
	}{
		{"swapped file", entry("keys/other.asc", k.Fingerprint()), "", "release_keys[0].fingerprint",
			"the file keys/other.asc holds the primary key " + other.Fingerprint() + ", not " + k.Fingerprint() + ": a swapped file or a wrong fingerprint"},
		{"missing file", entry("keys/none.asc", k.Fingerprint()), "", "release_keys[0].path", "no such file"},
		{"not a key", entry("keys/not-a-key.asc", k.Fingerprint()), "", "release_keys[0].path", "want PGP PUBLIC KEY BLOCK"},
		{"directory", entry("keys", k.Fingerprint()), "", "release_keys[0].path", "a directory"},
		{"outside the recipe's directory", entry("../outside.asc", k.Fingerprint()), "", "release_keys[0].path", "inside its directory"},
		{"absolute", entry("/etc/passwd", k.Fingerprint()), "", "release_keys[0].path", "relative to the recipe"},
		{"short fingerprint", entry("keys/next.asc", k.Fingerprint()[24:]), "", "release_keys[0].fingerprint", "40 upper-case hex digits"},
		{"spaced fingerprint", entry("keys/next.asc", k.Fingerprint()[:4]+" "+k.Fingerprint()[4:]), "", "release_keys[0].fingerprint", "without spaces"},
		{"twice", "release_keys = [\n  { path = \"keys/next.asc\", fingerprint = \"" + k.Fingerprint() + "\" },\n  { path = \"keys/next.asc\", fingerprint = \"" + other.Fingerprint() + "\" },\n]", "",
			"release_keys[1].path", "keys/next.asc given twice"},
		{"signer nobody pins", entry("keys/next.asc", k.Fingerprint()), other.Fingerprint(), "release 4.0.3.signers[0]", "nor in the recipe's release_keys (" + k.Fingerprint() + ")"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			release := ""
			if tt.signer != "" {
				release = "4.0.3"
			}
			p := keyedRecipe(t, tt.keys, files, release, tt.signer)
			_, err := Load(p)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("want ErrInvalid, got %v", err)
			}
			b, _ := os.ReadFile(p)
			at := tt.keys
			if tt.signer != "" {
				at = "signers = [\"" + tt.signer
			} else if strings.HasSuffix(tt.field, "[1].path") {
				at = strings.Split(tt.keys, "\n")[2]
			} else {
				at = strings.Split(tt.keys, "\n")[1]
			}
			where := fmt.Sprintf("%s:%d: %s", p, lineOf(t, string(b), at), tt.field)
			if !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("error does not say %q and %q:\n%v", where, tt.why, err)
			}
		})
	}
}

// TestKnownNotPinned: the releases osslbuild's recipe lists as known and
// not pinned are newer than every release it pins of their series, of
// series the lifecycle table knows, with a sha256 and a size; and the
// header says where the digests come from and why they are not pinned.
func TestKnownNotPinned(t *testing.T) {
	b, err := os.ReadFile("../../recipes/openssl.toml")
	if err != nil {
		t.Fatal(err)
	}
	r := mustLoad(t)
	known := KnownReleases(b)
	if len(known) == 0 {
		t.Fatal("recipes/openssl.toml lists no known, unpinned release")
	}
	for _, k := range known {
		if _, err := r.Release(k.Version); err == nil {
			t.Errorf("line %d: %s is listed as not pinned, and the recipe pins it (recipe:bump drops the line)", k.Line, k.Version)
		}
		s, ok := lifecycle.Of(k.Version)
		if !ok {
			t.Errorf("line %d: %s: series not in internal/lifecycle", k.Line, k.Version)
		}
		for _, v := range r.Versions() {
			if vs, _ := osslver.SeriesOf(v); vs == s.Name && !osslver.Less(osslver.MustParse(v), osslver.MustParse(k.Version)) {
				t.Errorf("line %d: %s is not newer than the pinned %s of its series", k.Line, k.Version, v)
			}
		}
		if k.Size <= 0 || len(k.SHA256) != 64 {
			t.Errorf("line %d: %+v", k.Line, k)
		}
	}
	for _, want := range []string{"Debian's\n# Sources index", "Debian's pool answers 404 for these\n# tarballs and their signatures"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the header does not say %q", want)
		}
	}
}

func TestKnownReleases(t *testing.T) {
	text := "# not pinned: 4.0.3 sha256 " + strings.Repeat("a", 64) + " 55235667 bytes\r\n" +
		"#not pinned:  1.1.1w  sha256 " + strings.Repeat("b", 64) + "  1 bytes (an old one)\n" +
		"# not pinned: 4.0.4 sha256 " + strings.Repeat("c", 63) + " 5 bytes\n" + // short digest: not a line
		"not pinned: 4.0.5 sha256 " + strings.Repeat("d", 64) + " 5 bytes\n" // not a comment
	got := KnownReleases([]byte(text))
	want := []Known{{"4.0.3", strings.Repeat("a", 64), 55235667, 1}, {"1.1.1w", strings.Repeat("b", 64), 1, 2}}
	if !slices.Equal(got, want) {
		t.Errorf("KnownReleases = %+v, want %+v", got, want)
	}
}
