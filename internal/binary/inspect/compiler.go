package inspect

import (
	"fmt"
	"strings"
)

// OptLevel is a compiler optimisation level, ordered for a "minimum level"
// policy: a level satisfies a minimum when it is >= it.
//
// The order is O0 < Og < O1 < Oz < Os < O2 < O3 < Ofast:
//   - Og ("optimise for debugging") is below O1 because GCC's Og drops O1
//     passes (clang treats it as O1; we take the weaker reading).
//   - Os and Oz start from the O2 pipeline but turn off size-increasing
//     passes, so they rank above O1 and below O2; Oz gives up more than Os.
//   - Ofast is O3 plus -ffast-math and friends, so it satisfies any -O3
//     minimum; whether fast-math is acceptable is a policy question for the
//     caller (it can look at CompilerLine.OptFlag).
type OptLevel int

const (
	O0 OptLevel = iota // no optimisation: the compiler default when no -O flag is given
	Og
	O1 // also what a bare "-O" means
	Oz
	Os
	O2
	O3 // also -O4 and higher, which GCC and clang treat as -O3
	Ofast
)

var optNames = [...]string{O0: "-O0", Og: "-Og", O1: "-O1", Oz: "-Oz", Os: "-Os", O2: "-O2", O3: "-O3", Ofast: "-Ofast"}

func (o OptLevel) String() string {
	if o >= 0 && int(o) < len(optNames) {
		return optNames[o]
	}
	return fmt.Sprintf("OptLevel(%d)", int(o))
}

// AtLeast reports whether o satisfies a minimum level.
func (o OptLevel) AtLeast(min OptLevel) bool { return o >= min }

// optSuffixes are what may follow "-O" in a compiler flag, besides a
// number from 3 up.
var optSuffixes = map[string]OptLevel{"": O1, "0": O0, "1": O1, "2": O2, "s": Os, "z": Oz, "g": Og, "fast": Ofast}

// CompilerLine is a parsed OpenSSL "compiler: " line.
type CompilerLine struct {
	Raw  string   // the line without its "compiler: " prefix
	Args []string // argv words; Args[0] is the compiler ("cc", "gcc", ...)
	// Opt is the effective optimisation: the last -O flag wins, and no -O
	// flag at all means -O0 (the compiler default; pyca's builds with
	// CFLAGS from the environment shipped that way).
	Opt OptLevel
	// OptFlag is the deciding -O word as written, "" when there is none. An
	// unrecognised "-O..." word counts as a -O flag at level O0, the most
	// conservative reading, so policy never credits an optimisation it
	// cannot name.
	OptFlag string
	Archs   []string // values of every "-arch X"
	// MinOS is the macOS deployment target the line compiles for, the
	// value of its last -mmacosx-version-min= (or clang's
	// -mmacos-version-min=), as clang takes it; MinOSFlag is that word.
	// Both "" when the line names none.
	MinOS, MinOSFlag string
}

// ParseCompilerLine splits a compiler line into words and derives the
// effective optimisation level, -arch values and deployment target. It accepts the line with or
// without its "compiler: " prefix. mkbuildinf.pl joins argv with spaces and
// loses any quoting, so words are split on white space.
func ParseCompilerLine(s string) CompilerLine {
	raw := strings.TrimPrefix(s, "compiler: ")
	c := CompilerLine{Raw: raw, Args: strings.Fields(raw)}
	msvc := len(c.Args) > 0 && isMSVC(c.Args[0])
	for i := 1; i < len(c.Args); i++ {
		w := c.Args[i]
		switch {
		case w == "-arch" && i+1 < len(c.Args):
			c.Archs = append(c.Archs, c.Args[i+1])
			i++
		case strings.HasPrefix(w, "-mmacosx-version-min=") || strings.HasPrefix(w, "-mmacos-version-min="):
			_, c.MinOS, _ = strings.Cut(w, "=")
			c.MinOSFlag = w
			if c.MinOS == "" {
				c.MinOSFlag = ""
			}
		case msvc && (strings.HasPrefix(w, "/O") || strings.HasPrefix(w, "-O")):
			if o, ok := msvcOpts[w[2:]]; ok {
				c.Opt, c.OptFlag = o, w
			}
		case strings.HasPrefix(w, "-O"):
			// What follows "-O": O0 (the zero level) when it is none of
			// the known levels (see OptFlag).
			o, ok := optSuffixes[w[2:]]
			if !ok && isDigits(w[2:]) { // -O3, -O4, -O99: GCC and clang clamp to -O3
				o = O3
			}
			c.Opt, c.OptFlag = o, w
		}
	}
	return c
}

// isMSVC reports whether a compiler line's first word is Microsoft's
// compiler (Windows OpenSSL records "compiler: cl /O2 ..."), or clang in
// its mode, whose /O flags differ from GCC's -O.
func isMSVC(cc string) bool {
	base := strings.ToLower(cc[strings.LastIndexAny(cc, `/\`)+1:])
	base = strings.TrimSuffix(base, ".exe")
	return base == "cl" || base == "clang-cl"
}

// msvcOpts decode what follows /O in an MSVC flag: /Od disables
// optimisation (cl's default without any /O), /O1 optimises for size,
// /O2 and /Ox for speed. /Os, /Ot, /Oi, /Oy and the like tune an
// optimisation some other flag enables and decide nothing alone.
var msvcOpts = map[string]OptLevel{"d": O0, "1": Os, "2": O2, "x": O2}

// Has reports whether flag appears among the arguments (the compiler name
// excluded). A flag with spaces ("-arch arm64") must appear as consecutive
// words.
func (c CompilerLine) Has(flag string) bool {
	want := strings.Fields(flag)
	if len(want) == 0 || len(c.Args) < 2 {
		return false
	}
	// Words hold no spaces: joined with one, the flag's are a run of the
	// line's exactly when they are whole words of it.
	return strings.Contains(" "+strings.Join(c.Args[1:], " ")+" ", " "+strings.Join(want, " ")+" ")
}
