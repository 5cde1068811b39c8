package recipe

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/lifecycle"
	"github.com/osslbuild/osslbuild/internal/osslver/constraint"
)

func mustLoad(t *testing.T) *Recipe {
	t.Helper()
	r, err := Load("")
	if err != nil {
		t.Fatalf("embedded default recipe: %v", err)
	}
	return r
}

func TestEmbeddedRecipe(t *testing.T) {
	r := mustLoad(t)
	if r.Default != "4.0.2" {
		t.Errorf("default = %q, want 4.0.2", r.Default)
	}
	for _, v := range []string{"4.0.2", "3.5.7", "3.0.20"} {
		if _, err := r.Release(v); err != nil {
			t.Errorf("release %s: %v", v, err)
		}
	}
	if got := r.Versions(); got[0] != "4.0.2" {
		t.Errorf("Versions()[0] = %q, want newest first", got[0])
	}
	if len(r.SHA256) != 64 {
		t.Errorf("recipe digest %q", r.SHA256)
	}
}

func TestPlanOptions(t *testing.T) {
	r := mustLoad(t)
	all := []string{"no-zlib", "no-shared", "no-module", "no-comp", "no-apps", "no-docs", "no-sm2-precomp", "no-atexit", "enable-ec_nistp_64_gcc_128"}
	tests := []struct {
		version, target string
		want, skipped   []string
	}{
		{"4.0.2", "arm64", all, nil},
		{"3.5.7", "x86_64", all, nil},
		{"3.0.20", "arm64", []string{"no-zlib", "no-shared", "no-module", "no-comp", "no-atexit", "enable-ec_nistp_64_gcc_128"}, []string{"no-apps", "no-docs", "no-sm2-precomp"}},
	}
	for _, tt := range tests {
		t.Run(tt.version+"/"+tt.target, func(t *testing.T) {
			p, err := r.Plan(tt.version, tt.target)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Slice.Options, tt.want) {
				t.Errorf("options = %v\nwant      %v", p.Slice.Options, tt.want)
			}
			if !slices.Equal(p.Slice.Skipped, tt.skipped) {
				t.Errorf("skipped = %v, want %v", p.Slice.Skipped, tt.skipped)
			}
		})
	}
}

// A letter release is refused by a versions constraint, not misordered
// (go-version reads 1.1.1w as a pre-release of 1.1.1), with the recipe's
// file:line and field.
func TestConstraintRefusesLetterRelease(t *testing.T) {
	r := mustLoad(t)
	rel, listed, err := r.Resolve("1.1.1w", strings.Repeat("ab", 32))
	if err != nil || listed {
		t.Fatalf("Resolve: %v, listed %v", err, listed)
	}
	_, err = r.PlanFor(rel, "arm64", nil)
	if !errors.Is(err, constraint.ErrUnordered) || !strings.Contains(err.Error(), "OpenSSL 1.1.1w") ||
		!regexp.MustCompile(`openssl\.toml:[0-9]+: options\[[0-9]+\]\.versions`).MatchString(err.Error()) {
		t.Errorf("PlanFor(1.1.1w) = %v; want ErrUnordered naming the version and the recipe's file:line and field", err)
	}
}

func TestUnknown(t *testing.T) {
	r := mustLoad(t)
	if _, err := r.Plan("9.9.9", "arm64"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "4.0.2") {
		t.Errorf("unknown release: %v", err)
	}
	if _, err := r.Plan("", "riscv"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "arm64") {
		t.Errorf("unknown target: %v", err)
	}
	if _, err := Load("nonesuch"); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown recipe: %v", err)
	}
}

// TestInvalid mutates the real recipe one field at a time; each mutation must
// be refused with an error naming the file and the field.
func TestInvalid(t *testing.T) {
	base, err := os.ReadFile("../../recipes/openssl.toml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, old, new, wantField string
	}{
		{"unknown field", `default = "4.0.2"`, "default = \"4.0.2\"\ncolour = \"blue\"", "unknown field colour"},
		{"unknown target field", `artifact = "openssl-macos-arm64"`, "artifact = \"openssl-macos-arm64\"\ncflags = [\"-O0\"]", "targets.arm64.cflags"},
		{"short sha256", "736b467530f916737b7031310ccb21d8218c6229e61e8e160cd1d3458cd543a8", "736b4675", "release 4.0.2.sha256"},
		{"upper sha256", "736b467530f916737b7031310ccb21d8218c6229e61e8e160cd1d3458cd543a8", strings.ToUpper("736b467530f916737b7031310ccb21d8218c6229e61e8e160cd1d3458cd543a8"), "release 4.0.2.sha256"},
		{"bad constraint", `versions = ">= 3.2.0" }`, `versions = "newer than 3.2" }`, "options[4].versions"},
		{"letters in a constraint", `versions = ">= 3.2.0" }`, `versions = ">= 1.1.1t" }`, "options[4].versions"},
		{"missing target", "[targets.x86_64]", "[nottargets.x86_64]", "unknown field"},
		{"no targets", "[targets.", "[t.", "unknown field"},
		{"deployment flag disagrees with min_os", `flags = []`, `flags = ["-mmacosx-version-min=12.0"]`, "targets.arm64.flags[0]"},
		{"optimisation flag", `flags = []`, `flags = ["-O0"]`, "targets.arm64.flags[0]"},
		{"default missing", `default = "4.0.2"`, `default = "4.0.9"`, "default"},
		{"bad fingerprint", `signers = ["B146647E45A7B33947AB226B2A2C87D161692D40"]`, `signers = ["64ED7B1DCCE71CB2"]`, "release 4.0.2.signers[0]"},
		{"url for other file", "download/openssl-4.0.2/openssl-4.0.2.tar.gz", "download/openssl-4.0.2/openssl-4.0.1.tar.gz", "release 4.0.2.urls[0]"},
		{"syntax", `size = 55153883`, `size = 55153883 x`, "openssl.toml:"},
		{"bad signature mode", `size = 55153883`, "size = 55153883\nsignature = \"maybe\"", "release 4.0.2.signature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mut := strings.Replace(string(base), tt.old, tt.new, 1)
			if mut == string(base) {
				t.Fatalf("mutation %q did not apply", tt.old)
			}
			_, err := Parse("recipes/openssl.toml", []byte(mut))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("want ErrInvalid, got %v", err)
			}
			if !strings.Contains(err.Error(), "recipes/openssl.toml") || !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("error does not name file and %q:\n%v", tt.wantField, err)
			}
		})
	}
}

// TestEndOfLifeMarks: the recipe's end-of-life marks agree with
// internal/lifecycle, the one table of dates: every mark names its series
// and that series' date, a date already past, and every release of a
// series that had ended by the "as of" date the recipe states is marked.
func TestEndOfLifeMarks(t *testing.T) {
	b, err := os.ReadFile("../../recipes/openssl.toml")
	if err != nil {
		t.Fatal(err)
	}
	marks, asOf, err := EndOfLifeMarks(b)
	if err != nil {
		t.Fatal(err)
	}
	r := mustLoad(t)
	for _, rel := range r.Releases {
		s, ok := lifecycle.Of(rel.Version)
		if !ok {
			t.Errorf("release %s: series not in internal/lifecycle", rel.Version)
			continue
		}
		m, marked := marks[rel.Version]
		switch {
		case marked && (m.Series != s.Name || m.Date != s.EndOfLife):
			t.Errorf("release %s: marked %s series ending %s, lifecycle says %s ending %s", rel.Version, m.Series, m.Date, s.Name, s.EndOfLife)
		case marked && !s.Ended(time.Now()):
			t.Errorf("release %s: marked end of life, but %s is supported until %s", rel.Version, s.Name, s.EndOfLife)
		case !marked && s.Ended(asOf):
			t.Errorf("release %s: the %s series ended %s, before the recipe's as-of date %s, and is not marked", rel.Version, s.Name, s.EndOfLife, asOf.Format(time.DateOnly))
		}
	}
	if len(marks) == 0 {
		t.Error("no marks found: the recipe pins 3.0 releases, ended 2026-09-07")
	}
}

// TestMinOS: min_os is read by the parser validation holds every object's
// deployment target to (platform.ParseMinOS), so a value validation would
// refuse after the build (11.256: Mach-O keeps the minor in a byte) is
// refused here, at the recipe's file and line, before anything is fetched.
func TestMinOS(t *testing.T) {
	base, err := os.ReadFile("../../recipes/openssl.toml")
	if err != nil {
		t.Fatal(err)
	}
	const arm64 = `min_os = "11.0"`
	line := strings.Count(string(base[:strings.Index(string(base), arm64)]), "\n") + 1
	for _, tt := range []struct{ minOS, want string }{
		{"11.0", ""},
		{"10.12.1", ""},
		{"11.255", ""},
		{"11.256", "minor and patch must be below 256"},
		{"11.0.256", "minor and patch must be below 256"},
		{"65536.0", "too large"},
		{"11.", "expected X, X.Y or X.Y.Z"},
		{"11.0.0.0", "expected X, X.Y or X.Y.Z"},
		{"eleven", "expected digits and dots"},
		{"", "expected X, X.Y or X.Y.Z"},
	} {
		t.Run(tt.minOS, func(t *testing.T) {
			mut := strings.Replace(string(base), arm64, `min_os = "`+tt.minOS+`"`, 1)
			r, err := Parse("recipes/openssl.toml", []byte(mut))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("min_os %q refused: %v", tt.minOS, err)
				}
				if p, err := r.Plan("", "arm64"); err != nil || p.Slice.Flags[0] != "-mmacosx-version-min="+tt.minOS {
					t.Errorf("min_os %q: plan %v (%v)", tt.minOS, p.Slice.Flags, err)
				}
				return
			}
			where := fmt.Sprintf("recipes/openssl.toml:%d: targets.arm64.min_os", line)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("min_os %q: %v\nwant ErrInvalid at %s: %s", tt.minOS, err, where, tt.want)
			}
		})
	}
}
