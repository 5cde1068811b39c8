package pipeline_test

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/recipe"
)

// TestExpectOfPlanAndManifest: a build holds its libraries to what its
// Plan promises, a later proof or check to what its manifest records;
// for a manifest with no dispatch list of its own, the two must be one
// expectation, the version strings held to the release in both (both are
// artifact.Expectation).
func TestExpectOfPlanAndManifest(t *testing.T) {
	t.Parallel()
	r, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range slices.Sorted(maps.Keys(r.Targets)) {
		p := plan(t, target)
		m := &artifact.Manifest{Target: p.Slice, OpenSSL: artifact.Source{Version: p.Release.Version}}
		for _, lib := range p.Slice.Libraries() {
			fromPlan, fromManifest := pipeline.Expect(p, lib), artifact.ExpectOf(m, p.Slice, lib)
			if fromManifest.Version != p.Release.Version || fromPlan.Version != p.Release.Version {
				t.Errorf("%s %s: version %q from the plan, %q from the manifest; want %q for both", target, lib, fromPlan.Version, fromManifest.Version, p.Release.Version)
			}
			if !reflect.DeepEqual(fromPlan, fromManifest) {
				t.Errorf("%s %s: the plan expects\n%+v\nthe manifest\n%+v", target, lib, fromPlan, fromManifest)
			}
		}
	}
}
