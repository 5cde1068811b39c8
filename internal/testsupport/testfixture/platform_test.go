package testfixture

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestPlatformsOf(t *testing.T) {
	for _, tt := range []struct {
		goos, goarch string
		want         []Platform
	}{
		{"linux", "amd64", []Platform{LinuxCross, LinuxNative}},
		{"linux", "arm64", []Platform{LinuxCross}},
		{"darwin", "arm64", []Platform{MacOS}},
		{"darwin", "amd64", nil}, // an Intel Mac runs no Rosetta and is no CI job's
		{"windows", "amd64", nil},
	} {
		if got := platformsOf(tt.goos, tt.goarch); !slices.Equal(got, tt.want) {
			t.Errorf("platformsOf(%s, %s) = %v, want %v", tt.goos, tt.goarch, got, tt.want)
		}
	}
}

// otherPlatform is a platform this host is not.
func otherPlatform(t *testing.T) Platform {
	for _, p := range Platforms {
		if !slices.Contains(HostPlatforms(), p) {
			return p
		}
	}
	t.Skip("this host is every platform")
	return ""
}

// TestOnHelper is the test TestOn runs in a child process, as the case
// in OSSLBUILD_ON_CASE says.
func TestOnHelper(t *testing.T) {
	c := os.Getenv("OSSLBUILD_ON_CASE")
	if c == "" {
		t.Skip("run by TestOn")
	}
	here := HostPlatforms()
	switch c {
	case "required-skips":
		On(t, here[0])
		t.Skip("the test's own reason")
	case "required-runs":
		On(t, here[0])
	case "elsewhere":
		On(t, otherPlatform(t))
		t.Error("ran on a platform it did not declare")
	case "required-tier":
		On(t, here[0])
		NeedTier(t, TierFull, "a real OpenSSL build")
	case "required-missing":
		On(t, here[0])
		Missing(t, "a fixture")
	case "tool-short", "tool-gate":
		Tool(t, "sh")
		t.Log("TOOL RAN")
	case "release-gate", "release-full":
		// A version that is pinned, in a directory that holds none.
		Get(t, "3.0.20")
		t.Log("RELEASE FOUND")
	case "bad-tier":
		NeedTier(t, TierGate, "a tool")
	}
}

// TestOn: a test runs where it declares; elsewhere it skips naming the
// platforms and the host; where it must run, CI=true turns any skip into a
// failure except its tier's, and locally a skip stays a skip. The tiers
// are what the helpers say: a tool is the gate tier's, a release tarball
// the full tier's.
func TestOn(t *testing.T) {
	if HostPlatforms() == nil {
		t.Skip("this host is no platform")
	}
	for _, tt := range []struct {
		name, env, flag string
		ci              bool
		pass            bool
		out             string
	}{
		{"required-skips", "", "", true, false, "CI=true: TestOnHelper must run on " + string(HostPlatforms()[0])},
		{"required-skips", "", "", false, true, "the test's own reason"},
		{"required-runs", "", "", true, true, "--- PASS: TestOnHelper"},
		{"elsewhere", "", "", true, true, "runs on " + string(otherPlatform(t)) + "; this host"},
		{"required-tier", "OSSLBUILD_TESTS=gate", "", true, true, "gate tier: this test needs a real OpenSSL build (the full tier runs it: go test ./...)"},
		{"required-missing", "", "", true, false, "required fixture missing (CI=true, no skipping): a fixture"},
		{"tool-short", "", "-test.short", true, true, "short tier: this test needs the external tool sh (the gate tier runs it: OSSLBUILD_TESTS=gate go test ./...)"},
		{"tool-gate", "OSSLBUILD_TESTS=gate", "", true, true, "TOOL RAN"},
		{"release-gate", "OSSLBUILD_TESTS=gate", "", true, true, "gate tier: this test needs the release tarball openssl-3.0.20"},
		{"release-full", "OSSLBUILD_TESTS=full", "", true, false, "required fixture missing"},
		{"bad-tier", "OSSLBUILD_TESTS=fast", "", false, false, `OSSLBUILD_TESTS="fast": want gate or full`},
	} {
		t.Run(tt.name+map[bool]string{true: "/CI", false: "/local"}[tt.ci], func(t *testing.T) {
			args := []string{"-test.run=^TestOnHelper$", "-test.v", "-test.count=1"}
			if tt.flag != "" {
				args = append(args, tt.flag)
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), "OSSLBUILD_ON_CASE="+tt.name, "OSSLBUILD_FIXTURES="+t.TempDir(), "CI=", "OSSLBUILD_TESTS=")
			if tt.ci {
				cmd.Env = append(cmd.Env, "CI=true")
			}
			if tt.env != "" {
				cmd.Env = append(cmd.Env, tt.env)
			}
			out, err := cmd.CombinedOutput()
			if (err == nil) != tt.pass {
				t.Errorf("passed: %v, want %v\n%s", err == nil, tt.pass, out)
			}
			if !strings.Contains(string(out), tt.out) {
				t.Errorf("output lacks %q:\n%s", tt.out, out)
			}
		})
	}
}
