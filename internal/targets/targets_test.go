package targets

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/recipes"
)

func ptr[T any](v T) *T { return &v }

func TestBuildSettings(t *testing.T) {
	pyca := "no-zlib no-shared no-module no-comp no-apps no-docs no-sm2-precomp no-atexit enable-ec_nistp_64_gcc_128"
	for _, tt := range []struct {
		name                  string
		version, sha, options *string
		wantVersion           string
		wantOptions           []string
		err                   string
	}{
		{"nothing given", nil, nil, nil, "", nil, ""},
		{"pyca's version form", ptr("openssl-4.0.1"), ptr(" " + strings.Repeat("ab", 32) + "\n"), nil, "4.0.1", nil, ""},
		{"pyca's flags", ptr("4.0.2"), nil, ptr(pyca), "4.0.2", strings.Fields(pyca), ""},
		{"bad version", ptr("4.0"), nil, nil, "", nil, "-version: OpenSSL version \"4.0\""},
		{"flag as option", nil, nil, ptr("no-zlib -march=native"), "", nil, `-options: option "-march=native": a compiler flag`},
		{"empty options", nil, nil, ptr(" "), "", nil, "-options: options \" \": no options given"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Flags{Version: tt.version, SHA256: tt.sha, Options: tt.options}.BuildSettings()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				if strings.HasPrefix(tt.err, "-options") && !errors.Is(err, recipe.ErrOption) {
					t.Errorf("err %v is not recipe.ErrOption", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Version != tt.wantVersion || !slices.Equal(s.Options, tt.wantOptions) || (tt.options == nil) != (s.Options == nil) {
				t.Errorf("version %q options %q", s.Version, s.Options)
			}
			if tt.sha != nil && s.SHA256 != strings.TrimSpace(*tt.sha) {
				t.Errorf("sha256 %q", s.SHA256)
			}
		})
	}
}

func TestDoneWritesOutputs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "github_output")
	os.WriteFile(out, []byte("earlier=step\n"), 0o644)
	t.Setenv("GITHUB_OUTPUT", out)
	res := &pipeline.Result{Published: &artifact.Published{
		Dir: filepath.Join(dir, "dist", "openssl-macos-arm64"), Tarball: filepath.Join(dir, "dist", "openssl-macos-arm64.tar.gz"),
		Digests: artifact.Digests{SHA256: strings.Repeat("cd", 32)},
	}}
	if err := Done(res, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	want := "earlier=step\nartifact-dir=" + res.Published.Dir + "\nsha256=" + strings.Repeat("cd", 32) + "\ntarball=" + res.Published.Tarball + "\n"
	if string(b) != want {
		t.Errorf("GITHUB_OUTPUT:\n%s\nwant:\n%s", b, want)
	}
	// A failed build writes nothing and keeps its error.
	boom := errors.New("boom")
	if err := Done(nil, boom); !errors.Is(err, boom) || err.Error() != "boom" {
		t.Errorf("Done(nil, err) = %v", err)
	}
	if err := WriteOutputs(out, map[string]string{"tarball": "a\nb=c"}); err == nil {
		t.Error("a value spanning lines was written")
	}
	// Outside Actions: nothing to write.
	t.Setenv("GITHUB_OUTPUT", "")
	if err := Done(res, nil); err != nil {
		t.Error(err)
	}
}

// TestRecipeReadOnce: -recipe is read once, when the flags are read; a
// recipe swapped into the file before the build starts is not what builds.
// The swapped-in recipe names another default release, and the offline
// fetch (an empty cache, no network) fails naming the release it wanted.
func TestRecipeReadOnce(t *testing.T) {
	b, err := fs.ReadFile(recipes.FS, "openssl.toml")
	if err != nil {
		t.Fatal(err)
	}
	first, swapped := string(b), strings.Replace(string(b), `default = "4.0.2"`, `default = "3.5.7"`, 1)
	if first == swapped {
		t.Fatal(`the embedded recipe no longer reads default = "4.0.2": update this test`)
	}
	path := filepath.Join(t.TempDir(), "consumer.toml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Flags{Recipe: &path}.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(swapped), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Work = t.TempDir()
	s.Fetch.Offline, s.Fetch.CacheDir, s.Fetch.Mirror = true, t.TempDir(), ""
	_, err = pipeline.Fetch(context.Background(), s, pipeline.Runtime{Log: io.Discard, Environ: []string{}})
	if err == nil {
		t.Fatal("an offline fetch from an empty cache succeeded")
	}
	if !strings.Contains(err.Error(), "4.0.2") || strings.Contains(err.Error(), "3.5.7") {
		t.Errorf("fetch failed with %v; want it to name 4.0.2, the default of the recipe read when the flags were", err)
	}
}

// A build from the targets warns of a release's known advisories: the
// pipeline takes the table through Runtime.Advise (it does not import it,
// so the weekly table keeps out of the fixtures' key), and nothing else
// sets it.
func TestRuntimeAdvises(t *testing.T) {
	rt := Runtime()
	if rt.Advise == nil {
		t.Fatal("targets.Runtime sets no Advise: builds would say nothing of a release's advisories")
	}
	msg, ok := rt.Advise("3.5.7")
	if !ok || !strings.Contains(msg, "CVE-2026-84782") {
		t.Errorf("Advise(3.5.7) = %q, %v; want the high CVE-2026-84782 named", msg, ok)
	}
	if msg, ok := rt.Advise("4.0.3"); ok {
		t.Errorf("Advise(4.0.3) = %q; want nothing (no high or critical advisory is known against it)", msg)
	}
}

// TestRunRefusesBeforeTheBody: a target's bad flag fails inside the frame,
// through Safe, and its body never runs.
func TestRunRefusesBeforeTheBody(t *testing.T) {
	ran := false
	err := Flags{Version: ptr("4.0")}.RunBuild(context.Background(), func(context.Context, pipeline.Settings) error {
		ran = true
		return nil
	})
	if ran || err == nil || !strings.HasPrefix(err.Error(), "-version: ") {
		t.Fatalf("ran %v, err %v", ran, err)
	}
	if Safe(err) != err {
		t.Errorf("err %T did not return through Safe", err)
	}
}
