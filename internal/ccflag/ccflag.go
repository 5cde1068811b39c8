// Package ccflag names the compiler flags that must never build OpenSSL,
// whoever gives them: those that load code into the compiler or read a
// file into the compile, and those that change the code generated behind
// -O3. A recipe is refused for one before anything runs (package recipe,
// which also allows only a short list of flag families), and validation
// refuses a library whose embedded compiler line shows one (package
// validate), so a build that got one past the recipe fails anyway.
//
// The list holds only flags that OpenSSL's own Configure never adds to a
// compiler line on the platforms osslbuild builds for (it adds "-Wa," and
// "-Qunused-arguments" on Linux, for instance), so the backstop fails
// nothing a clean build embeds.
package ccflag

import (
	"slices"
	"strings"
)

// Kind is what a refused flag does.
type Kind string

const (
	// LoadsCode: the flag runs code of someone else's in the compiler, or
	// makes the driver run other programs.
	LoadsCode Kind = "loads code into the compiler"
	// ReadsFile: the flag reads a file into the compile (more flags, or
	// text the sources did not ask for).
	ReadsFile Kind = "reads a file into the compile"
	// ChangesCodegen: the flag changes the generated code behind -O3,
	// with no -O flag to show it.
	ChangesCodegen Kind = "changes code generation behind -O3"
)

// Refusal is why a flag is refused.
type Refusal struct {
	Kind Kind
	Why  string
}

func (r Refusal) String() string { return string(r.Kind) + ": " + r.Why }

type rule struct {
	match func(string) bool
	Refusal
}

func exact(names ...string) func(string) bool {
	return func(f string) bool { return slices.Contains(names, f) }
}

// prefix matches the flag itself and its joined forms ("-B", "-B/dir").
func prefix(ps ...string) func(string) bool {
	return func(f string) bool {
		return slices.ContainsFunc(ps, func(p string) bool { return strings.HasPrefix(f, p) })
	}
}

var rules = []rule{
	{prefix("-fplugin", "-fpass-plugin"), Refusal{LoadsCode, "a compiler plugin: its constructor and passes run inside the compiler during make, and rewrite the code at will"}},
	{exact("-load"), Refusal{LoadsCode, "clang's -cc1 option that loads a plugin library into the compiler"}},
	{prefix("-B", "--prefix", "-ccc-", "--driver-mode", "-cc1", "--gcc-toolchain", "-gcc-toolchain", "--gcc-install-dir", "-resource-dir", "-fuse-ld", "--ld-path"), Refusal{LoadsCode, "tells the compiler driver where to find the programs and files it runs (cc1, as, ld, its own headers): programs from another directory would compile OpenSSL"}},
	{exact("-Xclang", "-mllvm", "-Xassembler", "-Xpreprocessor", "-Xcompiler", "-Xopenmp", "-Xlinker"), Refusal{LoadsCode, "passes the next argument to a part of the compiler unchecked (\"-Xclang -load\" loads a plugin, \"-mllvm -opt-bisect-limit=0\" turns every optimisation off)"}},
	{prefix("-Xarch_"), Refusal{LoadsCode, "passes the next argument to the compiler for one architecture unchecked"}},
	{prefix("--config"), Refusal{ReadsFile, "reads more compiler flags from a clang configuration file"}},
	{prefix("@"), Refusal{ReadsFile, "a response file: the compiler reads more flags from the file, unseen by any check"}},
	{prefix("-include", "-imacros", "--include", "--imacros"), Refusal{ReadsFile, "reads a file into every source before its first line: a header holding #pragma clang optimize off (or redefining anything) would undo -O3 unseen"}},
	{prefix("-specs", "--specs"), Refusal{ReadsFile, "a GCC specs file: it rewrites the commands the driver runs"}},
	{prefix("-fprofile-use", "-fprofile-instr-use", "-fprofile-sample-use", "-fauto-profile", "-fprofile-remapping-file"), Refusal{ReadsFile, "reads a profile into the compile, which decides inlining, layout and what is optimised"}},
	{prefix("-fsanitize", "-fno-sanitize"), Refusal{ChangesCodegen, "a sanitiser: instruments every memory access or operation and links a run-time (and reads an ignore list), so the code is not what -O3 makes"}},
	{prefix("-fno-inline", "-finline", "-fno-early-inlining", "-fkeep-inline-functions"), Refusal{ChangesCodegen, "changes inlining, which is -O3's: -fno-inline builds every call out of line with no -O flag to show it"}},
	{prefix("-fprofile", "-fno-profile", "-fcs-profile", "-ftest-coverage", "--coverage", "-coverage", "-fcoverage", "-finstrument-function", "-fxray", "-pg", "-fpatchable-function-entry"), Refusal{ChangesCodegen, "profiling or coverage instrumentation: counters and calls in every function"}},
	{prefix("-U__"), Refusal{ChangesCodegen, "undefines a macro the compiler predefines: sources test __OPTIMIZE__ and the instruction-set macros, and take their unoptimised or generic paths without them"}},
	{prefix("-O"), Refusal{ChangesCodegen, "optimisation is OpenSSL's own -O3; a flag must not override it"}},
}

// Check is the refusal of one flag (one argument as the compiler gets it),
// and false when the list does not name it. -O flags are named too; a
// compiler line's -O flags are validation's optimisation rule's to judge,
// see Line.
func Check(f string) (Refusal, bool) {
	for _, r := range rules {
		if r.match(f) {
			return r.Refusal, true
		}
	}
	return Refusal{}, false
}

// Found is a refused flag on a compiler line.
type Found struct {
	Flag string
	Refusal
}

// Line lists the refused flags of a compiler line ("cc -fPIC ... -DNDEBUG",
// as OpenSSL embeds it after "compiler: "), in order, each once; the
// compiler's name and the -O flags (which validation's optimisation rule
// judges) are not reported.
func Line(line string) []Found {
	var out []Found
	seen := map[string]bool{}
	fields := strings.Fields(line)
	for i, f := range fields {
		if i == 0 || seen[f] || strings.HasPrefix(f, "-O") {
			continue
		}
		if r, ok := Check(f); ok {
			seen[f] = true
			out = append(out, Found{Flag: f, Refusal: r})
		}
	}
	return out
}
