package pipeline_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/pipeline"
)

// TestPycaWayDiffersInTwoStages: the pyca-way build is osslbuild's table
// with exactly the gate and the validation swapped, nothing added, removed
// or reordered.
func TestPycaWayDiffersInTwoStages(t *testing.T) {
	a, b := pipeline.Osslbuild.Stages(), pipeline.PycaWay.Stages()
	want := []string{"source", "unpack", "toolchain", "configure", "gate", "make", "layout", "validate", "link", "record"}
	if !slices.Equal(a, want) || !slices.Equal(b, want) {
		t.Fatalf("stages: osslbuild %v, pyca way %v, want %v", a, b, want)
	}
	var swapped []string
	for i, name := range a {
		if reflect.ValueOf(pipeline.Osslbuild.StageFunc(i)).Pointer() != reflect.ValueOf(pipeline.PycaWay.StageFunc(i)).Pointer() {
			swapped = append(swapped, name)
		}
	}
	if !slices.Equal(swapped, []string{"gate", "validate"}) {
		t.Errorf("pyca way swaps %v, want [gate validate]", swapped)
	}
}

func TestEnvBool(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
		err  bool
	}{
		{"", false, false}, {"1", true, false}, {"true", true, false}, {"TRUE", true, false}, {"Yes", true, false}, {"on", true, false},
		{"0", false, false}, {"false", false, false}, {"No", false, false}, {"OFF", false, false},
		{"maybe", false, true}, {"2", false, true}, {"y", false, true},
	} {
		got, err := pipeline.EnvBool("OSSLBUILD_OFFLINE", tc.v)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("EnvBool(%q) = %v, %v; want %v, error %v", tc.v, got, err, tc.want, tc.err)
		}
		if err != nil && !strings.Contains(err.Error(), "OSSLBUILD_OFFLINE") {
			t.Errorf("error does not name the variable: %v", err)
		}
	}
	var s pipeline.Settings
	env := map[string]string{"OSSLBUILD_OFFLINE": "yes", "OSSLBUILD_MIRROR": "/m"}
	if err := s.FromEnv(func(k string) string { return env[k] }); err != nil || !s.Fetch.Offline || s.Fetch.Mirror != "/m" {
		t.Errorf("FromEnv: %+v, %v", s, err)
	}
	env["OSSLBUILD_FETCH_DEADLINE"], env["OSSLBUILD_FETCH_MIN_RATE"] = "90s", "1024"
	s = pipeline.Settings{}
	if err := s.FromEnv(func(k string) string { return env[k] }); err != nil || s.Fetch.Deadline.Seconds() != 90 || s.Fetch.MinRate != 1024 {
		t.Errorf("fetch limits from the environment: %+v, %v", s.Fetch, err)
	}
	for k, v := range map[string]string{"OSSLBUILD_FETCH_DEADLINE": "soon", "OSSLBUILD_FETCH_MIN_RATE": "fast"} {
		bad := map[string]string{k: v}
		if err := (&pipeline.Settings{}).FromEnv(func(k string) string { return bad[k] }); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
	env["OSSLBUILD_OFFLINE"] = "sometimes"
	if err := (&pipeline.Settings{}).FromEnv(func(k string) string { return env[k] }); err == nil {
		t.Error("OSSLBUILD_OFFLINE=sometimes accepted")
	}
}

// TestIdenticalCopies: the pyca-way validation forgives a second copy of
// the same compiler line (crypto/info.o keeps one at -O0), nothing else.
func TestIdenticalCopies(t *testing.T) {
	line := func(member, text string) inspect.BuildInfo {
		return inspect.BuildInfo{Kind: inspect.InfoCompiler, Text: text, Member: member}
	}
	rep := func(infos ...inspect.BuildInfo) validate.Report {
		return validate.Report{File: &inspect.File{Slices: []inspect.Slice{{Arch: "x86_64", BuildInfo: infos}}}}
	}
	dup := validate.Violation{Rule: validate.RuleCompilerLine, Arch: "x86_64"}
	same := rep(line("libcrypto-lib-cversion.o", "compiler: gcc -m64"), line("libcrypto-lib-info.o", "compiler: gcc -m64"))
	for _, tt := range []struct {
		name string
		rep  validate.Report
		v    validate.Violation
		want bool
	}{
		{"identical copies", same, dup, true},
		{"different lines", rep(line("a.o", "compiler: gcc -m64"), line("b.o", "compiler: gcc -O3")), dup, false},
		{"one line", rep(line("a.o", "compiler: gcc -m64")), dup, false},
		{"another rule", same, validate.Violation{Rule: validate.RuleOptimisation, Arch: "x86_64"}, false},
		{"another slice", same, validate.Violation{Rule: validate.RuleCompilerLine, Arch: "arm64"}, false},
		{"a member's compiler line", same, validate.Violation{Rule: validate.RuleCompilerLine, Arch: "x86_64", Member: "a.o"}, false},
	} {
		if got := pipeline.IdenticalCopies(tt.rep, tt.v); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
