package check

// Schema identifies the JSON form of Result.
const Schema = "https://github.com/osslbuild/osslbuild/check/v1"

// Result is everything one check found and decided.
type Result struct {
	Schema   string   `json:"schema"`
	Path     string   `json:"path"`
	MinOpt   string   `json:"min_opt"`
	Archs    []string `json:"archs"`
	OK       bool     `json:"ok"`
	Binaries []Binary `json:"binaries"`
	Notes    []string `json:"notes"`    // nested archives, dynamic consumers and the like
	Skipped  int      `json:"skipped"`  // files and members that are no binary
	Failures []string `json:"failures"` // every problem, one sentence each, located

	nothing string // the failure saying no compiler line was found, if any
}

// Binary is one inspected file, or one member of a wheel or tarball.
type Binary struct {
	Path     string    `json:"path"`             // on disk
	Member   string    `json:"member,omitempty"` // inside a zip or tar.gz
	Artifact string    `json:"artifact,omitempty"`
	Format   string    `json:"format,omitempty"` // mach-o, universal, ar, elf
	Size     int64     `json:"size"`
	SHA256   string    `json:"sha256,omitempty"`
	Error    string    `json:"error,omitempty"` // could not be inspected
	Problems []Problem `json:"problems,omitempty"`
	Slices   []Slice   `json:"slices"`

	expect *expect // from an artifact manifest
}

// Slice is one architecture of a binary.
type Slice struct {
	Arch        string         `json:"arch"`
	Format      string         `json:"format"`
	Objects     int            `json:"objects"`
	Version     string         `json:"version,omitempty"`
	Platform    string         `json:"platform,omitempty"`
	BuiltOn     string         `json:"built_on,omitempty"`
	MinOS       string         `json:"minos,omitempty"` // "11.0", or "mixed: 10.12, 11.0"
	MinOSMixed  bool           `json:"minos_mixed"`
	MinOSCounts map[string]int `json:"minos_counts,omitempty"` // objects per deployment target
	Compiler    string         `json:"compiler,omitempty"`     // the least optimised compiler line
	Compilers   []string       `json:"compilers,omitempty"`    // every distinct compiler line
	Opt         string         `json:"opt,omitempty"`          // effective optimisation of Compiler
	OptFlag     string         `json:"opt_flag,omitempty"`     // the deciding -O word, "" when none
	Libcrypto   bool           `json:"libcrypto"`              // holds libcrypto's own build-info strings
	OK          bool           `json:"ok"`
	Problems    []Problem      `json:"problems,omitempty"`
}

// Rule names a kind of problem.
type Rule string

const (
	RuleOptimisation Rule = "optimisation"
	RuleCompilerLine Rule = "compiler-line"
	RuleArch         Rule = "arch"
	RuleMinOS        Rule = "minos"
	RuleInspect      Rule = "inspect"
	RuleNothing      Rule = "nothing-to-check"
)

// Problem is one broken rule.
type Problem struct {
	Rule    Rule   `json:"rule"`
	Message string `json:"message"`
}

// Name is "path" or "path(member)".
func (b Binary) Name() string {
	if b.Member == "" {
		return b.Path
	}
	return b.Path + "(" + b.Member + ")"
}
