package toolchain

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/osslbuild/osslbuild/internal/proc"
)

// A toolchain's identity is the first lines its tools print of themselves
// (clang --version, ld --version, ...). Starting clang-14 or an LLVM tool
// maps libLLVM and costs 50-700 ms a process, depending on the machine's
// load, and every run asked each tool again (a cache hit five times, a
// test process once per build). firstLine memoises the answer for the
// process by the tool's file: its resolved path, size, modification time
// and mode, so a tool replaced on disk (an upgrade, a test's stand-in) is
// asked again.
var probes = struct {
	sync.Mutex
	m map[string]*probe
}{m: map[string]*probe{}}

type probe struct {
	once sync.Once
	line string
	err  error
}

// firstLine runs args (a tool and its version query) and returns the
// first line of what it prints.
func firstLine(ctx context.Context, args ...string) (string, error) {
	key, ok := probeKey(args)
	if !ok {
		return runFirstLine(ctx, args...)
	}
	probes.Lock()
	p := probes.m[key]
	if p == nil {
		p = &probe{}
		probes.m[key] = p
	}
	probes.Unlock()
	p.once.Do(func() { p.line, p.err = runFirstLine(ctx, args...) })
	if p.err != nil {
		// A failure (a cancelled context among them) is not kept: the
		// next caller asks again.
		probes.Lock()
		if probes.m[key] == p {
			delete(probes.m, key)
		}
		probes.Unlock()
	}
	return p.line, p.err
}

// probeKey names the tool args[0] by its file, or ok is false when it is
// not a path to a regular file (a name looked up on PATH, a missing tool):
// those are asked every time.
func probeKey(args []string) (string, bool) {
	if len(args) == 0 || !filepath.IsAbs(args[0]) {
		return "", false
	}
	path, err := filepath.EvalSymlinks(args[0])
	if err != nil {
		return "", false
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return fmt.Sprintf("%s\x00%d\x00%d\x00%v\x00%s", path, fi.Size(), fi.ModTime().UnixNano(), fi.Mode(), strings.Join(args[1:], "\x00")), true
}

func runFirstLine(ctx context.Context, args ...string) (string, error) {
	out, err := proc.Output(ctx, proc.Cmd{Args: args, Env: []string{"PATH=/usr/bin:/bin", "LANG=C"}})
	if err != nil {
		return "", fmt.Errorf("toolchain identity: %w", err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line), nil
}

// versions asks each tool (name to path) for its version at once, and
// returns name to "path: first line".
func versions(ctx context.Context, tools map[string]string) (map[string]string, error) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		out  = map[string]string{}
		errs = map[string]error{}
	)
	for name, path := range tools {
		wg.Go(func() {
			v, err := firstLine(ctx, path, "--version")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[name] = err
				return
			}
			out[name] = path + ": " + v
		})
	}
	wg.Wait()
	// The first failing tool by name, so the same machine gives the same
	// error.
	for _, name := range slices.Sorted(maps.Keys(errs)) {
		return out, errs[name]
	}
	return out, nil
}
