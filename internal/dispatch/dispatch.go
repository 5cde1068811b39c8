// Package dispatch knows which functions OpenSSL's C sources compile for a
// higher instruction set on purpose, to run only after a run-time CPU check
// (crypto/evp/enc_b64_avx2.c's base64 encoder, behind OPENSSL_ia32cap_P):
// code that may exceed a slice's -march without being a wrong build. In a
// build it scans the release's own source tree; for binaries from elsewhere
// it holds the lists scanned from the releases osslbuild knows (Known).
package dispatch

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/csource"
)

// Func is one function compiled for a higher target, and where.
type Func struct {
	Name   string `json:"function"` // as the symbol table names it, without Mach-O's "_"
	File   string `json:"file"`     // in the source tree, "crypto/evp/enc_b64_avx2.c"
	Line   int    `json:"line"`
	Target string `json:"target"` // the target the source asks for: "avx2"
}

// The forms a target region takes in C: GCC's and clang's function
// attribute, pragma regions, and OpenSSL's own region macros
// (OPENSSL_TARGET_AVX2 ... OPENSSL_UNTARGET_AVX2, which expand to either).
var (
	attrTarget   = regexp.MustCompile(`__attribute__\s*\(\(\s*target\s*\(\s*"([^"]+)"`)
	pragmaPush   = regexp.MustCompile(`^\s*#\s*pragma\s+(?:GCC\s+target\s*\(\s*"([^"]+)"|clang\s+attribute\s+push\s*\(\s*__attribute__\s*\(\(\s*target\s*\(\s*"([^"]+)")`)
	pragmaPop    = regexp.MustCompile(`^\s*#\s*pragma\s+(?:GCC\s+pop_options|clang\s+attribute\s+pop)`)
	regionOpen   = regexp.MustCompile(`^\s*OPENSSL_TARGET_([A-Z0-9_]+)\s*$`)
	regionClose  = regexp.MustCompile(`^\s*OPENSSL_UNTARGET_([A-Z0-9_]+)\s*$`)
	attribute    = regexp.MustCompile(`__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)\s*`)
	funcDef      = regexp.MustCompile(`^(?:[A-Za-z_][\w\s\*]*?[\s\*])?([A-Za-z_]\w*)\s*\([^;]*$`)
	notFunctions = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "return": true, "sizeof": true, "defined": true}
)

// Scan reads every C file of a source tree (csource.Walk's) and returns
// the functions defined inside a target region or with a target
// attribute, sorted by file and line.
func Scan(tree fs.FS) ([]Func, error) {
	var out []Func
	err := csource.Walk(tree, []string{".c"}, func(p string, r io.Reader) error {
		fns, err := scanFile(p, r)
		out = append(out, fns...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("dispatch: %w", err)
	}
	slices.SortStableFunc(out, func(a, b Func) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return out, nil
}

func scanFile(p string, r io.Reader) ([]Func, error) {
	var out []Func
	target := ""  // the region's target, "" outside any
	pending := "" // a target attribute waiting for its function
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "#define"):
			continue // a macro defining a region is not one
		case regionOpen.MatchString(line):
			target = strings.ToLower(regionOpen.FindStringSubmatch(line)[1])
			continue
		case regionClose.MatchString(line), pragmaPop.MatchString(line):
			target = ""
			continue
		}
		if m := pragmaPush.FindStringSubmatch(line); m != nil {
			target = m[1] + m[2]
			continue
		}
		if m := attrTarget.FindStringSubmatch(line); m != nil {
			pending = m[1]
		}
		if target == "" && pending == "" {
			continue
		}
		// A definition starts at the line's first column, as OpenSSL's
		// style (and any indent) writes them; a prototype ends in ";".
		line = attribute.ReplaceAllString(line, "")
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || line[0] == '{' || line[0] == '}' {
			continue
		}
		m := funcDef.FindStringSubmatch(line)
		if m == nil || notFunctions[m[1]] {
			continue
		}
		out = append(out, Func{Name: m[1], File: p, Line: n, Target: cmp.Or(pending, target)})
		pending = ""
	}
	return out, sc.Err()
}

// List is the dispatch list that applies to a slice, and its name.
type List struct {
	Name  string // "OpenSSL 4.0 (known)", "the source tree", "every known release (no list for 3.7)"
	Funcs []Func
}

// Find is the list's entry for the function a symbol names. Compilers
// add suffixes to the clones they make ("insert_nl_gt16.isra.0",
// ".constprop.1", ".cold"), which count as the function.
func (l List) Find(symbol string) (Func, bool) {
	name := strings.TrimPrefix(symbol, "_")
	if i := strings.IndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	i := slices.IndexFunc(l.Funcs, func(f Func) bool { return f.Name == name })
	if i < 0 {
		return Func{}, false
	}
	return l.Funcs[i], true
}
