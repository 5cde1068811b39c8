package testfixture

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The test tiers. Each is a subset of the next, by what a test needs:
//
//	go test -short ./...                  short: pure Go, no external tool, no fixture
//	OSSLBUILD_TESTS=gate go test ./...    gate: also the external tools (the cross
//	                                      toolchain, the mini tree, CLI transcripts),
//	                                      but no real OpenSSL build and no download
//	go test ./...                         full: everything
//
// A fixture helper says which tier its fixture belongs to (Tool and
// NeedToolchain: gate; Get, Realworld and the end-to-end builds: full), so
// a test is in a tier by what it uses, not by a list.
type Tier int

const (
	TierShort Tier = iota
	TierGate
	TierFull
)

// TierVar is the environment variable that selects the gate tier.
const TierVar = "OSSLBUILD_TESTS"

func (t Tier) String() string {
	return [...]string{"short", "gate", "full"}[t]
}

// CurrentTier is the tier this run is in: short with -short, gate with
// OSSLBUILD_TESTS=gate, else full. Another value of OSSLBUILD_TESTS is an
// error (a typo must not silently run everything, or nothing).
func CurrentTier() (Tier, error) {
	if testing.Short() {
		return TierShort, nil
	}
	switch v := os.Getenv(TierVar); v {
	case "", "full":
		return TierFull, nil
	case "gate":
		return TierGate, nil
	default:
		return TierFull, fmt.Errorf("%s=%q: want gate or full (or unset)", TierVar, v)
	}
}

// NeedTier skips t when the run's tier is below need, naming what the
// test needs and the command of the tier that runs it. Such a skip is
// never a missing fixture: CI=true lets it pass (see On).
func NeedTier(t testing.TB, need Tier, what string) {
	t.Helper()
	have, err := CurrentTier()
	if err != nil {
		t.Fatal(err)
	}
	if have >= need {
		return
	}
	tierSkips.Store(t, true)
	how := "go test ./..."
	if need == TierGate {
		how = TierVar + "=gate go test ./..."
	}
	t.Skipf("%s tier: this test needs %s (the %s tier runs it: %s)", have, what, need, how)
}

// Declare is NeedTier and On in one line, for a test that needs what no
// helper declares (a file of the distribution, Xcode).
func Declare(t testing.TB, need Tier, what string, platforms ...Platform) {
	t.Helper()
	NeedTier(t, need, what)
	On(t, platforms...)
}

// Platform is where a fixture-dependent test runs: the fixtures and tools
// it needs exist there.
type Platform string

const (
	// LinuxCross is a Linux machine with the macOS cross toolchain
	// (Debian's clang-14 and llvm-14, the macOS headers): .ci/run's machine.
	LinuxCross Platform = "linux-cross"
	// LinuxNative is Linux on x86-64, building and running linux-x86_64
	// natively (cc, ar, perl, make).
	LinuxNative Platform = "linux-native"
	// MacOS is macOS on Apple silicon, natively: Xcode's tools through
	// xcrun, dyld, codesign, Rosetta (ci.yml's macos job).
	MacOS Platform = "macos"
)

// Platforms are every platform, in the order CI's jobs are listed.
var Platforms = []Platform{LinuxCross, LinuxNative, MacOS}

// HostPlatforms are the platforms this machine is.
func HostPlatforms() []Platform { return platformsOf(runtime.GOOS, runtime.GOARCH) }

func platformsOf(goos, goarch string) []Platform {
	switch {
	case goos == "linux" && goarch == "amd64":
		return []Platform{LinuxCross, LinuxNative}
	case goos == "linux":
		return []Platform{LinuxCross}
	case goos == "darwin" && goarch == "arm64":
		return []Platform{MacOS}
	}
	return nil
}

var (
	// required holds the tests that declared a platform this
	// host is: a skip of theirs under CI=true fails.
	required sync.Map
	// tierSkips holds the tests that skipped for their tier.
	tierSkips sync.Map
)

// On declares where t must run: on any of platforms. Elsewhere it skips,
// naming them and this host. Here, under CI=true, the test may not skip
// at all (except for its tier, NeedTier): a skip, whatever its reason,
// fails it, so CI cannot pass a required test by skipping. Fixture
// helpers declare the platforms of their fixtures; a test calls On itself
// at its top when it needs something no helper declares (Xcode, dyld).
func On(t testing.TB, platforms ...Platform) {
	t.Helper()
	host := HostPlatforms()
	for _, p := range platforms {
		if slices.Contains(host, p) {
			require(t, platforms)
			return
		}
	}
	t.Skipf("runs on %s; this host (%s/%s) is %s", names(platforms), runtime.GOOS, runtime.GOARCH, names(host))
}

func require(t testing.TB, platforms []Platform) {
	if _, loaded := required.LoadOrStore(t, platforms); loaded || os.Getenv("CI") != "true" {
		return
	}
	t.Cleanup(func() {
		if _, tier := tierSkips.Load(t); t.Skipped() && !tier {
			t.Errorf("CI=true: %s must run on %s, and this host is %s: it may not skip (see its skip reason above)",
				t.Name(), names(platforms), names(HostPlatforms()))
		}
	})
}

func names(ps []Platform) string {
	if len(ps) == 0 {
		return "none of " + names(Platforms)
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// crossTools are tools only a Linux machine prepared by
// scripts/setup-cross.sh has (Debian's versioned llvm-14, the aarch64
// cross compiler, qemu-user, apt): a test that needs one runs on
// LinuxCross.
func crossTool(name string) bool {
	for _, p := range []string{"aarch64-linux-gnu-", "qemu-", "apt-", "dpkg"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return strings.HasSuffix(name, "-14")
}
