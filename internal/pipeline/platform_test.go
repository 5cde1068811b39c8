package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/link"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/proc"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
	"github.com/osslbuild/osslbuild/internal/testsupport/platformtest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// linuxAarch64Target is the recipe block a linux-aarch64 target adds.
const linuxAarch64Target = `
[targets.linux-aarch64]
configure = "linux-aarch64"
os = "linux"
arch = "aarch64"
flags = []
openssldir = "/opt/pyca/cryptography/openssl"
artifact = "openssl-linux-aarch64"
`

// TestNewPlatformIsData: a platform the shipped table does not have
// (linux aarch64, cross-built with Debian's gcc-aarch64-linux-gnu, run
// under qemu-user) is one table row and one recipe block, both given here
// as test data: the pipeline plans it (Configure argv, the constructed
// environment, the toolchain, the expectations), builds the mini tree with
// it, validates the ELF aarch64 objects, links the consumer and publishes;
// the program then runs the way the row says. No code outside this test
// knows linux aarch64.
func TestNewPlatformIsData(t *testing.T) {
	t.Parallel()
	testfixture.NeedTier(t, testfixture.TierGate, "the aarch64 cross compiler and the mini tree")
	testfixture.On(t, testfixture.LinuxCross)
	platformtest.Add(t, platformtest.LinuxAarch64)
	s := platform.Slice{Name: "linux-aarch64", OS: "linux", Arch: "aarch64"}
	b, err := toolchain.Choose("", s)
	if err != nil {
		t.Fatal(err)
	}
	if toolchain.Host() == "linux/amd64" && (b.Toolchain != "linux" || b.Target != "aarch64-linux-gnu-") {
		t.Fatalf("toolchain for %s on %s: %+v, want the linux toolchain with the aarch64-linux-gnu- tools", s, toolchain.Host(), b)
	}
	if _, err := toolchain.Of(b); err != nil {
		testfixture.Missing(t, "%v", err)
	}

	edits := map[string][2]string{"Configure": {`"linux-x86_64"       => "-fPIC -pthread -m64",`,
		`"linux-x86_64"       => "-fPIC -pthread -m64",` + "\n" + `    "linux-aarch64"      => "-fPIC -pthread",`}}
	st := miniSettings(t, edits)
	recipe, err := os.ReadFile(st.Recipe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.Recipe, append(recipe, linuxAarch64Target...), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	rt := minitest.Runtime(t, &log)
	res, err := pipeline.Slice(context.Background(), st, rt, "linux-aarch64", nil)
	t.Logf("log:\n%s", log.String())
	if err != nil {
		t.Fatal(err)
	}

	m := res.Manifest
	want := platform.Slice{Name: "linux-aarch64", Configure: "linux-aarch64", OS: "linux", Arch: "aarch64", Flags: []string{},
		Options: []string{"no-shared"}, OpenSSLDir: "/opt/pyca/cryptography/openssl", Artifact: "openssl-linux-aarch64"}
	if got := m.Target; got.Name != want.Name || got.Configure != want.Configure || got.OS != want.OS || got.Arch != want.Arch ||
		got.MinOS != "" || !slices.Equal(got.Options, want.Options) || got.OpenSSLDir != want.OpenSSLDir || got.Artifact != want.Artifact {
		t.Errorf("manifest target %+v, want %+v", got, want)
	}
	argv := strings.Join(m.Configure.Argv, " ")
	if !strings.HasPrefix(argv, "perl Configure linux-aarch64 --prefix=/opt/osslbuild --openssldir=/opt/pyca/cryptography/openssl") {
		t.Errorf("Configure argv %q", argv)
	}
	if !slices.ContainsFunc(m.Configure.Env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=$WORK/toolchain/bin:") }) {
		t.Errorf("environment has no wrapper directory first on PATH: %q", m.Configure.Env)
	}
	if m.Toolchain.Kind != "linux" || !strings.Contains(m.Toolchain.Tools["ar"], "aarch64-linux-gnu-ar") {
		t.Errorf("toolchain %+v, want the aarch64-linux-gnu- tools", m.Toolchain)
	}
	if len(m.CompilerLines) != 1 || !strings.Contains(m.CompilerLines[0].Line, "-O3") || m.CompilerLines[0].Arch != "aarch64" {
		t.Errorf("compiler lines %+v, want one -O3 line validated for aarch64", m.CompilerLines)
	}
	if len(m.LinkChecks) != 1 || m.LinkChecks[0].Platform != "linux aarch64" {
		t.Errorf("link checks %+v, want one for linux aarch64", m.LinkChecks)
	}
	if e := pipeline.Expect(res.Plan, "libcrypto.a"); e.Slice.Arch != "aarch64" || e.Slice.Configure != "linux-aarch64" || !e.RequireCompilerLine {
		t.Errorf("expectation %+v", e)
	}

	// The row says how this host runs the program: natively on Arm Linux,
	// under qemu-user on x86-64.
	p, _ := platform.Lookup(m.Target)
	run, ok := p.Run(toolchain.Host())
	if !ok {
		t.Skipf("the row runs linux aarch64 programs on %s only", p.RunsOn())
	}
	tc, err := toolchain.For("", m.Target)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "consumer")
	if _, err := link.Build(context.Background(), tc, res.Published.Dir, m.Target, rt.LinkProgram(), exe); err != nil {
		t.Fatal(err)
	}
	if len(run.Via) > 0 {
		if _, err := os.Stat("/usr/bin/" + run.Via[0]); err != nil {
			testfixture.Missing(t, "%s (qemu-user): %v", run.Via[0], err)
		}
	}
	if err := proc.Run(context.Background(), proc.Cmd{Args: append(slices.Clone(run.Via), exe), Env: []string{"PATH=/usr/bin:/bin"}}); err != nil {
		t.Errorf("the consumer did not run %s: %v", run.How, err)
	}
}
