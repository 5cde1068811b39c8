package link_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/link"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/universal"
	"github.com/osslbuild/osslbuild/smoke"
)

// TestSmokeLinux is the smoke target on osslbuild's real linux-x86_64
// build of OpenSSL 4.0.2: every known answer, the TLS 1.3 handshake, and
// build strings equal to the ones validation read.
func TestSmokeLinux(t *testing.T) {
	dir := e2e.LinuxX8664(t)
	var log, summary bytes.Buffer
	res, err := link.Smoke(context.Background(), link.SmokeOptions{Artifact: dir, Work: t.TempDir(), Log: &log, Summary: &summary})
	t.Log("\n" + log.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || !res[0].Ran || res[0].Report == nil {
		t.Fatalf("results %+v", res)
	}
	r := res[0].Report
	if r.Failed != 0 || r.Skipped != 0 || r.Passed < 15 {
		t.Errorf("%d passed, %d failed, %d skipped: want every test run and passed", r.Passed, r.Failed, r.Skipped)
	}
	names := map[string]bool{}
	for _, tt := range r.Tests {
		names[tt.Name] = true
	}
	for _, want := range []string{"ML-KEM-768", "ML-DSA-65", "TLS 1.3 in memory", "Ed25519 RFC 8032 1", "X25519 RFC 7748 6.1", "AES-256-GCM 16"} {
		if !names[want] {
			t.Errorf("no %s test in %v", want, names)
		}
	}
	if !strings.HasPrefix(r.Version, "OpenSSL "+e2e.Version+" ") || r.Compiler != res[0].Library.Compiler || r.Platform != "platform: linux-x86_64" {
		t.Errorf("build strings %q %q %q, library says %q", r.Version, r.Compiler, r.Platform, res[0].Library.Compiler)
	}
	if !strings.Contains(summary.String(), "| TLS 1.3 in memory | pass |") {
		t.Errorf("step summary lacks the handshake row:\n%s", summary.String())
	}
	// The fixture was built through the link stage, which the manifest records.
	m, err := artifact.LoadManifest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.LinkChecks) != 1 || m.LinkChecks[0].Platform != "linux x86_64" || m.LinkChecks[0].Program != smoke.Name || m.LinkChecks[0].Members < 500 {
		t.Errorf("manifest link checks: %+v", m.LinkChecks)
	}
}

// TestSmokeFailureNames: a wrong answer fails the run, naming the test, the
// expected and the computed answer; build strings that differ from the
// library's fail it too.
func TestSmokeFailureNames(t *testing.T) {
	dir := e2e.LinuxX8664(t)
	for _, tt := range []struct {
		name, old, new string
		want           []string
	}{
		{"wrong answer", `"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "FIPS 180-2 example 1"`,
			`"00000000000000000000000000000000000000000000000000000000000000ff", "FIPS 180-2 example 1"`,
			[]string{"SHA-256 abc: expected 00000000000000000000000000000000000000000000000000000000000000ff, got ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}},
		{"other build strings", `printf("platform\t%s\n", OpenSSL_version(OPENSSL_PLATFORM))`, `printf("platform\t%s\n", "platform: darwin64-arm64-cc")`,
			[]string{`OpenSSL_version(OPENSSL_PLATFORM): expected "platform: linux-x86_64" (read from libcrypto.a), got "platform: darwin64-arm64-cc"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := bytes.Replace(smoke.Source, []byte(tt.old), []byte(tt.new), 1)
			if bytes.Equal(src, smoke.Source) {
				t.Fatalf("%q not in smoke.c", tt.old)
			}
			_, err := link.Smoke(context.Background(), link.SmokeOptions{Artifact: dir, Work: t.TempDir(),
				Program: link.Program{Name: "smoke.c", Source: src}})
			if !errors.Is(err, link.ErrSmoke) {
				t.Fatalf("got %v, want a smoke failure", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestSmokeCrossLinksOnly: here a macOS artifact's program is linked (the
// universal2 libraries for both architectures) and the output says it
// could not run.
func TestSmokeCrossLinksOnly(t *testing.T) {
	dir := filepath.Join(e2e.Universal2(t), "dist", universal.Name)
	var log bytes.Buffer
	res, err := link.Smoke(context.Background(), link.SmokeOptions{Artifact: dir, Work: t.TempDir(), Log: &log, Toolchain: "cross", Host: "linux/amd64"})
	t.Log("\n" + log.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("%d results, want arm64 and x86_64", len(res))
	}
	for _, r := range res {
		if r.Ran || !strings.Contains(r.NotRun, "linked only") || r.Linked.Platform != "macos "+r.Slice.MinOS {
			t.Errorf("%s: %+v", r.Slice, r)
		}
	}
	if !strings.Contains(log.String(), "cannot run on linux/amd64") {
		t.Errorf("output does not say the programs could not run:\n%s", log.String())
	}
}

// TestUnresolvedMember: -all_load catches a library that lost a member
// only other members use. Without libcrypto-lib-ts_rsp_sign.o (the
// time-stamp responder's TS_RESP_CTX_*), the smoke program still links the
// usual way (nothing it pulls in needs the member: checked by hand with cc
// on linux-x86_64), but ts_conf.o, loaded with every other member, does
// not resolve.
func TestUnresolvedMember(t *testing.T) {
	for _, target := range []string{"linux-x86_64", "arm64", "x86_64"} {
		t.Run(target, func(t *testing.T) {
			var src string
			var slice platform.Slice
			if target == "linux-x86_64" {
				src, slice = e2e.LinuxX8664(t), platform.Slice{OS: "linux", Arch: "x86_64"}
			} else {
				src = e2e.Slice(t, target)
				m, err := artifact.LoadManifest(context.Background(), src)
				if err != nil {
					t.Fatal(err)
				}
				slice = platform.Slice{OS: "macos", Arch: target, MinOS: m.Target.MinOS}
			}
			dir := testfixture.CopyTree(t, src, filepath.Join(t.TempDir(), "artifact"))
			e2e.DropLinkOnlyMember(t, dir)
			tc := toolchainFor(t, slice)
			_, err := link.Check(context.Background(), tc, link.Options{Dir: dir, Slices: []platform.Slice{slice}, Work: t.TempDir()})
			if !errors.Is(err, link.ErrUndefined) {
				t.Fatalf("got %v, want an undefined symbol", err)
			}
			if !strings.Contains(err.Error(), "TS_RESP_CTX_") || !strings.Contains(err.Error(), "referenced by libcrypto.a(libcrypto-lib-ts_conf.o)") {
				t.Errorf("error does not name a symbol of the removed member and its user: %v", err)
			}
			t.Log(err)
		})
	}
}

// TestSmokeTarget runs `go tool mage smoke` as a user would, on the
// linux-x86_64 artifact: exit status 0 and the results on stdout.
func TestSmokeTarget(t *testing.T) {
	dir := e2e.LinuxX8664(t)
	defer testfixture.MageLock(t)()
	cmd := exec.Command("go", "tool", "mage", "smoke", dir)
	cmd.Dir = testfixture.RepoRoot()
	cmd.Env = append(os.Environ(), "OSSLBUILD_WORK="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool mage smoke: %v\n%s", err, out)
	}
	for _, want := range []string{"pass TLS 1.3 in memory: TLSv1.3", "build strings equal to libcrypto.a's", "ok: "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestSmokeTrustsOnlyTheManifest: smoke takes the artifact as it was
// downloaded, a directory or its .tar.gz, and runs nothing of one that
// differs from its manifest; a FIFO given as the artifact is refused
// without being opened.
func TestSmokeTrustsOnlyTheManifest(t *testing.T) {
	dir := e2e.LinuxX8664(t)
	if _, err := link.Smoke(context.Background(), link.SmokeOptions{Artifact: dir + ".tar.gz", Work: t.TempDir()}); err != nil {
		t.Fatalf("the artifact's tarball: %v", err)
	}

	bad := testfixture.CopyTree(t, dir, filepath.Join(t.TempDir(), "openssl-linux-x86_64"))
	f, err := os.OpenFile(filepath.Join(bad, "lib", "libcrypto.a"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("\n"))
	f.Close()
	fifo := filepath.Join(t.TempDir(), "artifact.tar.gz")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{bad, "lib/libcrypto.a: changed: the manifest lists sha256"},
		{fifo, "a named pipe (FIFO), want a directory or a .tar.gz"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a FIFO must not hang it
		_, err := link.Smoke(ctx, link.SmokeOptions{Artifact: tc.path, Work: t.TempDir()})
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("smoke %s: got %v, want an error saying %q", tc.path, err, tc.want)
		}
	}
}
