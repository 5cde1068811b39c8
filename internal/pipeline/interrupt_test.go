package pipeline_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/targets"
	"github.com/osslbuild/osslbuild/internal/testsupport/minitest"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// signalAt is a log that sends sig to this process the first time a line
// contains marker: a real signal, at a known point of a real build.
type signalAt struct {
	mu     sync.Mutex
	marker string
	sig    syscall.Signal
	sent   bool
	log    strings.Builder
	ctx    context.Context // the build's: cancelled by the signal
}

func (w *signalAt) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log.Write(p)
	if !w.sent && strings.Contains(w.log.String(), w.marker) {
		w.sent = true
		syscall.Kill(os.Getpid(), w.sig)
		// The signal reaches the build's context asynchronously; wait for
		// it, so the build stops at this point and not, by chance, after
		// it has finished what remained.
		select {
		case <-w.ctx.Done():
		case <-time.After(10 * time.Second):
		}
	}
	return len(p), nil
}

// TestMiniInterruptLeavesEverythingAsItWas: SIGTERM (what CI cancels with)
// and SIGINT, sent to the process at each point of a build:universal2 (the
// source verified, Configure, make compiling, a slice validated, a slice
// linked, the merge validated and linked; and in a run the cache serves,
// a slice served, the merge proved), stop it with context.Canceled; the
// output directory holds exactly the artifacts of the build before, the
// work directory is gone as it was before the run, and no process of the
// build is left running.
func TestMiniInterruptLeavesEverythingAsItWas(t *testing.T) {
	t.Parallel()
	minitest.Require(t)
	if _, err := os.Stat("/proc/self/cwd"); err != nil {
		testfixture.Missing(t, "no /proc to list processes by working directory: %v", err)
	}
	base := miniSettings(t, nil)
	// A first build fills -out (what must survive every interrupted run)
	// and the artifact cache of the runs that hit it.
	base.Rebuild = false
	if _, err := pipeline.Universal2(context.Background(), base, minitest.Runtime(t, &strings.Builder{})); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(base.Work)
	before := testfixture.Snapshot(t, base.Out)
	cases := []struct {
		marker string
		sig    syscall.Signal
		cached bool
	}{
		{"source: openssl-9.9.9.tar.gz", syscall.SIGTERM, false},
		{"openssl-macos-arm64: perl Configure", syscall.SIGTERM, false},
		{"openssl-macos-x86-64: compiling", syscall.SIGTERM, false},
		{"openssl-macos-x86-64: compiling", syscall.SIGINT, false},
		{"openssl-macos-arm64: validated libcrypto.a", syscall.SIGTERM, false},
		{"openssl-macos-x86-64: linked", syscall.SIGTERM, false},
		{"openssl-macos-universal2: validated libcrypto.a arm64", syscall.SIGTERM, false},
		{"openssl-macos-universal2: linked", syscall.SIGINT, false},
		{"openssl-macos-x86-64: cache hit", syscall.SIGTERM, true},
		{"openssl-macos-universal2: validated libcrypto.a arm64", syscall.SIGINT, true},
	}
	for _, c := range cases {
		name := c.sig.String() + " at " + c.marker
		if c.cached {
			name += " (cache hit)"
		}
		t.Run(name, func(t *testing.T) {
			s := base
			s.Rebuild = !c.cached
			s.Out = testfixture.CopyTree(t, base.Out, filepath.Join(t.TempDir(), "dist"))
			s.Work = filepath.Join(t.TempDir(), "work")
			ctx, stop := targets.Interruptible(context.Background())
			w := &signalAt{marker: c.marker, sig: c.sig, ctx: ctx}
			rt := minitest.Runtime(t, w)
			_, err := pipeline.Universal2(ctx, s, rt)
			stop()
			if !w.sent {
				t.Fatalf("the build never logged %q:\n%s", c.marker, w.log.String())
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted build: %v, want context.Canceled\n%s", err, w.log.String())
			}
			if got := testfixture.Snapshot(t, s.Out); got != before {
				t.Errorf("-out changed:\n%s\nwant\n%s\nlog:\n%s", got, before, w.log.String())
			}
			if _, err := os.Stat(s.Work); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the work directory is left: %v %v", testfixture.Snapshot(t, s.Work), err)
			}
			if ps := testfixture.ProcessesUnder(filepath.Dir(s.Work)); len(ps) > 0 {
				t.Errorf("processes left running: %q", ps)
			}
		})
	}
	// The interrupted hits left the cache serving.
	var log strings.Builder
	s := base
	s.Out = filepath.Join(t.TempDir(), "dist")
	if _, err := pipeline.Universal2(context.Background(), s, minitest.Runtime(t, &log)); err != nil {
		t.Fatal(err)
	}
	if c := strings.Count(log.String(), ": cache hit"); c != 3 {
		t.Errorf("after the interrupted runs %d of 3 artifacts served by the cache:\n%s", c, log.String())
	}
}

// TestMiniUniversal2AllOrNothing: a build:universal2 whose merge is refused
// (a header that differs between the slices) publishes neither slice: -out
// holds what it held, or stays absent.
func TestMiniUniversal2AllOrNothing(t *testing.T) {
	t.Parallel()
	minitest.Require(t)
	edits := map[string][2]string{
		"Makefile.in": {"$(DESTDIR)$(INSTALLTOP)/include/openssl/\n", "$(DESTDIR)$(INSTALLTOP)/include/openssl/\n\techo '/* $(PLATFORM) */' >> $(DESTDIR)$(INSTALLTOP)/include/openssl/ssl.h\n"},
	}
	for _, prior := range []bool{false, true} {
		s := miniSettings(t, edits)
		if prior {
			good := miniSettings(t, nil)
			good.Out = s.Out
			if _, err := pipeline.Universal2(context.Background(), good, minitest.Runtime(t, &strings.Builder{})); err != nil {
				t.Fatal(err)
			}
		}
		before := testfixture.Snapshot(t, s.Out)
		var log strings.Builder
		_, err := pipeline.Universal2(context.Background(), s, minitest.Runtime(t, &log))
		if err == nil || !strings.Contains(err.Error(), "include/openssl/ssl.h differs between the slices") {
			t.Fatalf("merge of differing headers: %v, want the header refused\n%s", err, log.String())
		}
		if strings.Contains(log.String(), "published") {
			t.Errorf("a slice was published before the merge failed:\n%s", log.String())
		}
		if got := testfixture.Snapshot(t, s.Out); got != before {
			t.Errorf("-out (prior artifacts: %v) changed:\n%s\nwant\n%s", prior, got, before)
		}
		if !prior {
			if _, err := os.Stat(s.Out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("-out was made by a build that published nothing: %v", err)
			}
		}
	}
}
