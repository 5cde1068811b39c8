package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/internal/universal"
)

// TestMergeTrustsNothing builds the mini release's two slices with
// build:universal2's code, then hands build:merge copies that were tampered
// with the ways an attacker or an unlucky runner would. Every one is
// refused, naming what is wrong, with nothing published and no work
// directory left behind.
func TestMergeTrustsNothing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds with the cross toolchain; skipped in -short mode")
	}
	if _, err := toolchain.New("cross"); err != nil {
		t.Skip(err)
	}
	s := miniSettings(t, nil)
	var log strings.Builder
	rt := minitest.Runtime(t, &log)
	if _, err := pipeline.Universal2(context.Background(), s, rt); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	arm, x86 := filepath.Join(s.Out, "openssl-macos-arm64"), filepath.Join(s.Out, "openssl-macos-x86-64")

	appendTo := func(t *testing.T, p, text string) {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(text)
		f.Close()
	}
	for _, tc := range []struct {
		name   string
		slice  string // which copy to tamper with
		tamper func(t *testing.T, dir string)
		want   []string
	}{
		{"header edited", x86, func(t *testing.T, d string) {
			appendTo(t, filepath.Join(d, "include/openssl/ssl.h"), "#define EVIL 1\n")
		}, []string{"include/openssl/ssl.h: changed: the manifest lists sha256"}},
		{"header edited with its digest", x86, func(t *testing.T, d string) {
			appendTo(t, filepath.Join(d, "include/openssl/ssl.h"), "#define EVIL 1\n")
			reseal(t, d, "include/openssl/ssl.h")
		}, []string{"include/openssl/ssl.h differs between the slices", "does not declare"}},
		{"version string edited with its digest", arm, func(t *testing.T, d string) {
			p := filepath.Join(d, "lib/libcrypto.a")
			b, _ := os.ReadFile(p)
			if !bytes.Contains(b, []byte("OpenSSL 9.9.9")) {
				t.Fatal("no version string to edit")
			}
			os.WriteFile(p, bytes.ReplaceAll(b, []byte("OpenSSL 9.9.9"), []byte("OpenSSL 9.9.8")), 0o644)
			reseal(t, d, "lib/libcrypto.a")
		}, []string{"9.9.8"}},
		{"symlink to a host file", x86, func(t *testing.T, d string) {
			os.Symlink("/etc/hostname", filepath.Join(d, "include/openssl/leak.h"))
		}, []string{"include/openssl/leak.h", "symlink to /etc/hostname"}},
		{"symlink to /dev/zero in place of a library", arm, func(t *testing.T, d string) {
			os.Remove(filepath.Join(d, "lib/libssl.a"))
			os.Symlink("/dev/zero", filepath.Join(d, "lib/libssl.a"))
		}, []string{"lib/libssl.a", "symlink to /dev/zero"}},
		{"FIFO", x86, func(t *testing.T, d string) {
			if err := syscall.Mkfifo(filepath.Join(d, "include/openssl/pipe.h"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"include/openssl/pipe.h", "FIFO"}},
		{"file not in the manifest", arm, func(t *testing.T, d string) {
			os.WriteFile(filepath.Join(d, "lib/extra.a"), []byte("!<arch>\n"), 0o644)
		}, []string{"lib/extra.a: not listed in the manifest"}},
		{"manifest flags edited", x86, func(t *testing.T, d string) {
			editManifest(t, d, func(m *artifact.Manifest) { m.Target.Flags = []string{"-mmacosx-version-min=10.12"} })
		}, []string{"configure argv", "the target's Configure target, options and flags make"}},
		{"manifest flags edited with the Configure record", x86, func(t *testing.T, d string) {
			editManifest(t, d, func(m *artifact.Manifest) {
				m.Target.Flags = []string{"-mmacosx-version-min=10.12"}
				m.Configure.Argv = slices.DeleteFunc(m.Configure.Argv, func(a string) bool { return a == "-march=core2" })
			})
		}, []string{"does not match recipe", "the flags is [-mmacosx-version-min=10.12]"}},
		// The manifest of a slice built another way, resealed: Configure ran
		// with CFLAGS=-O0 in its environment, a made-up revision, an
		// all-zero signer.
		{"Configure record, revision and signer made up", x86, func(t *testing.T, d string) {
			editManifest(t, d, func(m *artifact.Manifest) {
				m.Configure.Env = append(m.Configure.Env, "CFLAGS=-O0")
				m.Osslbuild = "0000000000000000000000000000000000000000"
				m.OpenSSL.Signer = strings.Repeat("0", 40)
			})
		}, []string{"configure environment sets CFLAGS=-O0"}},
		{"all-zero signer", x86, func(t *testing.T, d string) {
			editManifest(t, d, func(m *artifact.Manifest) { m.OpenSSL.Signer = strings.Repeat("0", 40) })
		}, []string{"its source is signed by 0000000000000000000000000000000000000000, which the recipe does not pin"}},
		{"Configure argv of another plan", arm, func(t *testing.T, d string) {
			editManifest(t, d, func(m *artifact.Manifest) { m.Configure.Argv[3] = "--prefix=/usr/local" })
		}, []string{`Configure ran as`, `"--prefix=/usr/local"`, "the recipe's plan is"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			copies := map[string]string{}
			for _, d := range []string{arm, x86} {
				copies[d] = testfixture.CopyTree(t, d, filepath.Join(t.TempDir(), filepath.Base(d)))
			}
			tc.tamper(t, copies[tc.slice])
			m := s
			m.Out, m.Work = filepath.Join(t.TempDir(), "dist"), filepath.Join(t.TempDir(), "work")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a FIFO must not hang it
			defer cancel()
			_, err := pipeline.Merge(ctx, m, rt, copies[arm], copies[x86])
			if !errors.Is(err, universal.ErrRefused) {
				t.Fatalf("want a refusal, got %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			emptyOrMissing(t, m.Out)
			if left, _ := filepath.Glob(filepath.Join(m.Work, "*")); len(left) > 0 {
				t.Errorf("work directory left behind: %v", left)
			}
		})
	}
	// A refused tarball is named as given, not as the private directory it
	// was unpacked into.
	tampered := testfixture.CopyTree(t, x86, filepath.Join(t.TempDir(), filepath.Base(x86)))
	appendTo(t, filepath.Join(tampered, "include/openssl/ssl.h"), "#define EVIL 1\n")
	tgz := filepath.Join(t.TempDir(), filepath.Base(x86)+".tar.gz")
	f, err := os.Create(tgz)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.WriteTarball(context.Background(), tampered, filepath.Base(x86), time.Unix(0, 0), f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	mt := s
	mt.Out, mt.Work = filepath.Join(t.TempDir(), "dist"), filepath.Join(t.TempDir(), "work")
	if _, err := pipeline.Merge(context.Background(), mt, rt, arm, tgz); !errors.Is(err, universal.ErrRefused) ||
		!strings.Contains(err.Error(), tgz+" (unpacked)") || strings.Contains(err.Error(), mt.Work) {
		t.Errorf("refused tarball named as %v", err)
	}

	// And the untampered pair merges, also when a slice names another
	// osslbuild revision: the universal manifest states this run's, and
	// keeps the slice's as its claim.
	m := s
	m.Out = filepath.Join(t.TempDir(), "dist")
	other := testfixture.CopyTree(t, x86, filepath.Join(t.TempDir(), filepath.Base(x86)))
	editManifest(t, other, func(m *artifact.Manifest) { m.Osslbuild = "made-up revision" })
	res, err := pipeline.Merge(context.Background(), m, rt, arm, other)
	if err != nil {
		t.Fatalf("genuine slices refused: %v", err)
	}
	if res.Manifest.Osslbuild != rt.Revision || res.Manifest.Slices[0].Osslbuild != "" || res.Manifest.Slices[0].Claims.Osslbuild != "made-up revision" {
		t.Errorf("universal manifest osslbuild %q, x86_64 slice %q claiming %+v", res.Manifest.Osslbuild, res.Manifest.Slices[0].Osslbuild, res.Manifest.Slices[0].Claims)
	}
	if got, _ := artifact.Verify(context.Background(), res.Published.Dir); got == nil || len(artifact.VerifyManifest(got)) > 0 {
		t.Errorf("the published universal manifest does not verify: %v", artifact.VerifyManifest(got))
	}
}

// editManifest edits an artifact's manifest and reseals it, as someone
// who edits both would.
func editManifest(t *testing.T, dir string, edit func(*artifact.Manifest)) {
	t.Helper()
	m, err := artifact.LoadManifest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	os.Remove(filepath.Join(dir, artifact.ManifestName))
	if err := artifact.WriteManifest(context.Background(), dir, m); err != nil {
		t.Fatal(err)
	}
}

// reseal updates a file's digest in an artifact's manifest, as an attacker
// who edits both would, or a runner that built a bad library and recorded it
// honestly: what the manifest promises then holds, and only validation of
// the file itself can refuse it.
func reseal(t *testing.T, dir, rel string) {
	t.Helper()
	m, err := artifact.LoadManifest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := ctxio.SHA256(context.Background(), filepath.Join(dir, rel), true)
	if err != nil {
		t.Fatal(err)
	}
	m.Files[rel] = sum
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, artifact.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
