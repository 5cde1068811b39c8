package constraint

import (
	"errors"
	"testing"

	"github.com/osslbuild/osslbuild/internal/osslver"
)

func TestConstraint(t *testing.T) {
	c, err := Parse(">= 3.0.14, < 3.1.0 || >= 3.3.0")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]bool{"3.0.13": false, "3.0.14": true, "3.1.0": false, "3.2.9": false, "3.3.0": true, "4.0.2": true} {
		if got, err := c.Check(osslver.MustParse(in)); err != nil || got != want {
			t.Errorf("Check(%s) = %v, %v; want %v", in, got, err, want)
		}
	}
	// go-version reads 1.1.1w as a pre-release of 1.1.1: refused, not misordered.
	for _, in := range []string{"1.1.1w", "3.0.0-alpha1", "3.0.5+quic"} {
		if _, err := c.Check(osslver.MustParse(in)); !errors.Is(err, ErrUnordered) {
			t.Errorf("Check(%s): err %v, want ErrUnordered", in, err)
		}
	}
	if ok, err := (Constraint{}).Check(osslver.MustParse("1.1.1w")); !ok || err != nil {
		t.Errorf("zero Constraint: %v, %v; want true", ok, err)
	}
	for _, bad := range []string{">= 1.1.1t", ">= 3.0 ||", "three", ""} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}
