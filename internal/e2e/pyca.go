package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/configure"
	"github.com/osslbuild/osslbuild/internal/proc"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/internal/unpack"
)

// PycaOptions are the Configure options of pyca/infra's macOS step
// (OPENSSL_BUILD_FLAGS in cryptography-linux/openssl-version.sh), kept
// literally here rather than taken from osslbuild's recipe: the fixture
// reproduces their build, not ours.
var PycaOptions = []string{"no-zlib", "no-shared", "no-module", "no-comp", "no-apps", "no-docs",
	"no-sm2-precomp", "no-atexit", "enable-ec_nistp_64_gcc_128"}

// PycaArm64 returns the path to an arm64 libcrypto.a of the real 4.0.2
// sources built the way pyca's macOS step built it: CFLAGS in the
// environment of Configure, which replaces OpenSSL's "-O3 -Wall", so the
// library is built at -O0 and its compiler line has no -O flag. It is
// built once per run (see Shared) with the cross toolchain; only
// libcrypto.a is made (about 4 minutes on 2 cores).
func PycaArm64(t testing.TB) string {
	t.Helper()
	Require(t)
	rel := testfixture.Get(t, Version)
	dir := Shared(t, "pyca-arm64", func(dir string) error {
		return buildPyca(context.Background(), dir, rel.Tarball, &testLog{t: t})
	})
	return filepath.Join(dir, "libcrypto.a")
}

func buildPyca(ctx context.Context, dir, tarball string, log *testLog) error {
	src := filepath.Join(dir, "src")
	tree, err := unpack.Extract(ctx, tarball, src, unpack.Options{})
	if err != nil {
		return err
	}
	defer os.RemoveAll(src) // ~600 MB once built; only libcrypto.a is kept
	tc, err := toolchain.New("cross")
	if err != nil {
		return err
	}
	target := recipe.Target{Name: "arm64", Configure: "darwin64-arm64-cc", OS: "macos", Arch: "arm64", MinOS: "11.0"}
	tenv, err := tc.Prepare(ctx, filepath.Join(dir, "toolchain"), target)
	if err != nil {
		return err
	}
	work := filepath.Join(dir, "work")
	env, err := configure.Env(tenv, work, tree.Newest.Unix())
	if err != nil {
		return err
	}
	// The bug, reproduced on purpose: pyca's step has CFLAGS in its
	// environment, and Configure takes it as a replacement for -O3 -Wall.
	env = append(env, "CFLAGS=-mmacosx-version-min=11.0")
	logPath := filepath.Join(dir, "build.log")
	lf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer lf.Close()
	configureArgs := append([]string{"perl", "./Configure", "--prefix=" + filepath.Join(dir, "artifact"),
		"--openssldir=/opt/homebrew/etc/openssl@3", "darwin64-arm64-cc"}, PycaOptions...)
	steps := [][]string{
		configureArgs,
		// build_generated first: libcrypto.a's objects do not list the
		// generated headers as prerequisites until make has run once.
		{"make", "-j2", "build_generated"},
		{"make", "-j2", "libcrypto.a"},
	}
	for _, args := range steps {
		log.Write([]byte("pyca-arm64: " + strings.Join(args, " ") + "\n"))
		if err := proc.Run(ctx, proc.Cmd{Args: args, Dir: src, Env: env, Stdout: lf, Stderr: lf}); err != nil {
			return fmt.Errorf("pyca-arm64: %w (log: %s)", err, logPath)
		}
	}
	return os.Rename(filepath.Join(src, "libcrypto.a"), filepath.Join(dir, "libcrypto.a"))
}
