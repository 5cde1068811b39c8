package recipe_test

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/configure"
	"github.com/osslbuild/osslbuild/internal/recipe"
)

var updateArgv = flag.Bool("update-argv", false, "rewrite testdata/argv.golden from the current code")

// pycaOptions is pyca's OPENSSL_BUILD_FLAGS, given as a caller's options.
var pycaOptions = strings.Fields("no-zlib no-shared no-module no-comp no-apps no-docs no-sm2-precomp no-atexit enable-ec_nistp_64_gcc_128")

// TestConfigureArgvGolden: the Configure argv of every plan of every
// shipped, example and testdata recipe is what it was when the golden file
// was written (at 5392f1f, before flags were checked by allow-list and the
// deployment flag was derived from min_os). The argv carries the flags
// into the compiler line every library embeds, so a change here is a
// change of the built libraries. A recipe the code refuses is recorded as
// refused.
func TestConfigureArgvGolden(t *testing.T) {
	files := []string{"recipes/openssl.toml"}
	for _, g := range []string{"recipes/examples/*.toml", "testdata/recipes/*.toml"} {
		m, err := filepath.Glob(filepath.Join("..", "..", g))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			files = append(files, filepath.ToSlash(strings.TrimPrefix(f, filepath.Join("..", "..")+string(filepath.Separator))))
		}
	}
	embedded, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range files {
		var r *recipe.Recipe
		if f == "recipes/openssl.toml" {
			r = embedded
		} else if r, err = recipe.Load(filepath.Join("..", "..", f)); err != nil {
			fmt.Fprintf(&b, "%s: refused\n", f)
			continue
		}
		versions := r.Versions()
		if len(versions) == 0 {
			// A recipe without releases builds what the caller names.
			versions = embedded.Versions()
		}
		for _, target := range slices.Sorted(maps.Keys(r.Targets)) {
			for _, v := range versions {
				for _, caller := range []bool{false, true} {
					opts, how := []string(nil), "recipe options"
					if caller {
						opts, how = pycaOptions, "pyca options"
					}
					rel := recipe.Release{Version: v}
					if listed, err := r.Release(v); err == nil {
						rel = listed
					}
					p, err := r.PlanFor(rel, target, opts)
					if err != nil {
						fmt.Fprintf(&b, "%s %s %s (%s): no plan\n", f, target, v, how)
						continue
					}
					fmt.Fprintf(&b, "%s %s %s (%s): %q\n", f, target, v, how, configure.Args(p))
				}
			}
		}
	}
	golden := filepath.Join("testdata", "argv.golden")
	if *updateArgv {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("argv changed at line %d:\n got %s\nwant %s", i+1, g, w)
			}
		}
	}
}
