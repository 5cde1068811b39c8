package recipe

import (
	"testing"

	"github.com/hashicorp/go-version"
)

func mustVersion(t *testing.T, s string) *version.Version {
	t.Helper()
	v, err := version.NewVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
