package configure

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/configure/record"
	"github.com/osslbuild/osslbuild/internal/proc"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source/unpack"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

func plan(t *testing.T, version, target string) *recipe.Plan {
	t.Helper()
	r, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Plan(version, target)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestArgs(t *testing.T) {
	tests := []struct {
		version, target string
		want            string
	}{
		{"4.0.2", "arm64", "perl Configure darwin64-arm64-cc --prefix=/opt/osslbuild --openssldir=/opt/homebrew/etc/openssl@3 no-zlib no-shared no-module no-comp no-apps no-docs no-sm2-precomp no-atexit enable-ec_nistp_64_gcc_128 -mmacosx-version-min=11.0"},
		{"4.0.2", "x86_64", "perl Configure darwin64-x86_64-cc --prefix=/opt/osslbuild --openssldir=/usr/local/etc/openssl@3 no-zlib no-shared no-module no-comp no-apps no-docs no-sm2-precomp no-atexit enable-ec_nistp_64_gcc_128 -mmacosx-version-min=10.12 -march=core2"},
		{"3.0.20", "x86_64", "perl Configure darwin64-x86_64-cc --prefix=/opt/osslbuild --openssldir=/usr/local/etc/openssl@3 no-zlib no-shared no-module no-comp no-atexit enable-ec_nistp_64_gcc_128 -mmacosx-version-min=10.12 -march=core2"},
	}
	for _, tt := range tests {
		t.Run(tt.version+"/"+tt.target, func(t *testing.T) {
			if got := strings.Join(Args(plan(t, tt.version, tt.target)), " "); got != tt.want {
				t.Errorf("argv:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestIgnoredSet(t *testing.T) {
	env := []string{"CFLAGS=-O0 -g", "PATH=/bin", "CPPFLAGS=-DHOSTILE", "MACOSX_DEPLOYMENT_TARGET=10.9", "CC=", "HOME=/root", "CFLAGS=-O1"}
	got := IgnoredSet(env)
	want := []string{"CFLAGS", "CPPFLAGS", "MACOSX_DEPLOYMENT_TARGET"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestEnvIsConstructed(t *testing.T) {
	t.Setenv("CFLAGS", "-O0 -g")
	t.Setenv("MACOSX_DEPLOYMENT_TARGET", "10.9")
	work := t.TempDir()
	env, err := Env(toolchain.Env{Bin: "/tc/bin", Vars: []string{"ZERO_AR_DATE=1"}}, work, 1787657968)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		keys[k] = v
	}
	for _, k := range record.Ignored {
		if _, ok := keys[k]; ok {
			t.Errorf("%s reached the environment", k)
		}
	}
	if !strings.HasPrefix(keys["PATH"], "/tc/bin:") {
		t.Errorf("toolchain not first on PATH: %s", keys["PATH"])
	}
	if keys["SOURCE_DATE_EPOCH"] != "1787657968" || keys["LANG"] != "C" || keys["TZ"] != "UTC" || keys["ZERO_AR_DATE"] != "1" {
		t.Errorf("env = %v", env)
	}
}

// configured extracts the real release once and configures it for each
// target in turn, returning the gate's verdicts.
func TestRealConfigureGate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Configure")
	}
	testfixture.On(t, testfixture.LinuxCross)
	tc, err := toolchain.New("cross")
	if err != nil {
		testfixture.Missing(t, "%v", err)
	}
	// A hostile user environment, for every release at once: none of it
	// may reach Configure. (Set here, not with t.Setenv, so the releases'
	// subtests, a minute of single-threaded perl each, run in parallel;
	// restored when they have all ended.)
	for k, v := range map[string]string{"CFLAGS": "-O0 -g", "CPPFLAGS": "-DHOSTILE", "MACOSX_DEPLOYMENT_TARGET": "10.9"} {
		old, had := os.LookupEnv(k)
		os.Setenv(k, v)
		t.Cleanup(func() {
			if had {
				os.Setenv(k, old)
			} else {
				os.Unsetenv(k)
			}
		})
	}
	for _, version := range []string{"4.0.2", "3.5.7", "3.0.20"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			fx := testfixture.Get(t, version)
			src := filepath.Join(t.TempDir(), "src")
			if _, err := unpack.Extract(context.Background(), fx.Tarball, src, unpack.Options{}); err != nil {
				t.Fatal(err)
			}
			for _, target := range []string{"arm64", "x86_64"} {
				p := plan(t, version, target)
				work := t.TempDir()
				tenv, err := tc.Prepare(context.Background(), filepath.Join(work, "tc"), p.Slice)
				if err != nil {
					t.Fatal(err)
				}
				env, err := Env(tenv, work, 1787657968)
				if err != nil {
					t.Fatal(err)
				}
				var log bytes.Buffer
				if err := RunArgs(context.Background(), src, Args(p), env, &log); err != nil {
					t.Fatalf("%v\n%s", err, log.String())
				}
				m, res, err := Gate(src, p)
				if err != nil {
					t.Fatalf("%s: gate refused osslbuild's own Configure: %v", target, err)
				}
				want := "-O3 -Wall " + strings.Join(p.Slice.Flags, " ")
				if res.CFLAGS != want {
					t.Errorf("%s: CFLAGS = %q, want %q", target, res.CFLAGS, want)
				}
				// The generated files must hold none of the hostile values
				// (the Makefile's own fuzz rules mention -O0, so look at the
				// flag variables for that one).
				for _, f := range []string{m.Path, filepath.Join(src, "configdata.pm")} {
					b, _ := os.ReadFile(f)
					if bytes.Contains(b, []byte("HOSTILE")) {
						t.Errorf("%s: CPPFLAGS from the environment reached %s", target, f)
					}
				}
				for _, k := range []string{"CFLAGS", "CPPFLAGS", "CNF_CFLAGS", "CNF_CPPFLAGS", "LDFLAGS", "CNF_LDFLAGS"} {
					if v := m.Vars[k]; strings.Contains(v, "-O0") || strings.Contains(v, "-g") || strings.Contains(v, "10.9") {
						t.Errorf("%s: hostile environment reached %s=%s", target, k, v)
					}
				}
				if res.Objects < 500 {
					t.Errorf("%s: only %d library objects found in the Makefile", target, res.Objects)
				}

				if target == "arm64" {
					// Before another Configure of the tree: the plan's own.
					releaseLists(t, version, src, p)
				}
				if target == "arm64" && version == "3.5.7" {
					sharedObjects(t, src, env)
				}
				if target != "arm64" {
					continue // the pyca way once per release: the gate reads the same variables for either
				}
				defineLands(t, src, p, env)
				// The pyca way: the same flags as CFLAGS in the environment of
				// Configure. The gate must refuse it.
				pycaEnv := append(slices.Clone(env), "CFLAGS="+strings.Join(p.Slice.Flags, " "))
				if err := RunArgs(context.Background(), src, Args(p), pycaEnv, &log); err != nil {
					t.Fatalf("%v\n%s", err, log.String())
				}
				_, res, err = Gate(src, p)
				if !errors.Is(err, ErrGate) || !strings.Contains(err.Error(), "-O0") {
					t.Errorf("%s: gate passed pyca's CFLAGS-in-environment Configure (CFLAGS=%q): %v", target, res.CFLAGS, err)
				}
			}
		})
	}
}

// defineLands configures the real tree src with the plan's flags and a
// define, and requires the define where OpenSSL's Configure puts it and
// the gate to find it there: in CPPFLAGS (every library object's
// LIB_CPPFLAGS), not CFLAGS, and on the compiler line libcrypto embeds,
// which util/mkbuildinf.pl writes into crypto/buildinf.h from LIB_CFLAGS
// and CPPFLAGS_Q (made here by the release's own rule), equal to the
// line the gate reads.
func defineLands(t *testing.T, src string, plan *recipe.Plan, env []string) {
	t.Helper()
	const define = "-DFOO=1"
	p := *plan
	p.Slice.Flags = append(slices.Clone(p.Slice.Flags), define)
	var log bytes.Buffer
	if err := RunArgs(context.Background(), src, Args(&p), env, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	m, res, err := Gate(src, &p)
	if err != nil {
		t.Fatalf("gate refused Configure with %s: %v", define, err)
	}
	if !slices.Contains(strings.Fields(m.Vars["CPPFLAGS"]), define) || slices.Contains(strings.Fields(m.Vars["CFLAGS"]), define) {
		t.Errorf("Configure put %s elsewhere than CPPFLAGS: CPPFLAGS=%q CFLAGS=%q", define, m.Vars["CPPFLAGS"], m.Vars["CFLAGS"])
	}
	os.Remove(filepath.Join(src, "crypto", "buildinf.h"))
	if err := proc.Run(context.Background(), proc.Cmd{Args: []string{"make", "crypto/buildinf.h"}, Dir: src, Env: env, Stdout: &log, Stderr: &log}); err != nil {
		t.Fatalf("make crypto/buildinf.h: %v\n%s", err, log.String())
	}
	b, err := os.ReadFile(filepath.Join(src, "crypto", "buildinf.h"))
	if err != nil {
		t.Fatal(err)
	}
	var line strings.Builder
	for _, c := range regexp.MustCompile(`'(\\.|[^'])',`).FindAllStringSubmatch(string(b), -1) {
		line.WriteString(strings.TrimPrefix(c[1], `\`))
	}
	if want := "compiler: cc " + res.CompileFlags; line.String() != want {
		t.Errorf("crypto/buildinf.h embeds\n %q\nthe gate read\n %q", line.String(), want)
	}
	if !slices.Contains(strings.Fields(line.String()), define) {
		t.Errorf("the embedded compiler line lacks %s: %q", define, line.String())
	}
}

// sharedObjects configures the real tree src by the end-to-end tests'
// recipe of shared libraries and requires the gate's reading of the real
// Makefile to list the shared libraries' objects a shared-only build
// compiles: the shared twin of every object of libcrypto and libssl
// (libcrypto-shlib-x.o for libcrypto-lib-x.o; the providers' archives'
// objects as they are), and none of those archives' own.
func sharedObjects(t *testing.T, src string, env []string) {
	t.Helper()
	r, err := recipe.Load(filepath.Join(testfixture.RepoRoot(), "testdata", "recipes", "shared.toml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Plan("3.5.7", "arm64")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if err := RunArgs(context.Background(), src, Args(p), env, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	m, _, err := Gate(src, p)
	if err != nil {
		t.Fatalf("gate refused the shared recipe's Configure: %v", err)
	}
	shared := map[string]bool{}
	for _, o := range m.SharedObjects {
		if strings.Contains(o, "/libcrypto-lib-") || strings.Contains(o, "/libssl-lib-") {
			t.Errorf("shared object %s is an archive's", o)
		}
		shared[o] = true
	}
	missing := 0
	for _, o := range m.Objects {
		// libcrypto's and libssl's objects (LIBS also names archives the
		// shared libraries do not link: apps', the template provider's).
		twin := strings.Replace(o, "-lib-", "-shlib-", 1)
		if !strings.Contains(o, "/libcrypto-lib-") && !strings.Contains(o, "/libssl-lib-") || shared[twin] {
			continue
		}
		if missing++; missing <= 5 {
			t.Errorf("library object %s has no shared twin among the shared objects", o)
		}
	}
	if len(m.SharedObjects) < 500 || missing > 0 {
		t.Errorf("%d shared objects for %d library objects, %d without a twin", len(m.SharedObjects), len(m.Objects), missing)
	}
}

func TestGate(t *testing.T) {
	good, err := os.ReadFile("testdata/Makefile.good")
	if err != nil {
		t.Fatal(err)
	}
	define := []string{"-DFOO=1"}
	tests := []struct {
		name, old, new string
		also           []string // another old and new
		flags          []string // beyond the plan's
		wantErr        string   // "" = passes
	}{
		{name: "good"},
		// Configure puts a -D argument in CPPFLAGS and CPPFLAGS_Q, not CFLAGS.
		{name: "define", old: "CPPFLAGS=\n", new: "CPPFLAGS=-DFOO=1\n", flags: define, wantErr: "missing from the compiler line libcrypto embeds (LIB_CFLAGS, CPPFLAGS_Q)"},
		{name: "define where Configure puts it", old: "CPPFLAGS=\n", new: "CPPFLAGS=-DFOO=1\n", also: []string{"-D_REENTRANT -DNDEBUG\n\n", "-D_REENTRANT -DNDEBUG -DFOO=1\n\n"}, flags: define},
		{name: "define missing", flags: define, wantErr: "recipe flag -DFOO=1 missing from the library objects' compile"},
		{name: "define embedded only", old: "CPPFLAGS_Q=-DL_ENDIAN -DOPENSSL_PIC -D_REENTRANT -DNDEBUG", new: "CPPFLAGS_Q=-DL_ENDIAN -DOPENSSL_PIC -D_REENTRANT -DNDEBUG -DFOO=1", flags: define, wantErr: "recipe flag -DFOO=1 missing from the library objects' compile"},
		{name: "no LIB_CFLAGS", old: "LIB_CFLAGS=", new: "XLIB_CFLAGS=", wantErr: "no LIB_CFLAGS"},
		{name: "O0 in the objects' own flags", old: "$(CNF_CFLAGS) $(CFLAGS)\n", new: "$(CNF_CFLAGS) $(CFLAGS) -O0\n", wantErr: "effective optimisation is -O0"},
		{name: "pyca CFLAGS in environment", old: "CFLAGS=-O3 -Wall -mmacosx-version-min=10.12 -march=core2", new: "CFLAGS=-mmacosx-version-min=10.12 -march=core2", wantErr: "no -O flag"},
		{name: "last -O wins", old: "-march=core2\nCNF", new: "-march=core2 -O0\nCNF", wantErr: "effective optimisation is -O0"},
		{name: "O2", old: "CFLAGS=-O3", new: "CFLAGS=-O2", wantErr: "effective optimisation is -O2"},
		{name: "missing flag", old: " -march=core2\n", new: "\n", wantErr: "recipe flag -march=core2 missing"},
		{name: "wrong platform", old: "PLATFORM=darwin64-x86_64-cc", new: "PLATFORM=darwin64-arm64-cc", wantErr: `PLATFORM is "darwin64-arm64-cc"`},
		{name: "no library objects", old: "LIBS=libcrypto.a libssl.a \\\n     providers/libdefault.a", new: "LIBS=libnone.a", wantErr: "no library objects"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mk := strings.Replace(string(good), tt.old, tt.new, 1)
			if tt.also != nil {
				mk = strings.Replace(mk, tt.also[0], tt.also[1], 1)
			}
			os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644)
			p := plan(t, "4.0.2", "x86_64")
			p.Slice.Flags = append(p.Slice.Flags, tt.flags...)
			m, res, err := Gate(dir, p)
			if tt.wantErr == "" && tt.flags != nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				want := []string{"crypto/libcrypto-lib-a.o", "crypto/libcrypto-lib-b.o", "ssl/libssl-lib-s.o", "providers/libdefault-lib-d.o"}
				if !slices.Equal(m.Objects, want) {
					t.Errorf("objects = %v, want %v", m.Objects, want)
				}
				// The shared libraries' objects, with those of the archive
				// libcrypto links; SHLIBS names one through a variable.
				want = []string{"crypto/libcrypto-shlib-a.o", "crypto/libcrypto-shlib-b.o", "providers/libdefault-lib-d.o", "ssl/libssl-shlib-s.o", "crypto/libssl-shlib-a.o"}
				if !slices.Equal(m.SharedObjects, want) {
					t.Errorf("shared objects = %v, want %v", m.SharedObjects, want)
				}
				if res.EffectiveOpt != "-O3" || res.CompileFlags != "-fPIC -arch x86_64 -O3 -Wall -mmacosx-version-min=10.12 -march=core2 -DL_ENDIAN -DOPENSSL_PIC -D_REENTRANT -DNDEBUG" {
					t.Errorf("result = %+v", res)
				}
				return
			}
			if !errors.Is(err, ErrGate) || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "Makefile") {
				t.Errorf("want ErrGate with %q naming the Makefile, got %v", tt.wantErr, err)
			}
		})
	}
}

func TestGateNoMakefile(t *testing.T) {
	if _, _, err := Gate(t.TempDir(), plan(t, "4.0.2", "arm64")); err == nil {
		t.Error("gate passed without a Makefile")
	}
}

// TestRecordHoldsArgs: the record check (record.Check, what check and a
// proof hold a manifest to) accepts the argv this package runs for every
// target and release of the embedded recipe, and the pyca way's argv (the
// flags moved to CFLAGS) only as the pyca way.
func TestRecordHoldsArgs(t *testing.T) {
	r, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	argvProblems := func(ps []string) []string {
		return slices.DeleteFunc(ps, func(p string) bool { return !strings.HasPrefix(p, "configure argv") })
	}
	for _, rel := range r.Releases {
		for target := range r.Targets {
			p, err := r.Plan(rel.Version, target)
			if err != nil {
				t.Fatal(err)
			}
			argv := Args(p)
			if ps := argvProblems(record.Check(p.Slice, argv, nil, "", false)); len(ps) > 0 {
				t.Errorf("%s %s: record.Check refuses Args: %q", rel.Version, target, ps)
			}
			if len(p.Slice.Flags) == 0 {
				continue
			}
			pyca := slices.DeleteFunc(slices.Clone(argv), func(a string) bool { return slices.Contains(p.Slice.Flags, a) })
			if ps := argvProblems(record.Check(p.Slice, pyca, nil, "", true)); len(ps) > 0 {
				t.Errorf("%s %s: record.Check refuses the pyca way's argv: %q", rel.Version, target, ps)
			}
			if ps := argvProblems(record.Check(p.Slice, pyca, nil, "", false)); len(ps) == 0 {
				t.Errorf("%s %s: record.Check accepts an argv without the flags for osslbuild's own build", rel.Version, target)
			}
		}
	}
}
