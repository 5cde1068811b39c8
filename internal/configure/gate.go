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

// CompileFlags is what OpenSSL embeds after "compiler: cc": the rule for
// crypto/buildinf.h hands util/mkbuildinf.pl "$(CC) $(LIB_CFLAGS)
// $(CPPFLAGS_Q)", the library objects' C flags and the preprocessor flags
// (Configure puts a -D argument in CPPFLAGS, which both CPPFLAGS_Q and
// every object's LIB_CPPFLAGS hold, never in CFLAGS).
func (m *Makefile) CompileFlags() string {
	return m.expand("$(LIB_CFLAGS) $(CPPFLAGS_Q)")
}

// libraryFlags is what every library object is compiled with, less its
// rule's own -I, -MMD and -o: "$(LIB_CFLAGS) $(LIB_CPPFLAGS)".
func (m *Makefile) libraryFlags() string {
	return m.expand("$(LIB_CFLAGS) $(LIB_CPPFLAGS)")
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
// variables with their values, a few levels deep (OpenSSL's generated
// Makefiles name their libraries' objects literally, but a rule may still
// name a library through a variable, and LIB_CFLAGS holds $(CFLAGS)), and
// joins the words with single spaces.
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
	return strings.Join(strings.Fields(s), " ")
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
	CompileFlags string // LIB_CFLAGS + CPPFLAGS_Q: what libcrypto will embed after "compiler: cc"
	EffectiveOpt string // the last -O flag of the library objects' compile, "-O0" when there is none
	Platform     string
	Objects      int
}

// Gate checks the configured tree in dir against the plan: the library
// objects' effective optimisation must be -O3, every recipe flag must be
// on both their compile and the compiler line libcrypto will embed (which
// validation holds to the plan again), and the Makefile must be for the
// recipe's Configure target.
func Gate(dir string, p *recipe.Plan) (*Makefile, GateResult, error) {
	m, err := ReadMakefile(dir)
	if err != nil {
		return nil, GateResult{}, err
	}
	compile := inspect.ParseCompilerLine("cc " + m.libraryFlags())
	embedded := inspect.ParseCompilerLine("cc " + m.CompileFlags())
	res := GateResult{
		CFLAGS:       m.Vars["CFLAGS"],
		CompileFlags: m.CompileFlags(),
		EffectiveOpt: compile.Opt.String(),
		Platform:     m.Vars["PLATFORM"],
		Objects:      len(m.Objects),
	}
	var problems []string
	for _, v := range []string{"LIB_CFLAGS", "LIB_CPPFLAGS", "CPPFLAGS_Q"} {
		if _, ok := m.Vars[v]; !ok {
			problems = append(problems, "no "+v+" (OpenSSL's Configure writes it: the flags the library objects are compiled with and libcrypto embeds are unknown)")
		}
	}
	if compile.Opt != inspect.O3 {
		what := "effective optimisation is " + res.EffectiveOpt
		if compile.OptFlag == "" {
			what = "no -O flag: the build would run without optimisation (-O0); is CFLAGS set in the environment of Configure?"
		}
		problems = append(problems, what)
	}
	for _, f := range p.Slice.Flags {
		switch {
		case !compile.Has(f):
			problems = append(problems, "recipe flag "+f+" missing from the library objects' compile (LIB_CFLAGS, LIB_CPPFLAGS)")
		case !embedded.Has(f):
			problems = append(problems, "recipe flag "+f+" missing from the compiler line libcrypto embeds (LIB_CFLAGS, CPPFLAGS_Q)")
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
