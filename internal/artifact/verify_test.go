package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/dispatch"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// published writes a small artifact tree with its manifest, as a build does.
func published(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "openssl-macos-arm64")
	testfixture.WriteTree(t, dir, map[string]string{
		"include/openssl/ssl.h": "/* ssl */\n",
		"lib/libcrypto.a":       "!<arch>\ncrypto",
		"lib/libssl.a":          "!<arch>\nssl",
		"sbom.json":             "{}\n",
	})
	if err := WriteManifest(context.Background(), dir, slice()); err != nil {
		t.Fatal(err)
	}
	return dir
}

// slice is the manifest of an arm64 slice as the build records it.
func slice() *Manifest {
	return &Manifest{Name: "openssl-macos-arm64",
		Target: platform.Slice{Name: "arm64", Configure: "darwin64-arm64-cc", OS: "macos", Arch: "arm64", MinOS: "11.0",
			Flags: []string{"-mmacosx-version-min=11.0"}, Options: []string{"no-shared"}, OpenSSLDir: "/opt/homebrew/etc/openssl@3"},
		Configure: Configure{
			Argv:   []string{"perl", "Configure", "darwin64-arm64-cc", "--prefix=/opt/osslbuild", "--openssldir=/opt/homebrew/etc/openssl@3", "no-shared", "-mmacosx-version-min=11.0"},
			Env:    []string{"PATH=$WORK/toolchain/bin:/usr/bin:/bin", "LC_ALL=C"},
			CFLAGS: "-O3 -Wall -mmacosx-version-min=11.0",
		}}
}

func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir string)
		want   []string // substrings of the error, each naming the file
	}{
		{"untouched", func(*testing.T, string) {}, nil},
		{"an executable file (0755 in the tar stream)", func(t *testing.T, dir string) {
			os.Chmod(filepath.Join(dir, "lib/libssl.a"), 0o755)
		}, nil},
		{"line appended to a header", func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "include/openssl/ssl.h"), "#define X 1\n")
		}, []string{"include/openssl/ssl.h: changed: the manifest lists sha256 " + sum("/* ssl */\n") + ", the file has " + sum("/* ssl */\n#define X 1\n")}},
		{"file removed", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "lib/libssl.a"))
		}, []string{"lib/libssl.a: missing: the manifest lists sha256 " + sum("!<arch>\nssl") + ", no such file"}},
		{"file added", func(t *testing.T, dir string) {
			testfixture.WriteTree(t, dir, map[string]string{"include/openssl/extra.h": "x"})
		}, []string{"include/openssl/extra.h: not listed in the manifest (sha256 " + sum("x") + ")"}},
		{"symlink to a host file", func(t *testing.T, dir string) {
			os.Symlink("/etc/hostname", filepath.Join(dir, "include/openssl/leak.h"))
		}, []string{"include/openssl/leak.h: symlink to /etc/hostname, expected a regular file (not listed in the manifest): not opened"}},
		{"listed file replaced by a symlink to /dev/zero", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "lib/libssl.a")
			os.Remove(p)
			os.Symlink("/dev/zero", p)
		}, []string{"lib/libssl.a: symlink to /dev/zero, expected a regular file (the manifest lists sha256 " + sum("!<arch>\nssl") + "): not opened"}},
		{"FIFO", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "lib/pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"lib/pipe: named pipe (FIFO), expected a regular file"}},
		{"several at once, all named", func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "lib/libcrypto.a"), "x")
			os.Remove(filepath.Join(dir, "sbom.json"))
		}, []string{"2 files differ from manifest.json", "lib/libcrypto.a: changed", "sbom.json: missing"}},
	} {
		// CopyVerified (a cache hit's copy) gives Verify's verdict on its
		// source, and copies nothing that is not a file or a directory.
		for _, how := range []struct {
			name   string
			verify func(ctx context.Context, dir string) (*Manifest, error)
		}{
			{"Verify", Verify},
			{"CopyVerified", func(ctx context.Context, dir string) (*Manifest, error) {
				dst := filepath.Join(t.TempDir(), "copy")
				m, tarSum, err := CopyVerified(ctx, dir, dst, "top")
				filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
					rel, _ := filepath.Rel(dst, p)
					switch {
					case err != nil || d.IsDir():
					case !d.Type().IsRegular():
						t.Errorf("copied %s (%v)", p, d.Type())
					case rel != ManifestName && (m == nil || m.Files[filepath.ToSlash(rel)] == ""):
						t.Errorf("copied %s, which the manifest does not list", rel)
					}
					return nil
				})
				if err == nil {
					copied, verr := Verify(ctx, dst)
					want, terr := WriteTarball(ctx, dst, "top", time.Unix(m.SourceDateEpoch, 0), io.Discard)
					if verr != nil || terr != nil || tarSum != want.TarSHA256 || !reflect.DeepEqual(copied, m) {
						t.Errorf("the copy: %v, %v; tar stream %s, of the copy %s", verr, terr, tarSum, want.TarSHA256)
					}
				}
				return m, err
			}},
		} {
			t.Run(tc.name+"/"+how.name, func(t *testing.T) {
				dir := published(t)
				tc.tamper(t, dir)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				m, err := how.verify(ctx, dir)
				if tc.want == nil {
					if err != nil || m.Name != "openssl-macos-arm64" {
						t.Fatalf("err = %v", err)
					}
					return
				}
				var ve *VerifyError
				if !errors.Is(err, ErrMismatch) || !errors.As(err, &ve) || m == nil {
					t.Fatalf("err = %v, want a *VerifyError", err)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				if !strings.HasPrefix(err.Error(), "verify "+dir+": ") {
					t.Errorf("error does not name the artifact: %v", err)
				}
			})
		}
	}
}

// The manifest itself must be a regular file: a symlinked or FIFO manifest
// is refused without being read (a FIFO would block forever).
func TestVerifyManifestNotRegular(t *testing.T) {
	dir := published(t)
	real := filepath.Join(t.TempDir(), "m.json")
	os.Rename(filepath.Join(dir, ManifestName), real)
	os.Symlink(real, filepath.Join(dir, ManifestName))
	if _, err := Verify(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("symlinked manifest: %v", err)
	}
	os.Remove(filepath.Join(dir, ManifestName))
	if err := syscall.Mkfifo(filepath.Join(dir, ManifestName), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "named pipe (FIFO)") {
		t.Errorf("FIFO manifest: %v", err)
	}
	os.Remove(filepath.Join(dir, ManifestName))
	os.WriteFile(filepath.Join(dir, ManifestName), []byte(`{"schema":"other"}`), 0o644)
	if _, err := Verify(context.Background(), dir); err == nil || !strings.Contains(err.Error(), `schema "other"`) {
		t.Errorf("foreign manifest: %v", err)
	}
	if _, err := Verify(context.Background(), t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no manifest: %v", err)
	}
}

// A manifest listing a path outside the artifact is reported missing, never
// opened.
func TestVerifyManifestPathsNotOpened(t *testing.T) {
	dir := published(t)
	m, err := LoadManifest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Files["../../../../etc/hostname"] = sum("x")
	writeManifestAs(t, dir, m)
	_, err = Verify(context.Background(), dir)
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "../../../../etc/hostname: missing") {
		t.Errorf("err = %v", err)
	}
}

func TestVerifyCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Verify(ctx, published(t)); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestCompareFiles(t *testing.T) {
	got := CompareFiles(map[string]string{"a": "1", "b": "2", "c": "3"},
		map[string]Entry{"a": {SHA256: "1"}, "b": {SHA256: "9"}, "d": {SHA256: "4"}, "e": {Type: "socket"}})
	want := []string{"b: changed", "c: missing", "d: not listed", "e: socket"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i].String(), w) {
			t.Errorf("[%d] %q, want prefix %q", i, got[i], w)
		}
	}
}

func appendTo(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(s)
	f.Close()
}

func writeManifestAs(t *testing.T, dir string, m *Manifest) {
	t.Helper()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyManifest: the one verification of a manifest's own fields
// refuses a Configure record osslbuild would not have written for the
// slice it records (CFLAGS in Configure's environment, an argv that is not
// the slice's, cflags without -O3), in a slice and inside a universal
// manifest alike, and accepts the pyca way only when the manifest says it
// is that variant.
func TestVerifyManifest(t *testing.T) {
	universal := func(edit func(*Manifest)) *Manifest {
		s := slice()
		edit(s)
		return &Manifest{Name: "openssl-macos-universal2", Slices: []*Manifest{s}}
	}
	for _, tt := range []struct {
		name string
		m    *Manifest
		want string // "" = passes
	}{
		{"as built", slice(), ""},
		{"CFLAGS in Configure's environment", func() *Manifest {
			m := slice()
			m.Configure.Env = append(m.Configure.Env, "CFLAGS=-O0")
			return m
		}(), "configure environment sets CFLAGS=-O0"},
		{"argv with another flag", func() *Manifest {
			m := slice()
			m.Configure.Argv = append(m.Configure.Argv, "-O0")
			return m
		}(), "configure argv"},
		{"argv with another openssldir", func() *Manifest {
			m := slice()
			m.Configure.Argv[4] = "--openssldir=/tmp/x"
			return m
		}(), "the target records openssldir /opt/homebrew/etc/openssl@3"},
		{"cflags without -O3", func() *Manifest {
			m := slice()
			m.Configure.CFLAGS = "-mmacosx-version-min=11.0"
			return m
		}(), "the gate passes -O3 only"},
		{"pyca way, not said", func() *Manifest {
			m := slice()
			m.Configure.Env = append(m.Configure.Env, "CFLAGS=-mmacosx-version-min=11.0")
			return m
		}(), "configure environment sets CFLAGS"},
		{"pyca way, said", func() *Manifest {
			m := slice()
			m.Variant = "pyca-way"
			m.Configure.Argv = m.Configure.Argv[:6]
			m.Configure.Env = append(m.Configure.Env, "CFLAGS=-mmacosx-version-min=11.0")
			m.Configure.CFLAGS = "-mmacosx-version-min=11.0"
			return m
		}(), ""},
		{"universal, its slice's CFLAGS=-O0", universal(func(s *Manifest) { s.Configure.Env = append(s.Configure.Env, "CFLAGS=-O0") }), "arm64 slice: configure environment sets CFLAGS=-O0"},
		{"universal with two x86_64 slices", func() *Manifest {
			x := slice()
			x.Target.Arch = "x86_64"
			return &Manifest{Name: "openssl-macos-universal2", Target: platform.Slice{Arch: "x86_64+arm64"}, Slices: []*Manifest{x, x}}
		}(), "its target names the architectures x86_64+arm64, its slices are x86_64, x86_64"},
		{"universal with its two slices", func() *Manifest {
			a, x := slice(), slice()
			x.Target.Arch = "x86_64"
			return &Manifest{Name: "openssl-macos-universal2", Target: platform.Slice{Arch: "x86_64+arm64"}, Slices: []*Manifest{x, a}}
		}(), ""},
		{"universal with a Configure run of its own", func() *Manifest {
			m := universal(func(*Manifest) {})
			m.Configure.Argv = []string{"perl"}
			return m
		}(), "records a Configure run of its own"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(VerifyManifest(tt.m), "; ")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestExpectOf: a manifest's expectation for a library holds its compiled
// code to the slice's -march with the dispatch list the build recorded for
// that library (libssl's empty list does not replace libcrypto's), and a
// manifest from before the record with the list known for its release.
func TestExpectOf(t *testing.T) {
	x86 := platform.Slice{Name: "x86_64", Configure: "darwin64-x86_64-cc", OS: "macos", Arch: "x86_64", MinOS: "10.12",
		Flags: []string{"-mmacosx-version-min=10.12", "-march=core2"}}
	enc := dispatch.Func{Name: "encode_base64_avx2", File: "crypto/evp/enc_b64_avx2.c", Line: 481, Target: "avx2"}
	m := &Manifest{OpenSSL: Source{Version: "4.0.2"}, Target: x86, CodeEvidence: []CodeEvidence{
		{Arch: "x86_64", Library: "libcrypto.a", ISA: &ISARecord{Level: "x86-64-v3", Limit: "core2", List: "the source tree of OpenSSL 4.0.2", Dispatched: []dispatch.Func{enc}}},
		{Arch: "x86_64", Library: "libssl.a", ISA: &ISARecord{Level: "core2", Limit: "core2", List: "the source tree of OpenSSL 4.0.2"}},
	}}
	// has reports whether e is held to a dispatch list naming the base64
	// encoder.
	has := func(e validate.Expect) bool {
		_, ok := e.ISA.Dispatch.Find("encode_base64_avx2")
		return ok
	}
	crypto := ExpectOf(m, x86, "libcrypto.a")
	if crypto.ISA == nil || crypto.ISA.Limit != "core2" || !has(crypto) || crypto.ISA.Dispatch.Name != "the source tree of OpenSSL 4.0.2" {
		t.Errorf("libcrypto.a: %+v", crypto.ISA)
	}
	if ssl := ExpectOf(m, x86, "libssl.a"); ssl.ISA == nil || has(ssl) {
		t.Errorf("libssl.a: %+v", ssl.ISA)
	}
	// A universal manifest: the record is in its slice's part.
	u := &Manifest{OpenSSL: Source{Version: "4.0.2"}, Slices: []*Manifest{m}}
	if e := ExpectOf(u, x86, "libcrypto.a"); e.ISA == nil || !has(e) {
		t.Errorf("universal: %+v", e.ISA)
	}
	old := &Manifest{OpenSSL: Source{Version: "4.0.2"}, Target: x86}
	if e := ExpectOf(old, x86, "libcrypto.a"); e.ISA == nil || e.ISA.Dispatch.Name != "OpenSSL 4.0 (known)" || !has(e) {
		t.Errorf("a manifest without the record: %+v", e.ISA)
	}
	// arm64 is held to its -mcpu, apple-m1 when none is given.
	arm := platform.Slice{Name: "arm64", OS: "macos", Arch: "arm64", MinOS: "11.0", Flags: []string{"-mmacosx-version-min=11.0"}}
	if e := ExpectOf(old, arm, "libcrypto.a"); e.ISA == nil || e.ISA.Limit != "apple-m1" {
		t.Errorf("arm64: instruction-set expectation %+v, want apple-m1", e.ISA)
	}
	arm.Flags = append(arm.Flags, "-mcpu=apple-m2")
	if e := ExpectOf(old, arm, "libcrypto.a"); e.ISA == nil || e.ISA.Limit != "apple-m2" {
		t.Errorf("arm64 -mcpu=apple-m2: instruction-set expectation %+v, want apple-m2", e.ISA)
	}
}

// TestVerifyErrorText: one problem is the whole message; many are listed
// one to a line up to the cap, then counted (validate.CappedList).
func TestVerifyErrorText(t *testing.T) {
	many := func(n int) []FileProblem {
		var ps []FileProblem
		for i := range n {
			ps = append(ps, FileProblem{Path: fmt.Sprintf("lib/f%02d", i), Kind: FileMissing, Want: "ab"})
		}
		return ps
	}
	for _, tt := range []struct {
		n          int
		head, tail string
		lines      int
	}{
		{1, "verify a: lib/f00: missing", "no such file", 0},
		{3, "verify a: 3 files differ from manifest.json:", "\tlib/f02: missing: the manifest lists sha256 ab, no such file", 3},
		{20, "verify a: 20 files differ from manifest.json:", "\tlib/f19: missing: the manifest lists sha256 ab, no such file", 20},
		{25, "verify a: 25 files differ from manifest.json:", "\t... and 5 more", 21},
	} {
		s := (&VerifyError{Dir: "a", Problems: many(tt.n)}).Error()
		if !strings.HasPrefix(s, tt.head) || !strings.HasSuffix(s, tt.tail) || strings.Count(s, "\n") != tt.lines {
			t.Errorf("%d problems:\n%s", tt.n, s)
		}
	}
}

// TestCopyVerifiedRoot: an entry whose tree is a link to a directory is
// refused as a link, not followed.
func TestCopyVerifiedRoot(t *testing.T) {
	dir := published(t)
	link := filepath.Join(t.TempDir(), "entry")
	os.Symlink(dir, link)
	_, _, err := CopyVerified(context.Background(), link, filepath.Join(t.TempDir(), "copy"), "top")
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "symlink to "+dir+", expected a directory") {
		t.Errorf("err = %v", err)
	}
}
