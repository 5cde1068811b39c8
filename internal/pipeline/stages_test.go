package pipeline_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/pipeline"
)

// TestPycaWayDiffersInThreeStages: the pyca-way build is osslbuild's table
// with exactly Configure (run once, the pyca way), the gate and the
// validation swapped, nothing added, removed or reordered.
func TestPycaWayDiffersInThreeStages(t *testing.T) {
	t.Parallel()
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
	if !slices.Equal(swapped, []string{"configure", "gate", "validate"}) {
		t.Errorf("pyca way swaps %v, want [configure gate validate]", swapped)
	}
}

func TestEnvBool(t *testing.T) {
	t.Parallel()
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
