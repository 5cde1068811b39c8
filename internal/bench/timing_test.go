package bench

import (
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/recipe"
)

func TestReferenceScriptHasNoEnvironmentCFLAGS(t *testing.T) {
	r, err := recipe.Load("")
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Plan("4.0.2", "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	s := Reference(p)
	if !strings.Contains(s, "perl Configure darwin64-x86_64-cc --prefix=/opt/osslbuild --openssldir=/usr/local/etc/openssl@3 no-zlib") ||
		!strings.Contains(s, "-mmacosx-version-min=10.12 -march=core2") || !strings.Contains(s, "make install_sw") {
		t.Errorf("reference script:\n%s", s)
	}
	if strings.Contains(s, "CFLAGS") {
		t.Errorf("reference must pass flags as arguments, not CFLAGS:\n%s", s)
	}
	// It must be valid shell.
	if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v %s", err, out)
	}
}

func TestCommandMeasuresChildren(t *testing.T) {
	// The CPU work happens in a grandchild: wait4 must still count it.
	s, err := Command(context.Background(), t.TempDir(), []string{"PATH=/usr/bin:/bin"}, io.Discard,
		"sh", "-c", "sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'")
	if err != nil {
		t.Fatal(err)
	}
	if s.Wall <= 0 || s.User+s.Sys <= 0 {
		t.Errorf("sample %+v: no CPU time counted", s)
	}
	if u := s.Util(1); u <= 0 || u > 1.5 {
		t.Errorf("utilisation %.2f of one core for a single busy loop", u)
	}
}

func TestInterleaveOrderAndMedian(t *testing.T) {
	var order []string
	mk := func(tag string, walls ...time.Duration) func(context.Context, string) (Sample, error) {
		i := 0
		return func(context.Context, string) (Sample, error) {
			order = append(order, tag)
			w := walls[i]
			i++
			return Sample{Wall: w, User: w}, nil
		}
	}
	r, err := Interleave(context.Background(), "x", 3, t.TempDir(),
		mk("a", 3*time.Second, 1*time.Second, 2*time.Second), mk("b", 4*time.Second, 6*time.Second, 5*time.Second), "A", "B")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, "") != "ababab" {
		t.Errorf("order %v, want interleaved", order)
	}
	if medianSample(r.SA).Wall != 2*time.Second || medianSample(r.SB).Wall != 5*time.Second {
		t.Errorf("medians %v %v", medianSample(r.SA).Wall, medianSample(r.SB).Wall)
	}
	if row := r.Row(); !strings.Contains(row, "| 0.40 | 3 |") {
		t.Errorf("row %s", row)
	}
}
