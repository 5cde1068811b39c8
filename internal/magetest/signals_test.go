package magetest

import (
	"bufio"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
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

// TestEveryTargetIsInterruptible: every target of magefile.go is one
// statement, a return through targets.Run (or targets.Flags' Run and
// RunBuild, or an unexported helper of magefile.go that is itself one
// such statement), so each runs under targets.Interruptible (SIGTERM,
// which Mage's runner ignores, cancels it as SIGINT does) and returns
// through targets.Safe. A target added without the frame fails here.
func TestEveryTargetIsInterruptible(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(testfixture.RepoRoot(), "magefile.go"))
	if err != nil {
		t.Fatal(err)
	}
	n, bad := unframedTargets(t, string(src))
	for _, b := range bad {
		t.Errorf("magefile.go: %s", b)
	}
	if n < 10 {
		t.Fatalf("found %d targets; the parse found too few to mean anything", n)
	}
	// The rule itself: what it refuses.
	for _, tt := range []struct{ name, body, want string }{
		{"framed", `return targets.Run(ctx, func(ctx context.Context) error { return nil })`, ""},
		{"framed with settings", `return targets.Flags{}.RunBuild(ctx, nil)`, ""},
		{"through a framed helper", `return helper(ctx, targets.Flags{})`, ""},
		{"the old prologue", "ctx, stop := targets.Interruptible(ctx)\n\tdefer stop()\n\treturn nil", "T is not one statement"},
		{"another package's Run", `return check.Run(ctx, nil)`, "T does not return through targets.Run"},
		{"an unframed helper", `return bare(ctx)`, "T does not return through targets.Run"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := "package main\nfunc T(ctx context.Context) error {\n\t" + tt.body + "\n}\n" +
				"func helper(ctx context.Context, f targets.Flags) error { return f.Run(ctx, nil) }\n" +
				"func bare(ctx context.Context) error { return nil }\n"
			_, bad := unframedTargets(t, src)
			if got := strings.Join(bad, "; "); !strings.Contains(got, tt.want) || (tt.want == "") != (got == "") {
				t.Errorf("refused %q, want %q", got, tt.want)
			}
		})
	}
}

// unframedTargets parses a magefile and returns how many targets it has
// and a line for each that is not one return through the frame.
// actions:error is exempt: it prints one annotation and starts nothing.
func unframedTargets(t *testing.T, src string) (int, []string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "magefile.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]*ast.FuncDecl{}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
			funcs[fn.Name.Name] = fn
		}
	}
	// framed: fn is one statement, returning a call to the frame.
	var framed func(fn *ast.FuncDecl) string
	framed = func(fn *ast.FuncDecl) string {
		if len(fn.Body.List) != 1 {
			return "is not one statement"
		}
		ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
		if !ok || len(ret.Results) != 1 {
			return "is not one statement"
		}
		call, ok := ret.Results[0].(*ast.CallExpr)
		if !ok {
			return "does not return through targets.Run"
		}
		switch fun := call.Fun.(type) {
		case *ast.SelectorExpr:
			if isTargetsFlags(fun.X, fn) && (fun.Sel.Name == "Run" || fun.Sel.Name == "RunBuild") {
				return ""
			}
			if x, ok := fun.X.(*ast.Ident); ok && x.Name == "targets" && fun.Sel.Name == "Run" {
				return ""
			}
		case *ast.Ident:
			if h := funcs[fun.Name]; h != nil && !h.Name.IsExported() && framed(h) == "" {
				return ""
			}
		}
		return "does not return through targets.Run"
	}
	n := 0
	var bad []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || !fn.Name.IsExported() {
			continue
		}
		name := fn.Name.Name
		if fn.Recv != nil {
			name = types.ExprString(fn.Recv.List[0].Type) + "." + name
		}
		if name == "Actions.Error" {
			continue
		}
		n++
		if why := framed(fn); why != "" {
			bad = append(bad, name+" "+why)
		}
	}
	return n, bad
}

// isTargetsFlags: x is a targets.Flags literal or a parameter of fn of
// that type.
func isTargetsFlags(x ast.Expr, fn *ast.FuncDecl) bool {
	const flags = "targets.Flags"
	switch x := x.(type) {
	case *ast.CompositeLit:
		return types.ExprString(x.Type) == flags
	case *ast.Ident:
		for _, p := range fn.Type.Params.List {
			for _, name := range p.Names {
				if name.Name == x.Name {
					return types.ExprString(p.Type) == flags
				}
			}
		}
	}
	return false
}

// TestSignalsStopARealBuild: the compiled magefile (as the action runs
// it) building real OpenSSL 4.0.2 gets a real SIGTERM or SIGINT while the
// source unpacks, while Configure runs and while make compiles (both
// slices of build:universal2 under one job budget): it
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
		// Each signal reaches a running child: SIGINT perl's Configure,
		// SIGTERM make's compilers, of both slices under one job budget.
		// (A slice's own compile would run another real Configure to
		// prove what the universal2 case proves.)
		{"build:arm64", "source: openssl-4.0.2.tar.gz", syscall.SIGTERM},
		{"build:arm64", "openssl-macos-arm64: perl Configure", syscall.SIGINT},
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
