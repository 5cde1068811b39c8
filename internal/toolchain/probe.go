package toolchain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/proc"
)

// A toolchain's identity is the first lines its tools print of themselves
// (clang --version, ld --version, ...). Starting clang-14 or an LLVM tool
// maps libLLVM and costs 50-700 ms a process, depending on the machine's
// load, and every run asked each tool again (a cache hit five times, a
// test process once per build). firstLine memoises the answer for the
// process by the tool's file: its resolved path, size, modification time
// and mode, so a tool replaced on disk (an upgrade, a test's stand-in) is
// asked again. The answer is also kept on disk beside the macOS headers
// (ProbeDir), under the same key, so that a cache hit in a new process
// does not start five LLVM tools: that directory is trusted as the headers
// are (a build reads them as they are), and it is not the artifact cache,
// which a CI cache may restore from elsewhere.
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
	p.once.Do(func() {
		if line, ok := readProbe(key); ok {
			p.line = line
			return
		}
		if p.line, p.err = runFirstLine(ctx, args...); p.err == nil {
			writeProbe(key, p.line)
		}
	})
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
	return fmt.Sprintf("%s\x00%d\x00%d\x00%v\x00%s\x00%s", path, fi.Size(), fi.ModTime().UnixNano(), fi.Mode(), fileID(fi), strings.Join(args[1:], "\x00")), true
}

// ProbeDir is where tools' answers are kept between processes:
// $OSSLBUILD_PROBE_CACHE ("off" keeps none), else <user cache
// dir>/osslbuild/toolchain-probes. Like HeadersDir, it does not follow
// OSSLBUILD_CACHE.
func ProbeDir() string {
	if d := os.Getenv("OSSLBUILD_PROBE_CACHE"); d != "" {
		if d == "off" {
			return ""
		}
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "osslbuild", "toolchain-probes")
}

// probeFile holds the answer of key: the key on its first line (a file
// of another key, or a truncated one, is not an answer), the tool's first
// line on the second.
func probeFile(key string) string {
	dir := ProbeDir()
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, hex.EncodeToString(sum[:16]))
}

func readProbe(key string) (string, bool) {
	b, err := os.ReadFile(probeFile(key)) // "" (no ProbeDir) is no file
	if err != nil {
		return "", false
	}
	k, line, ok := strings.Cut(string(b), "\n")
	if !ok || k != strconv.Quote(key) || !strings.HasSuffix(line, "\n") {
		return "", false
	}
	return strings.TrimSuffix(line, "\n"), true
}

// writeProbe keeps line for key, by rename so a reader sees all or
// nothing; a failure costs the next process one run of the tool.
func writeProbe(key, line string) {
	f := probeFile(key)
	if f == "" || strings.Contains(line, "\n") {
		return
	}
	if os.MkdirAll(filepath.Dir(f), 0o755) == nil {
		ctxio.WriteFile(f, []byte(strconv.Quote(key)+"\n"+line+"\n"), 0o600)
	}
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
