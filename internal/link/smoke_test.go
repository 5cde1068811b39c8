package link

import (
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/testsupport/platformtest"
)

// report is the shape of smoke/smoke.c's output (trimmed).
const report = "version\tOpenSSL 4.0.2 25 Aug 2026\n" +
	"compiler\tcompiler: gcc -fPIC -pthread -m64 -Wa,--noexecstack -Wall -O3 -DL_ENDIAN\n" +
	"platform\tplatform: linux-x86_64\n" +
	"pass\tSHA-256 abc\tFIPS 180-2 example 1\n" +
	"skip\tML-KEM-768\tthis OpenSSL has no ML-KEM (3.5 and later)\n" +
	"fail\tAES-256-GCM 14\texpected cea7403d4d606b6e074ec5d3baf39d18, got 00\n" +
	"result\t1\t1\t1\n"

func TestParseReport(t *testing.T) {
	r, err := ParseReport(strings.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "OpenSSL 4.0.2 25 Aug 2026" || r.Platform != "platform: linux-x86_64" || !strings.HasPrefix(r.Compiler, "compiler: gcc") {
		t.Errorf("build strings: %+v", r)
	}
	if r.Passed != 1 || r.Failed != 1 || r.Skipped != 1 || len(r.Tests) != 3 || r.Tests[2] != (Test{"fail", "AES-256-GCM 14", "expected cea7403d4d606b6e074ec5d3baf39d18, got 00"}) {
		t.Errorf("tests: %+v", r.Tests)
	}
}

func TestParseReportRejects(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(report, "\n"), "\n")
	without := func(i int) string {
		return strings.Join(append(append([]string{}, lines[:i]...), lines[i+1:]...), "\n")
	}
	for name, in := range map[string]string{
		"empty":          "",
		"no version":     without(0),
		"no compiler":    without(1),
		"no platform":    without(2),
		"no result":      without(len(lines) - 1),
		"stopped early":  strings.Join(lines[:4], "\n"),
		"miscounted":     strings.Replace(report, "result\t1\t1\t1", "result\t2\t0\t1", 1),
		"unknown record": strings.Replace(report, "pass\t", "ok\t", 1),
		"no detail":      strings.Replace(report, "\tFIPS 180-2 example 1", "", 1),
		"bad count":      strings.Replace(report, "result\t1\t1\t1", "result\tone\t1\t1", 1),
	} {
		if _, err := ParseReport(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestRunner(t *testing.T) {
	platformtest.Add(t, platformtest.LinuxAarch64)
	mac := func(arch string) platform.Slice { return platform.Slice{OS: "macos", Arch: arch, MinOS: "11.0"} }
	for _, tt := range []struct {
		host  string
		slice platform.Slice
		via   string
		run   bool
	}{
		{"linux/amd64", platform.Slice{OS: "linux", Arch: "x86_64"}, "", true},
		{"linux/amd64", mac("arm64"), "", false},
		{"linux/amd64", mac("x86_64"), "", false},
		{"darwin/arm64", mac("arm64"), "", true},
		{"darwin/arm64", mac("x86_64"), "/usr/bin/arch -x86_64", true},
		{"darwin/amd64", mac("x86_64"), "", true},
		{"darwin/amd64", mac("arm64"), "", false},
		{"darwin/arm64", platform.Slice{OS: "linux", Arch: "x86_64"}, "", false},
		{"linux/arm64", platform.Slice{OS: "linux", Arch: "aarch64"}, "", true},
		{"linux/amd64", platform.Slice{OS: "linux", Arch: "aarch64"}, "qemu-aarch64 -L /usr/aarch64-linux-gnu", true},
	} {
		via, notRun := runner(tt.host, tt.slice)
		if strings.Join(via, " ") != tt.via || (notRun == "") != tt.run {
			t.Errorf("runner(%s, %s) = %q, %q; want via %q, runs %v", tt.host, tt.slice, via, notRun, tt.via, tt.run)
		}
		if notRun != "" && !strings.Contains(notRun, "linked only") {
			t.Errorf("runner(%s, %s): %q does not say the program was only linked", tt.host, tt.slice, notRun)
		}
	}
}
