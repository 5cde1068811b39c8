package configure

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	// SharedObjects are the objects the shared libraries in SHLIBS are
	// made of, with those of the archives they link (a shared-only
	// build's progress total); none when the libraries are static only.
	SharedObjects []string
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
	rules := map[string][]string{}
	var order []string
	for _, l := range lines {
		if l == "" || l[0] == '\t' || l[0] == '#' {
			continue
		}
		target, deps, ok := strings.Cut(m.expand(l), ":")
		if !ok {
			continue
		}
		for _, t := range strings.Fields(target) {
			if _, ok := rules[t]; !ok {
				order = append(order, t)
			}
			rules[t] = append(rules[t], strings.Fields(deps)...)
		}
	}
	m.Objects = objectsOf(rules, order, strings.Fields(m.expand(m.Vars["LIBS"])), false)
	m.SharedObjects = objectsOf(rules, order, strings.Fields(m.expand(m.Vars["SHLIBS"])), true)
	return m, nil
}

// varRef is a make variable reference, $(NAME).
var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand replaces the references in s to the Makefile's top-level
// variables with their values, a few levels deep: OpenSSL's generated
// Makefiles name their libraries' objects literally, but a rule may still
// name a library through a variable.
func (m *Makefile) expand(s string) string {
	for range 4 {
		if !strings.Contains(s, "$(") {
			break
		}
		s = varRef.ReplaceAllStringFunc(s, func(ref string) string {
			if v, ok := m.Vars[ref[2:len(ref)-1]]; ok {
				return v
			}
			return ref
		})
	}
	return s
}

// objectsOf lists, in the Makefile's order, the objects of the rules for
// libs, and with archives set those of the archives they depend on too.
func objectsOf(rules map[string][]string, order, libs []string, archives bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range order {
		if !slices.Contains(libs, t) {
			continue
		}
		deps := rules[t]
		if archives {
			for _, d := range deps {
				if strings.HasSuffix(d, ".a") {
					deps = append(deps, rules[d]...)
				}
			}
		}
		for _, d := range deps {
			if strings.HasSuffix(d, ".o") && !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
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
