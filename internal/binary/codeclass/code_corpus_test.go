package codeclass

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	buildtc "github.com/osslbuild/osslbuild/internal/toolchain"
)

// The labelled corpus the code classifier is calibrated and proved on: a
// representative subset of OpenSSL 4.0.2's C files, compiled directly (no
// make) at every optimisation level for macOS arm64 and x86_64 (clang-14
// cross) and linux-x86_64 (gcc), archived like OpenSSL's own libraries, with
// real perlasm objects in libcrypto so that assembly sits beside the C as it
// does in a real build. Nothing of it is committed: it is built once into
// the fixture store (testfixture.Store: code-corpus/) and reused while its key (file lists,
// flags, tool versions) is unchanged.

// corpusCrypto and corpusSSL are the C files: bignum, EC, ASN.1, EVP, X.509,
// post-quantum, symmetric and plumbing code, so that big arithmetic
// functions and small accessors are both represented.
var corpusCrypto = []string{
	"crypto/bn/bn_add.c", "crypto/bn/bn_mul.c", "crypto/bn/bn_div.c", "crypto/bn/bn_exp.c",
	"crypto/bn/bn_lib.c", "crypto/bn/bn_shift.c", "crypto/bn/bn_gcd.c",
	"crypto/ec/ecp_smpl.c", "crypto/ec/ec_mult.c", "crypto/ec/curve25519.c",
	"crypto/evp/digest.c", "crypto/evp/evp_enc.c",
	"crypto/asn1/a_int.c", "crypto/asn1/asn1_lib.c", "crypto/asn1/tasn_dec.c", "crypto/asn1/tasn_enc.c",
	"crypto/x509/x509_cmp.c", "crypto/x509/v3_utl.c",
	"crypto/ml_kem/ml_kem.c", "crypto/ml_dsa/ml_dsa_sign.c",
	"crypto/sha/sha256.c", "crypto/sha/keccak1600.c", "crypto/aes/aes_core.c", "crypto/modes/gcm128.c",
	"crypto/buffer/buffer.c", "crypto/mem.c", "crypto/o_str.c", "crypto/stack/stack.c",
	"crypto/lhash/lhash.c", "crypto/bio/bss_mem.c",
	"crypto/rsa/rsa_ossl.c", "crypto/rsa/rsa_oaep.c", "crypto/dh/dh_key.c", "crypto/hmac/hmac.c",
}

var corpusSSL = []string{
	"ssl/ssl_ciph.c", "ssl/ssl_sess.c", "ssl/ssl_cert.c", "ssl/record/rec_layer_s3.c", "ssl/statem/extensions.c",
}

// corpusAsm is perlasm source -> output name, per perlasm flavour. The
// outputs are named as OpenSSL names them (sha512-armv8.pl writes SHA-256
// code when its output is called sha256-*).
var corpusAsm = map[string][][2]string{
	"ios64": {
		{"crypto/sha/asm/sha512-armv8.pl", "sha256-armv8.S"},
		{"crypto/bn/asm/armv8-mont.pl", "armv8-mont.S"},
		{"crypto/aes/asm/aesv8-armx.pl", "aesv8-armx.S"},
		{"crypto/chacha/asm/chacha-armv8.pl", "chacha-armv8.S"},
		{"crypto/ec/asm/ecp_nistz256-armv8.pl", "ecp_nistz256-armv8.S"},
		{"crypto/modes/asm/ghashv8-armx.pl", "ghashv8-armx.S"},
		{"crypto/arm64cpuid.pl", "arm64cpuid.S"},
	},
	"macosx": x86Asm,
	"elf":    x86Asm,
}

var x86Asm = [][2]string{
	{"crypto/sha/asm/sha512-x86_64.pl", "sha256-x86_64.s"},
	{"crypto/bn/asm/x86_64-mont.pl", "x86_64-mont.s"},
	{"crypto/bn/asm/x86_64-mont5.pl", "x86_64-mont5.s"},
	{"crypto/aes/asm/aesni-x86_64.pl", "aesni-x86_64.s"},
	{"crypto/ec/asm/ecp_nistz256-x86_64.pl", "ecp_nistz256-x86_64.s"},
	{"crypto/modes/asm/ghash-x86_64.pl", "ghash-x86_64.s"},
	{"crypto/poly1305/asm/poly1305-x86_64.pl", "poly1305-x86_64.s"},
	{"crypto/x86_64cpuid.pl", "x86_64cpuid.s"},
}

// corpusLevels are the optimisation levels; "-O0" is the only label that
// must come out -O0-like.
var corpusLevels = []string{"-O0", "-O1", "-O2", "-O3", "-Os"}

// corpusTarget is one platform of the corpus.
type corpusTarget struct {
	name      string // macos-arm64, macos-x86_64, linux-x86_64
	configure string // OpenSSL Configure target (headers, ASM defines)
	flavour   string // perlasm flavour
	arch      string // as inspect.CodeVerdict.Arch reports it
	macos     *platform.Slice
	cflags    []string // OpenSSL's own flags for the target, without -O
	arFormat  string   // llvm-ar --format
}

var corpusTargets = []corpusTarget{
	{name: "macos-arm64", configure: "darwin64-arm64-cc", flavour: "ios64", arch: "arm64",
		macos:    &platform.Slice{Name: "macos-arm64", OS: "macos", Arch: "arm64", MinOS: "11.0"},
		cflags:   []string{"-fPIC", "-arch", "arm64", "-Wall", "-mmacosx-version-min=11.0", "-DL_ENDIAN", "-DOPENSSL_PIC", "-D_REENTRANT", "-DNDEBUG"},
		arFormat: "darwin"},
	{name: "macos-x86_64", configure: "darwin64-x86_64-cc", flavour: "macosx", arch: "x86_64",
		macos:    &platform.Slice{Name: "macos-x86_64", OS: "macos", Arch: "x86_64", MinOS: "10.12"},
		cflags:   []string{"-fPIC", "-arch", "x86_64", "-Wall", "-mmacosx-version-min=10.12", "-DL_ENDIAN", "-DOPENSSL_PIC", "-D_REENTRANT", "-DNDEBUG"},
		arFormat: "darwin"},
	{name: "linux-x86_64", configure: "linux-x86_64", flavour: "elf", arch: "x86_64",
		cflags:   []string{"-fPIC", "-pthread", "-m64", "-Wa,--noexecstack", "-Wall", "-DL_ENDIAN", "-DOPENSSL_PIC", "-D_REENTRANT", "-DNDEBUG"},
		arFormat: "gnu"},
}

// corpusVersion changes whenever the objects' build recipe changes
// meaning; corpusOutputs when only what is made of them (archives, linked
// images) does.
const (
	corpusVersion = "code-corpus-1"
	corpusOutputs = "outputs-3"
)

// corpusLib is one labelled library of the corpus.
type corpusLib struct {
	Path   string
	Target string // corpusTarget.name or "macos-universal2"
	Level  string // "-O0", ...
	Kind   string // "libcrypto.a", "libssl.a", "libcrypto.so", "libcrypto.stripped.so", "libcrypto.dylib"
}

// O0 is the label: built without optimisation.
func (l corpusLib) O0() bool { return l.Level == "-O0" }

func (l corpusLib) String() string { return l.Target + " " + l.Level + " " + l.Kind }

var (
	corpusOnce sync.Once
	corpusLibs []corpusLib
	corpusErr  error
)

// codeCorpus builds (or reuses) the corpus and lists its libraries. It skips
// (fails under CI=true) when the fixture tarball or a tool is missing.
func codeCorpus(t *testing.T) []corpusLib {
	t.Helper()
	if testing.Short() {
		t.Skip("the code corpus compiles OpenSSL sources at 5 levels for 3 targets (minutes once, then cached)")
	}
	rel := testfixture.Get(t, "4.0.2")
	tools := map[string]string{}
	for _, name := range []string{"perl", "make", "clang-14", "llvm-ar-14", "llvm-lipo-14", "gcc", "strip", "ld64.lld-14"} {
		p, err := exec.LookPath(name)
		if err != nil {
			testfixture.Missing(t, "%s not on PATH (scripts/setup-cross.sh; apt-get install -y gcc binutils): %v", name, err)
		}
		tools[name] = p
	}
	tc, err := buildtc.New("cross")
	if err != nil {
		testfixture.Missing(t, "%v", err)
	}
	corpusOnce.Do(func() {
		corpusLibs, corpusErr = buildCodeCorpus(context.Background(), t, rel.Tarball, tools, tc)
	})
	if corpusErr != nil {
		t.Fatal(corpusErr)
	}
	return corpusLibs
}

// corpusKey hashes everything that decides the corpus's bytes.
func corpusKey(ctx context.Context, tools map[string]string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, corpusVersion, corpusCrypto, corpusSSL, corpusAsm, corpusLevels)
	for _, t := range corpusTargets {
		fmt.Fprintln(h, t.name, t.configure, t.flavour, t.cflags, t.arFormat)
	}
	for _, name := range []string{"clang-14", "gcc"} {
		out, err := exec.CommandContext(ctx, tools[name], "--version").Output()
		if err != nil {
			return "", fmt.Errorf("%s --version: %w", name, err)
		}
		h.Write(out)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func buildCodeCorpus(ctx context.Context, t *testing.T, tarball string, tools map[string]string, tc buildtc.Toolchain) ([]corpusLib, error) {
	key, err := corpusKey(ctx, tools)
	if err != nil {
		return nil, err
	}
	root := filepath.Join(testfixture.Store(), "code-corpus")
	sum := sha256.Sum256([]byte(key + corpusOutputs))
	final := filepath.Join(root, hex.EncodeToString(sum[:8]))
	libs := corpusList(final)
	if _, err := os.Stat(filepath.Join(final, "complete")); err == nil {
		return libs, nil
	}
	unlock := testfixture.Lock(t, final+".lock")
	defer unlock()
	if _, err := os.Stat(filepath.Join(final, "complete")); err == nil {
		return libs, nil // another test binary built it while this one waited
	}
	defer testfixture.BuildSlot(t)()
	t.Logf("building the code corpus into %s (minutes; cached afterwards)", final)
	// The work directory survives a failed run, so the next one resumes
	// where it stopped (every step writes its output by rename); it is
	// removed once the corpus is published.
	work := filepath.Join(root, "work-"+key)
	src := filepath.Join(work, "src")
	if _, err := os.Stat(src); err != nil {
		if err := os.MkdirAll(work, 0o755); err != nil {
			return nil, err
		}
		// The pinned release fixture, unpacked with tar: unpack imports
		// this package, so an internal test cannot use it.
		tmp := src + ".tmp"
		os.RemoveAll(tmp)
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return nil, err
		}
		if out, err := exec.CommandContext(ctx, "tar", "-xzf", tarball, "-C", tmp, "--strip-components=1").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("unpack %s: %v: %s", tarball, err, out)
		}
		if err := os.Rename(tmp, src); err != nil {
			return nil, err
		}
	}
	out := filepath.Join(work, "out")
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	b := &corpusBuilder{ctx: ctx, src: src, work: work, out: out, tools: tools}
	for _, tg := range corpusTargets {
		if err := b.target(tc, tg); err != nil {
			return nil, fmt.Errorf("code corpus %s: %w", tg.name, err)
		}
	}
	for _, lv := range corpusLevels {
		dir := filepath.Join(out, "macos-universal2", lv)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		for _, lib := range []string{"libcrypto.a", "libssl.a"} {
			if err := b.run("", nil, tools["llvm-lipo-14"], "-create",
				filepath.Join(out, "macos-arm64", lv, lib), filepath.Join(out, "macos-x86_64", lv, lib),
				"-output", filepath.Join(dir, lib)); err != nil {
				return nil, err
			}
		}
	}
	if err := os.WriteFile(filepath.Join(out, "complete"), []byte(key+"\n"), 0o644); err != nil {
		return nil, err
	}
	// Publish atomically: a half-built corpus is never reused.
	if err := os.Rename(out, final); err != nil {
		return nil, err
	}
	return libs, os.RemoveAll(work)
}

// corpusList names every library a complete corpus under dir holds.
func corpusList(dir string) []corpusLib {
	var libs []corpusLib
	for _, lv := range corpusLevels {
		for _, tg := range []string{"macos-arm64", "macos-x86_64", "macos-universal2", "linux-x86_64"} {
			kinds := []string{"libcrypto.a", "libssl.a"}
			switch tg {
			case "linux-x86_64":
				kinds = append(kinds, "libcrypto.so", "libcrypto.stripped.so")
			case "macos-arm64", "macos-x86_64":
				kinds = append(kinds, "libcrypto.dylib")
			}
			for _, k := range kinds {
				libs = append(libs, corpusLib{Path: filepath.Join(dir, tg, lv, k), Target: tg, Level: lv, Kind: k})
			}
		}
	}
	return libs
}

type corpusBuilder struct {
	ctx            context.Context
	src, work, out string
	tools          map[string]string
}

func (b *corpusBuilder) run(dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(b.ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		tail := string(out)
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, tail)
	}
	return nil
}

// parallel runs jobs on every core, returning the first error.
func (b *corpusBuilder) parallel(jobs []func() error) error {
	ch := make(chan func() error)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				if err := j(); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, j := range jobs {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		ch <- j
	}
	close(ch)
	wg.Wait()
	return first
}

func (b *corpusBuilder) target(tc buildtc.Toolchain, tg corpusTarget) error {
	bld := filepath.Join(b.work, "build-"+tg.name)
	if err := os.MkdirAll(bld, 0o755); err != nil {
		return err
	}
	cc := []string{b.tools["gcc"]}
	env := []string{"CC=" + b.tools["gcc"]}
	if tg.macos != nil {
		tcDir := filepath.Join(b.work, "tc-"+tg.name)
		if err := os.RemoveAll(tcDir); err != nil { // Prepare wants a new directory
			return err
		}
		e, err := tc.Prepare(b.ctx, tcDir, *tg.macos)
		if err != nil {
			return err
		}
		cc = []string{filepath.Join(e.Bin, "cc")}
		env = append([]string{"PATH=" + e.Bin + string(os.PathListSeparator) + os.Getenv("PATH"), "CC=" + cc[0]}, e.Vars...)
	}
	// Configure for the target's headers and ASM defines, then generate
	// only the public headers the chosen files include.
	if _, err := os.Stat(filepath.Join(bld, "Makefile")); err != nil {
		if err := b.run(bld, env, b.tools["perl"], filepath.Join(b.src, "Configure"), tg.configure,
			"no-shared", "no-apps", "no-docs", "no-tests"); err != nil {
			return err
		}
	}
	mk, err := os.ReadFile(filepath.Join(bld, "Makefile"))
	if err != nil {
		return err
	}
	headers, defines := makefileFacts(string(mk))
	if err := b.run(bld, env, b.tools["make"], append([]string{"-j", fmt.Sprint(runtime.NumCPU())}, headers...)...); err != nil {
		return err
	}
	inc := []string{"-I" + filepath.Join(bld, "crypto"), "-I" + filepath.Join(b.src, "crypto"), "-I" + bld, "-I" + filepath.Join(bld, "include"), "-I" + filepath.Join(bld, "providers", "common", "include"),
		"-I" + b.src, "-I" + filepath.Join(b.src, "include"), "-I" + filepath.Join(b.src, "providers", "common", "include"),
		"-I" + filepath.Join(b.src, "providers", "implementations", "include")}

	objs := filepath.Join(b.work, "obj-"+tg.name)
	var jobs []func() error
	var asmObjs []string
	for _, a := range corpusAsm[tg.flavour] {
		asm := filepath.Join(bld, a[1])
		obj := filepath.Join(objs, "asm", "libcrypto-lib-"+strings.TrimSuffix(strings.TrimSuffix(a[1], ".S"), ".s")+".o")
		asmObjs = append(asmObjs, obj)
		jobs = append(jobs, func() error {
			if err := os.MkdirAll(filepath.Dir(obj), 0o755); err != nil {
				return err
			}
			if exists(obj) {
				return nil
			}
			if err := b.run(bld, env, b.tools["perl"], filepath.Join(b.src, a[0]), tg.flavour, asm); err != nil {
				return err
			}
			args := slices.Concat(cc[1:], inc, defines, tg.cflags, []string{"-c", "-o", obj + ".tmp", asm})
			if err := b.run(bld, env, cc[0], args...); err != nil {
				return err
			}
			return os.Rename(obj+".tmp", obj)
		})
	}
	objsOf := map[string][]string{}
	for _, lv := range corpusLevels {
		for _, lib := range []struct {
			name, prefix string
			files        []string
		}{{"libcrypto.a", "libcrypto-lib-", corpusCrypto}, {"libssl.a", "libssl-lib-", corpusSSL}} {
			for _, f := range lib.files {
				obj := filepath.Join(objs, lv, lib.prefix+strings.TrimSuffix(filepath.Base(f), ".c")+".o")
				objsOf[lv+lib.name] = append(objsOf[lv+lib.name], obj)
				jobs = append(jobs, func() error {
					if err := os.MkdirAll(filepath.Dir(obj), 0o755); err != nil {
						return err
					}
					if exists(obj) {
						return nil
					}
					args := slices.Concat(cc[1:], inc, defines, tg.cflags, []string{lv, "-c", "-o", obj + ".tmp", filepath.Join(b.src, f)})
					if err := b.run(bld, env, cc[0], args...); err != nil {
						return err
					}
					return os.Rename(obj+".tmp", obj)
				})
			}
		}
	}
	if err := b.parallel(jobs); err != nil {
		return err
	}
	for _, lv := range corpusLevels {
		dir := filepath.Join(b.out, tg.name, lv)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		crypto := append(slices.Clone(objsOf[lv+"libcrypto.a"]), asmObjs...)
		if err := b.run("", env, b.tools["llvm-ar-14"], slices.Concat([]string{"--format=" + tg.arFormat, "rcs", filepath.Join(dir, "libcrypto.a")}, crypto)...); err != nil {
			return err
		}
		if err := b.run("", env, b.tools["llvm-ar-14"], slices.Concat([]string{"--format=" + tg.arFormat, "rcs", filepath.Join(dir, "libssl.a")}, objsOf[lv+"libssl.a"])...); err != nil {
			return err
		}
		if tg.macos != nil {
			// A linked image, for LC_FUNCTION_STARTS.
			if err := b.run("", env, b.tools["ld64.lld-14"], slices.Concat([]string{"-arch", tg.arch,
				"-platform_version", "macos", tg.macos.MinOS, tg.macos.MinOS, "-dylib", "-undefined", "dynamic_lookup",
				"-o", filepath.Join(dir, "libcrypto.dylib")}, crypto)...); err != nil {
				return err
			}
		} else {
			// The perlasm objects reference OPENSSL_ia32cap_P and
			// OPENSSL_cpuid_setup from crypto/cpuid.c, which the subset
			// leaves out; a shared object must define them.
			stub := filepath.Join(dir, "cpuid_stub.c")
			if err := os.WriteFile(stub, []byte(cpuidStub), 0o644); err != nil {
				return err
			}
			stubObj := filepath.Join(dir, "cpuid_stub.o")
			if err := b.run("", env, cc[0], slices.Concat(cc[1:], tg.cflags, []string{lv, "-c", "-o", stubObj, stub})...); err != nil {
				return err
			}
			so := filepath.Join(dir, "libcrypto.so")
			if err := b.run("", env, b.tools["gcc"], slices.Concat([]string{"-shared", "-o", so, stubObj}, crypto)...); err != nil {
				return err
			}
			for _, f := range []string{stub, stubObj} {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
			if err := b.run("", env, b.tools["strip"], "-o", filepath.Join(dir, "libcrypto.stripped.so"), so); err != nil {
				return err
			}
		}
	}
	return nil
}

// cpuidStub stands in for crypto/cpuid.c when linking the shared object.
const cpuidStub = `unsigned int OPENSSL_ia32cap_P[10] __attribute__((visibility("hidden")));
void OPENSSL_cpuid_setup(void) __attribute__((visibility("hidden")));
void OPENSSL_cpuid_setup(void) { OPENSSL_ia32cap_P[0] |= 1; }
`

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// makefileFacts reads, from OpenSSL's generated Makefile, the public
// headers to generate (GENERATED_MANDATORY entries under include/) and the
// target's ASM defines (from a libcrypto compile rule).
func makefileFacts(mk string) (headers, defines []string) {
	mk = strings.ReplaceAll(mk, "\\\n", " ")
	for _, line := range strings.Split(mk, "\n") {
		if rest, ok := strings.CutPrefix(line, "GENERATED_MANDATORY="); ok {
			for _, f := range strings.Fields(rest) {
				if strings.HasPrefix(f, "include/") {
					headers = append(headers, f)
				}
			}
		}
		if defines == nil && strings.Contains(line, "libcrypto-lib-bn_add.d.tmp") {
			for _, f := range strings.Fields(line) {
				if strings.HasPrefix(f, "-D") {
					defines = append(defines, f)
				}
			}
			if defines == nil {
				defines = []string{}
			}
		}
	}
	return headers, defines
}

// corpusRow is one classified slice of the corpus.
type corpusRow struct {
	lib corpusLib
	v   inspect.CodeVerdict
}

// TestCodeCalibration is the classifier's proof on the labelled corpus:
// every slice of every library classified as built (-O0 against every
// other level), also when the assembly objects are measured with the C and
// when nothing is sampled away. It logs the calibration table and the
// margin between the closest -O0 and the closest optimised score.
func TestCodeCalibration(t *testing.T) {
	libs := codeCorpus(t)
	ctx := context.Background()
	withAsm := defaultCodeOptions
	withAsm.measureAsm = true
	var rows []corpusRow
	for _, l := range libs {
		f, err := os.Open(l.Path)
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		want := inspect.CodeOptimised
		if l.O0() {
			want = inspect.CodeO0
		}
		for _, run := range []struct {
			name string
			opt  codeOptions
		}{{"default", defaultCodeOptions}, {"unsampled", unsampled}, {"assembly measured", withAsm}} {
			vs, err := codeEvidence(ctx, l.Path, f, st.Size(), run.opt)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			if want := 1 + b2i(l.Target == "macos-universal2"); len(vs) != want {
				t.Fatalf("%s: %d slices, want %d", l, len(vs), want)
			}
			for _, v := range vs {
				if v.Class != want {
					t.Errorf("%s (%s): %s, want %s", l, run.name, v, want)
				}
				if run.name == "default" {
					rows = append(rows, corpusRow{l, v})
				}
			}
		}
		f.Close()
	}
	t.Log("\n" + calibrationTable(rows))
}

// calibrationTable renders the rows as Markdown, with the margins.
func calibrationTable(rows []corpusRow) string {
	var b strings.Builder
	b.WriteString("| target | level | library | arch | score | functions | arg spills | reloads | branch-next | frame ld/st per insn |\n|---|---|---|---|---|---|---|---|---|---|\n")
	minO0, maxOpt := corpusRow{v: inspect.CodeVerdict{Score: 2}}, corpusRow{v: inspect.CodeVerdict{Score: -1}}
	for _, r := range rows {
		f := r.v.Features
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.3f | %d | %.3f | %.3f | %.3f | %.3f |\n", r.lib.Target, r.lib.Level, r.lib.Kind,
			r.v.Arch, r.v.Score, r.v.Functions, f.ArgSpill, f.Reload, f.BranchNext, f.FrameShare)
		if r.lib.O0() && r.v.Score < minO0.v.Score {
			minO0 = r
		}
		if !r.lib.O0() && r.v.Score > maxOpt.v.Score {
			maxOpt = r
		}
	}
	fmt.Fprintf(&b, "\nclosest -O0: %.3f (%s %s); closest optimised: %.3f (%s %s); gap %.3f; threshold %.2f: margins %.3f and %.3f\n",
		minO0.v.Score, minO0.lib, minO0.v.Arch, maxOpt.v.Score, maxOpt.lib, maxOpt.v.Arch,
		minO0.v.Score-maxOpt.v.Score, O0Threshold, minO0.v.Score-O0Threshold, O0Threshold-maxOpt.v.Score)
	return b.String()
}
