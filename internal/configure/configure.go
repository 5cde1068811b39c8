// Package configure turns a Plan into OpenSSL's Configure invocation (an
// argv and a constructed environment), runs it, and gates the result: the
// generated Makefile must say -O3 and carry every recipe flag before any
// minutes are spent in make.
//
// The environment is built variable by variable, never inherited. OpenSSL's
// Configure reads CFLAGS (and CPPFLAGS, LDFLAGS, LDLIBS...) from the
// environment as a REPLACEMENT for the target's "-O3 -Wall": that is how
// pyca's macOS wheels came to be built at -O0. Flags therefore travel only as
// Configure arguments.
package configure

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/osslbuild/osslbuild/internal/configure/record"
	"github.com/osslbuild/osslbuild/internal/proc"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// Args is the full Configure argv for plan: the target, a fixed prefix, the
// recipe's openssldir, the options this release accepts, then the compiler
// flags as arguments.
func Args(p *recipe.Plan) []string {
	return record.Argv(p.Slice, p.Recipe.Prefix, p.Slice.OpenSSLDir)
}

// Overridden are user variables osslbuild replaces with its own values.
var Overridden = []string{"SOURCE_DATE_EPOCH", "ZERO_AR_DATE"}

// IgnoredSet returns which of record.Ignored (the user environment
// variables that would change what Configure and make build) and
// Overridden are set (non-empty) in environ,
// sorted, so the caller can say once that they have no effect.
func IgnoredSet(environ []string) []string {
	var set []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if v != "" && (slices.Contains(record.Ignored, k) || slices.Contains(Overridden, k)) {
			set = append(set, k)
		}
	}
	sort.Strings(set)
	return slices.Compact(set)
}

// Env is the complete environment for Configure and make: the toolchain's
// wrappers first on PATH, then only the directories holding perl and make,
// a private HOME and TMPDIR under work, a fixed locale and time zone, and
// SOURCE_DATE_EPOCH for OpenSSL's "built on:" line.
func Env(tc toolchain.Env, work string, sourceDateEpoch int64) ([]string, error) {
	path := []string{tc.Bin}
	for _, tool := range []string{"perl", "make"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			return nil, fmt.Errorf("configure: %s not found on PATH (install it: apt-get install %s / Xcode command line tools)", tool, tool)
		}
		if d := filepath.Dir(p); !slices.Contains(path, d) {
			path = append(path, d)
		}
	}
	for _, d := range []string{"/usr/bin", "/bin"} {
		if !slices.Contains(path, d) {
			path = append(path, d)
		}
	}
	home, tmp := filepath.Join(work, "home"), filepath.Join(work, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("configure: %w", err)
		}
	}
	env := append([]string{
		"PATH=" + strings.Join(path, ":"),
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"LANG=C",
		"LC_ALL=C",
		"TZ=UTC",
		"SOURCE_DATE_EPOCH=" + strconv.FormatInt(sourceDateEpoch, 10),
	}, tc.Vars...)
	sort.Strings(env)
	return env, nil
}

// RunArgs runs the Configure argv args in src with env, writing its output
// to log.
func RunArgs(ctx context.Context, src string, args, env []string, log io.Writer) error {
	fmt.Fprintf(log, "+ %s\n", strings.Join(args, " "))
	if err := proc.Run(ctx, proc.Cmd{Args: args, Dir: src, Env: env, Stdout: log, Stderr: log}); err != nil {
		return fmt.Errorf("configure: %w", err)
	}
	return nil
}
