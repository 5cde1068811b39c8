package magetest

import (
	"bufio"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestEveryTargetIsInterruptible: every target of magefile.go that takes
// a context starts with targets.Interruptible, so SIGTERM (which Mage's
// runner ignores) cancels it as SIGINT does. A target added without it
// fails here.
func TestEveryTargetIsInterruptible(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(testfixture.RepoRoot(), "magefile.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || !fn.Name.IsExported() || len(fn.Type.Params.List) == 0 {
			continue
		}
		if sel, ok := fn.Type.Params.List[0].Type.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Context" {
			continue
		}
		if fn.Recv != nil && fn.Name.Name == "Error" {
			continue // actions:error prints one annotation and starts nothing
		}
		n++
		first, ok := fn.Body.List[0].(*ast.AssignStmt)
		call, _ := func() (*ast.CallExpr, bool) {
			if !ok || len(first.Rhs) != 1 {
				return nil, false
			}
			c, ok := first.Rhs[0].(*ast.CallExpr)
			return c, ok
		}()
		if call == nil {
			t.Errorf("%s: target %s does not start with ctx, stop := targets.Interruptible(ctx)", fset.Position(fn.Pos()), fn.Name.Name)
			continue
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Interruptible" {
			t.Errorf("%s: target %s does not start with ctx, stop := targets.Interruptible(ctx)", fset.Position(fn.Pos()), fn.Name.Name)
		}
	}
	if n < 10 {
		t.Fatalf("found %d targets taking a context; the parse found too few to mean anything", n)
	}
}

// TestSignalsStopARealBuild: the compiled magefile (as the action runs
// it) building real OpenSSL 4.0.2 gets a real SIGTERM or SIGINT while the
// source unpacks, while Configure runs and while make compiles (one
// slice, and both slices of build:universal2 under one job budget): it
// exits non-zero, within seconds, every compiler of its process groups
// gone, its work directory removed and -out exactly as it was before
// (holding an earlier artifact of the same name).
func TestSignalsStopARealBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the magefile and starts real builds")
	}
	if _, err := os.Stat("/proc/self/cwd"); err != nil {
		testfixture.Missing(t, "no /proc to list processes by working directory: %v", err)
	}
	testfixture.Get(t, "4.0.2")
	bin := compiled(t)
	cache := t.TempDir()
	cases := []struct {
		target, marker string
		sig            syscall.Signal
	}{
		{"build:arm64", "source: openssl-4.0.2.tar.gz", syscall.SIGTERM},
		{"build:arm64", "openssl-macos-arm64: perl Configure", syscall.SIGTERM},
		// SIGTERM while make compiles is build:universal2's case below.
		{"build:arm64", "openssl-macos-arm64: compiling", syscall.SIGINT},
		{"build:universal2", "openssl-macos-x86-64: compiling", syscall.SIGTERM},
	}
	for _, c := range cases {
		t.Run(c.target+" "+c.sig.String()+" at "+c.marker, func(t *testing.T) {
			root := t.TempDir()
			out, work := filepath.Join(root, "dist"), filepath.Join(root, "work")
			testfixture.WriteTree(t, out, map[string]string{
				"openssl-macos-arm64/manifest.json":  "an earlier build's\n",
				"openssl-macos-arm64.tar.gz":         "an earlier build's tarball\n",
				"openssl-macos-arm64.tar.gz.sha256":  "0  openssl-macos-arm64.tar.gz\n",
				"openssl-macos-universal2/lib/x.txt": "an earlier universal2\n",
			})
			before := testfixture.Snapshot(t, out)
			cmd := exec.Command(bin, c.target, "-rebuild", "-jobs=2", "-out="+out)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "OSSLBUILD_MIRROR="+testfixture.Dir(), "OSSLBUILD_OFFLINE=1",
				"OSSLBUILD_CACHE="+cache, "OSSLBUILD_WORK="+work, "GITHUB_ACTIONS=", "GITHUB_OUTPUT=")
			pr, pw := io.Pipe()
			cmd.Stdout, cmd.Stderr = pw, pw
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait(); pw.Close() }()
			var log strings.Builder
			signalled := make(chan time.Time, 1)
			go func() {
				sc := bufio.NewScanner(pr)
				sent := false
				for sc.Scan() {
					log.WriteString(sc.Text() + "\n")
					if !sent && strings.Contains(sc.Text(), c.marker) {
						sent = true
						cmd.Process.Signal(c.sig)
						signalled <- time.Now()
					}
				}
				io.Copy(io.Discard, pr)
			}()
			var err error
			select {
			case err = <-exited:
			case <-time.After(15 * time.Minute):
				cmd.Process.Kill()
				t.Fatalf("the build neither reached %q nor ended", c.marker)
			}
			var at time.Time
			select {
			case at = <-signalled:
			default:
				t.Fatalf("the build ended (%v) without logging %q:\n%s", err, c.marker, log.String())
			}
			t.Logf("exited %v, %s after the signal", err, time.Since(at).Round(time.Millisecond))
			if err == nil {
				t.Errorf("exit 0 after %s:\n%s", c.sig, log.String())
			}
			if got := testfixture.Snapshot(t, out); got != before {
				t.Errorf("-out changed:\n%s\nwant\n%s\nlog:\n%s", got, before, log.String())
			}
			if _, err := os.Stat(work); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the work directory is left: %v", testfixture.Snapshot(t, work))
			}
			if ps := testfixture.ProcessesUnder(root); len(ps) > 0 {
				t.Errorf("processes left running: %q", ps)
			}
		})
	}
}
