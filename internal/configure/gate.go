package configure

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/recipe"
)

// ErrGate marks a configured tree that must not be built.
var ErrGate = errors.New("configure gate failed")

// Makefile holds the settings the gate reads from a generated Makefile.
type Makefile struct {
	Path    string
	Vars    map[string]string // top-level VAR=value assignments, continuation lines joined
	Objects []string          // objects the libraries in LIBS are made of (progress total)
}

// CompileFlags is what OpenSSL embeds after "compiler: cc": the target's
// lower-case cflags (CNF_CFLAGS) followed by CFLAGS.
func (m *Makefile) CompileFlags() string {
	return strings.TrimSpace(m.Vars["CNF_CFLAGS"] + " " + m.Vars["CFLAGS"])
}

// ReadMakefile parses the variables and library objects of the Makefile in dir.
func ReadMakefile(dir string) (*Makefile, error) {
	path := filepath.Join(dir, "Makefile")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read generated Makefile: %w", err)
	}
	defer f.Close()
	m := &Makefile{Path: path, Vars: map[string]string{}}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var cur strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(line)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	for _, l := range lines {
		if l == "" || l[0] == '\t' || l[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if ok && !strings.ContainsAny(k, " :\t$") {
			m.Vars[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	libs := strings.Fields(m.Vars["LIBS"])
	seen := map[string]bool{}
	for _, l := range lines {
		target, deps, ok := strings.Cut(l, ":")
		if !ok || !slices.Contains(libs, strings.TrimSpace(target)) {
			continue
		}
		for _, d := range strings.Fields(deps) {
			if strings.HasSuffix(d, ".o") && !seen[d] {
				seen[d] = true
				m.Objects = append(m.Objects, d)
			}
		}
	}
	return m, nil
}

// GateResult is what the gate found, for logs and the manifest.
type GateResult struct {
	CFLAGS       string // CFLAGS as generated
	CompileFlags string // CNF_CFLAGS + CFLAGS: what libcrypto will embed after "cc" (less -fPIC and defines)
	EffectiveOpt string // the last -O flag, "-O0" when there is none
	Platform     string
	Objects      int
}

// Gate checks the configured tree in dir against the plan: the effective
// optimisation must be -O3 and every recipe flag must be present, and the
// Makefile must be for the recipe's Configure target.
func Gate(dir string, p *recipe.Plan) (*Makefile, GateResult, error) {
	m, err := ReadMakefile(dir)
	if err != nil {
		return nil, GateResult{}, err
	}
	flags := m.CompileFlags()
	cl := inspect.ParseCompilerLine("cc " + flags)
	res := GateResult{
		CFLAGS:       m.Vars["CFLAGS"],
		CompileFlags: flags,
		EffectiveOpt: cl.Opt.String(),
		Platform:     m.Vars["PLATFORM"],
		Objects:      len(m.Objects),
	}
	var problems []string
	if cl.Opt != inspect.O3 {
		what := "effective optimisation is " + res.EffectiveOpt
		if cl.OptFlag == "" {
			what = "no -O flag: the build would run without optimisation (-O0); is CFLAGS set in the environment of Configure?"
		}
		problems = append(problems, what)
	}
	for _, f := range p.Slice.Flags {
		if !cl.Has(f) {
			problems = append(problems, "recipe flag "+f+" missing")
		}
	}
	if res.Platform != p.Slice.Configure {
		problems = append(problems, fmt.Sprintf("PLATFORM is %q, want %q", res.Platform, p.Slice.Configure))
	}
	if len(m.Objects) == 0 {
		problems = append(problems, "no library objects found (LIBS="+m.Vars["LIBS"]+")")
	}
	if len(problems) > 0 {
		return m, res, fmt.Errorf("%s: %s (CFLAGS=%q): %w", m.Path, strings.Join(problems, "; "), res.CFLAGS, ErrGate)
	}
	return m, res, nil
}
