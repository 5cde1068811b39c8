package recipe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

const schema1 = "../../testdata/recipes/schema-1.toml"

// TestSchemaFixtures: the frozen schema-1 recipe stays readable, with every
// key it has, as a file a user names.
func TestSchemaFixtures(t *testing.T) {
	r, err := Load(schema1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema != 1 || r.Origin != OriginFile || r.Default != "3.5.7" || r.Prefix != "/opt/example" {
		t.Errorf("schema %d origin %q default %q prefix %q", r.Schema, r.Origin, r.Default, r.Prefix)
	}
	p, err := r.Plan("", "arm64")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Slice.Options, " "); got != "no-shared no-apps no-legacy" {
		t.Errorf("arm64 options %q", got)
	}
	if r.RecordedPath() != "schema-1.toml" {
		t.Errorf("a path outside the working directory is recorded as %q, want its name only", r.RecordedPath())
	}
	b, err := os.ReadFile(schema1)
	if err != nil {
		t.Fatal(err)
	}
	noKey := strings.Replace(string(b), "schema = 1\n", "", 1)
	if r, err := Parse("old.toml", []byte(noKey)); err != nil || r.Schema != 1 {
		t.Errorf("a recipe without schema (written before the key) must read as schema 1: %v", err)
	}
}

func TestRecordedPath(t *testing.T) {
	for _, tt := range []struct{ origin, path, want string }{
		{OriginEmbedded, "recipes/openssl.toml", "recipes/openssl.toml"},
		{OriginFile, "ci/openssl.toml", "ci/openssl.toml"},
		{OriginFile, "./ci/../ci/openssl.toml", "ci/openssl.toml"},
		{OriginFile, filepath.Join(string(filepath.Separator), "srv", "checkout", "ci", "openssl.toml"), "openssl.toml"},
		{OriginFile, "../elsewhere/openssl.toml", "openssl.toml"},
	} {
		r := &Recipe{Origin: tt.origin, Path: tt.path}
		if got := r.RecordedPath(); got != tt.want {
			t.Errorf("%s %s: recorded %q, want %q", tt.origin, tt.path, got, tt.want)
		}
	}
}

// TestHostileRecipes mutates the schema-1 recipe the way a hostile or
// careless consumer would. Each must be refused with ErrInvalid, naming
// the file, the line the mutation is on, and the field.
func TestHostileRecipes(t *testing.T) {
	base, err := os.ReadFile(schema1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, old, new string
		field, why     string
		at             string // the text on the line the error names; "" = new
	}{
		{"-O0 flag", `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", "-O0"]`, "targets.arm64.flags[1]", "optimisation", ""},
		{"-Os flag", `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-Os", "-mmacosx-version-min=11.0"]`, "targets.arm64.flags[0]", "optimisation", ""},
		{"CFLAGS= as a flag", `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", "CFLAGS=-O0"]`, "targets.arm64.flags[1]", "variable assignment", ""},
		{"CFLAGS= as an option", `{ name = "no-shared" },`, `{ name = "CFLAGS=-O0" },`, "options[0].name", "variable assignment", ""},
		{"CFLAGS= as a target option", `options = [{ name = "no-legacy" }]`, `options = [{ name = "no-legacy" }, { name = "CFLAGS=-g" }]`, "targets.arm64.options[1].name", "variable assignment", ""},
		{"percent-encoded -O0", `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", "-Wall%20-O0"]`, "targets.arm64.flags[1]", "%xx", ""},
		{"Configure's debug switch", `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", "-d"]`, "targets.arm64.flags[1]", "debug", ""},
		{"pass-through", `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", "-mllvm", "-opt-bisect-limit=0"]`, "targets.arm64.flags[1]", "unchecked", ""},
		{"Configure option as flag", `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", "--openssldir=/tmp/x"]`, "targets.arm64.flags[1]", "Configure option", ""},
		{"linker flag", `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", "-Wl,-rpath,/tmp"]`, "targets.arm64.flags[1]", "linker", ""},
		{"make expansion", `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", "-DX=$(shell id)"]`, "targets.arm64.flags[1]", "no spaces", ""},
		{"min_os disagrees", `min_os = "11.0"`, `min_os = "12.0"`, "targets.arm64.flags[0]", "other than min_os \"12.0\"", `flags = ["-mmacosx-version-min=11.0"]`},
		{"second deployment target", `flags = ["-mmacosx-version-min=11.0"]`, `flags = ["-mmacosx-version-min=11.0", "-mmacosx-version-min=10.9"]`, "targets.arm64.flags[1]", "deployment target", ""},
		{"deployment target on linux", "flags = []", `flags = ["-mmacosx-version-min=10.9"]`, "targets.linux-x86_64.flags[0]", "has none", ""},
		{"unknown key", `artifact = "example-macos-arm64"`, "artifact = \"example-macos-arm64\"\ncflags = [\"-O0\"]", "unknown field targets.arm64.cflags", "", ""},
		{"unknown top-level key", `prefix = "/opt/example"`, "prefix = \"/opt/example\"\nenv = { CFLAGS = \"-O0\" }", "unknown field env", "", ""},
		{"artifact name with ../", `artifact = "example-macos-arm64"`, `artifact = "../example-macos-arm64"`, "targets.arm64.artifact", "plain artifact name", ""},
		{"artifact name with /", `artifact = "example-macos-arm64"`, `artifact = "dist/arm64"`, "targets.arm64.artifact", "plain artifact name", ""},
		{"openssldir with make syntax", `openssldir = "/opt/example/ssl"`, `openssldir = "/opt/$(HOME)"`, "targets.arm64.openssldir", "absolute path", ""},
		{"relative prefix", `prefix = "/opt/example"`, `prefix = "opt/example"`, "prefix", "absolute path", ""},
		{"signature optional", `signature = "required"`, `signature = "optional"`, "release 3.5.7.signature", "cannot waive", ""},
		{"signer not in keys/", `signers = ["BA5473A2B0587B07FB27CF2D216094DFD0CB81EF", "B146647E45A7B33947AB226B2A2C87D161692D40"]`, `signers = ["0123456789ABCDEF0123456789ABCDEF01234567"]`, "release 3.5.7.signers[0]", "not pinned in keys/", ""},
		{"no signers", `signers = ["BA5473A2B0587B07FB27CF2D216094DFD0CB81EF", "B146647E45A7B33947AB226B2A2C87D161692D40"]`, `signers = []`, "release 3.5.7.signers", "pinned key", ""},
		{"unknown schema version", "schema = 1", "schema = 2", "schema", "reads recipe schema 1, not 2", ""},
		{"configure as an option", `configure = "darwin64-arm64-cc"`, `configure = "--prefix=/tmp"`, "targets.arm64.configure", "Configure target", ""},
		{"wrong type", `size = 53153930`, `size = "53153930"`, "release.size", "", ""},
		{"syntax", `size = 53153930`, `size = 53153930 x`, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mut := strings.Replace(string(base), tt.old, tt.new, 1)
			if mut == string(base) {
				t.Fatalf("mutation %q did not apply", tt.old)
			}
			at := tt.new
			if tt.at != "" {
				at = tt.at
			}
			line := lineOf(t, mut, at)
			path := filepath.Join(t.TempDir(), "consumer.toml")
			if err := os.WriteFile(path, []byte(mut), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("want ErrInvalid, got %v", err)
			}
			msg := err.Error()
			where := fmt.Sprintf("%s:%d: ", path, line)
			if !strings.Contains(msg, where+tt.field) {
				t.Errorf("error does not name %q then %q:\n%v", where, tt.field, msg)
			}
			if !strings.Contains(msg, tt.why) {
				t.Errorf("error does not say %q:\n%v", tt.why, msg)
			}
		})
	}
}

// lineOf is the line of s on which the first line of sub starts.
func lineOf(t *testing.T, s, sub string) int {
	t.Helper()
	first, _, _ := strings.Cut(sub, "\n")
	if strings.Contains(sub, "\n") {
		first = sub[strings.Index(sub, "\n")+1:]
		first, _, _ = strings.Cut(first, "\n")
	}
	i := strings.Index(s, first)
	if i < 0 {
		t.Fatalf("%q not in the mutated recipe", first)
	}
	return strings.Count(s[:i], "\n") + 1
}

// TestReadFileKinds: a recipe path that is not a regular file is refused by
// name, without blocking on a FIFO nobody writes or reading a device.
func TestReadFileKinds(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "recipe.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, make([]byte, MaxSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.toml")
	if err := os.Symlink(filepath.Join("..", "..", "..", "..", "..", "..", "..", "..", "..", "..", "..", "..", "dev", "null"), link); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(schema1)
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.toml")
	if err := os.Symlink(abs, good); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{dir, "a directory"},
		{fifo, "a named pipe (FIFO)"},
		{"/dev/null", "a device"},
		{link, "a device"},
		{big, "larger than"},
		{filepath.Join(dir, "missing.toml"), "no such file"},
	} {
		done := make(chan error, 1)
		go func() { _, err := Load(tt.path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: want an error naming it and %q, got %v", tt.path, tt.want, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Load blocked", tt.path)
		}
	}
	if r, err := Load(good); err != nil || r.Default != "3.5.7" {
		t.Errorf("a link to a regular recipe: %v", err)
	}
}

// TestLibraries: libraries and install_name, and their agreement with the
// options: each refusal names the file, line and key; a plan of shared
// libraries carries them, named by the release's major version.
func TestLibraries(t *testing.T) {
	base, err := os.ReadFile(schema1)
	if err != nil {
		t.Fatal(err)
	}
	noLinux := string(base[:strings.Index(string(base), "[targets.linux-x86_64]")]) + string(base[strings.Index(string(base), "[[release]]"):])
	for _, tt := range []struct {
		name, old, new, field, why string
	}{
		{"unknown kind", `prefix = "/opt/example"`, "prefix = \"/opt/example\"\nlibraries = [\"dynamic\"]", "libraries[0]", "want static or shared"},
		{"twice", `prefix = "/opt/example"`, "prefix = \"/opt/example\"\nlibraries = [\"shared\", \"shared\"]", "libraries[1]", "given twice"},
		{"empty", `prefix = "/opt/example"`, "prefix = \"/opt/example\"\nlibraries = []", "libraries", "empty"},
		{"install_name without shared", `prefix = "/opt/example"`, "prefix = \"/opt/example\"\ninstall_name = \"@rpath\"", "install_name", "only meaningful"},
		{"bad install_name", `prefix = "/opt/example"`, "prefix = \"/opt/example\"\nlibraries = [\"shared\"]\ninstall_name = \"/usr/lib\"", "install_name", "want @rpath or prefix"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mut := strings.Replace(noLinux, tt.old, tt.new, 1)
			_, err := Parse("r.toml", []byte(mut))
			line := lineOf(t, mut, tt.new)
			if tt.field == "install_name" {
				line = lineOf(t, mut, "install_name =")
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), fmt.Sprintf("r.toml:%d: %s", line, tt.field)) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("want r.toml:%d: %s ... %s, got %v", line, tt.field, tt.why, err)
			}
		})
	}
	// Shared libraries for a Linux target are ELF libraries, named by
	// their SONAME, also in a recipe whose dylibs have install names
	// under the prefix.
	withLinux := strings.Replace(string(base), `prefix = "/opt/example"`, "prefix = \"/opt/example\"\nlibraries = [\"shared\"]\ninstall_name = \"prefix\"", 1)
	withLinux = strings.Replace(withLinux, `{ name = "no-shared" },`, "", 1)
	lr, err := Parse("r.toml", []byte(withLinux))
	if err != nil {
		t.Fatalf("shared libraries for linux: %v", err)
	}
	for _, tt := range []struct{ target, libssl, name string }{
		{"linux-x86_64", "libssl.so.3", "libssl.so.3"},
		{"arm64", "libssl.3.dylib", "/opt/example/lib/libssl.3.dylib"},
	} {
		p, err := lr.Plan("", tt.target)
		if err != nil {
			t.Fatal(err)
		}
		if libs := p.Slice.Libraries(); len(libs) != 2 || libs[1] != tt.libssl || p.Slice.InstallNameOf(libs[1], lr.Prefix) != tt.name {
			t.Errorf("%s: libraries %v, install name %q, want %s named %s", tt.target, libs, p.Slice.InstallNameOf(libs[1], lr.Prefix), tt.libssl, tt.name)
		}
	}
	// The files are named by the release's major version, its
	// SHLIB_VERSION: 4.x gives libcrypto.4.dylib and libcrypto.so.4.
	for target, want := range map[string]string{"arm64": "libcrypto.4.dylib", "linux-x86_64": "libcrypto.so.4"} {
		p, err := lr.PlanFor(Release{Version: "4.0.2"}, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		if libs := p.Slice.Libraries(); libs[0] != want || p.Slice.Shared.Version != "4" {
			t.Errorf("4.0.2 for %s: %v, want %s first", target, libs, want)
		}
	}
	// A plan: the options must agree.
	shared := strings.Replace(noLinux, `prefix = "/opt/example"`, "prefix = \"/opt/example\"\nlibraries = [\"shared\", \"static\"]", 1)
	r, err := Parse("r.toml", []byte(shared))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Plan("", "arm64"); !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), "no-shared builds no shared libraries") {
		t.Errorf("no-shared with libraries = shared: %v", err)
	}
	r, err = Parse("r.toml", []byte(strings.Replace(shared, `{ name = "no-shared" },`, "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Plan("", "arm64")
	if err != nil {
		t.Fatal(err)
	}
	if sh := p.Slice.Shared; sh == nil || !sh.Static || sh.InstallName != "@rpath" || sh.Version != "3" ||
		!slices.Equal(p.Slice.Libraries(), []string{"libcrypto.a", "libssl.a", "libcrypto.3.dylib", "libssl.3.dylib"}) {
		t.Errorf("plan: shared %+v, libraries %v", p.Slice.Shared, p.Slice.Libraries())
	}
}
