package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// sharedMini builds target from the mini tree with a recipe of shared
// libraries (install names installName, static ones too when static).
func sharedMini(t *testing.T, target, libraries, installName string) (*pipeline.Result, error, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds with the cross toolchain; skipped in -short mode")
	}
	if _, err := toolchain.New("cross"); err != nil {
		testfixture.Missing(t, "%v", err)
	}
	testfixture.Tools(t, "perl", "make")
	s := miniSettings(t, nil)
	b, err := os.ReadFile(s.Recipe)
	if err != nil {
		t.Fatal(err)
	}
	head := "libraries = " + libraries + "\n"
	if installName != "" {
		head += "install_name = " + installName + "\n"
	}
	text := strings.Replace(string(b), `options = [{ name = "no-shared" }]`, head+"options = []", 1)
	if err := os.WriteFile(s.Recipe, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	res, err := pipeline.Slice(context.Background(), s, miniRuntime(t, &log), target, nil)
	return res, err, log.String()
}

// TestMiniShared: a recipe of shared libraries gives an artifact of
// dylibs over the mini tree: versioned names only (no links, no archives),
// install names @rpath/..., libssl loading libcrypto by it, ad-hoc
// signatures that hold after the rewrite (arm64), .pc files naming the
// dylibs, and a manifest recording it all.
func TestMiniShared(t *testing.T) {
	for _, target := range []string{"arm64", "x86_64"} {
		t.Run(target, func(t *testing.T) {
			res, err, log := sharedMini(t, target, `["shared"]`, "")
			if err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
			t.Logf("log:\n%s", log)
			lib := filepath.Join(res.Published.Dir, "lib")
			var names []string
			ents, _ := os.ReadDir(lib)
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if want := []string{"libcrypto.9.dylib", "libssl.9.dylib"}; !slices.Equal(names, want) {
				t.Errorf("lib/ holds %v, want %v", names, want)
			}
			for _, tt := range []struct{ lib, id, loads string }{
				{"libcrypto.9.dylib", "@rpath/libcrypto.9.dylib", ""},
				{"libssl.9.dylib", "@rpath/libssl.9.dylib", "@rpath/libcrypto.9.dylib"},
			} {
				b, err := os.ReadFile(filepath.Join(lib, tt.lib))
				if err != nil {
					t.Fatal(err)
				}
				m, err := inspect.ParseMachOBytes(b)
				if err != nil {
					t.Fatal(err)
				}
				if m.ID == nil || m.ID.Name != tt.id {
					t.Errorf("%s: install name %+v, want %s", tt.lib, m.ID, tt.id)
				}
				if tt.loads != "" && !slices.ContainsFunc(m.Loads, func(d inspect.Dylib) bool { return d.Name == tt.loads }) {
					t.Errorf("%s: loads %+v, want %s", tt.lib, m.Loads, tt.loads)
				}
				cs, err := inspect.ReadCodeSignature(bytesReader(b), 0, m)
				if target == "arm64" && (err != nil || cs == nil || !cs.Valid()) {
					t.Errorf("%s: signature %+v, %v", tt.lib, cs, err)
				}
			}
			m, err := artifact.ReadManifest(res.Published.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if m.Target.Shared == nil || m.Target.Shared.InstallName != "@rpath" || m.Target.Shared.Version != "9" || m.Target.Shared.Static {
				t.Errorf("manifest target.shared %+v", m.Target.Shared)
			}
			sig := "none"
			if target == "arm64" {
				sig = "ad hoc (linker-signed), valid"
			}
			if len(m.Dylibs) != 2 || m.Dylibs[1].InstallName != "@rpath/libssl.9.dylib" || !slices.Contains(m.Dylibs[1].Loads, "@rpath/libcrypto.9.dylib") ||
				m.Dylibs[0].Current != "9.0" || m.Dylibs[0].Signature != sig {
				t.Errorf("manifest dylibs %+v", m.Dylibs)
			}
		})
	}
}

func bytesReader(b []byte) *strings.Reader { return strings.NewReader(string(b)) }
