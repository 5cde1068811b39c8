package check

import (
	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// Schema identifies the JSON form of Result.
const Schema = "https://github.com/osslbuild/osslbuild/check/v1"

// Result is everything one check found and decided.
type Result struct {
	Schema    string     `json:"schema"`
	Path      string     `json:"path"`
	MinOpt    string     `json:"min_opt"`
	Strict    bool       `json:"strict"`
	Archs     []string   `json:"archs"`
	OK        bool       `json:"ok"`
	Binaries  []Binary   `json:"binaries"`
	Artifacts []Artifact `json:"artifacts"`   // osslbuild artifacts found, each verified against its manifest
	SBOMs     []SBOM     `json:"sboms"`       // SBOMs found (a wheel's PEP 770 ones, an artifact's sbom.json), each held to the binaries beside it
	Notes     []string   `json:"notes"`       // skipped special files, links not followed, nested archives, dynamic consumers, unknown optimisation
	Skipped   int        `json:"skipped"`     // files and members that are no binary
	Slices    int        `json:"slices"`      // every slice of every binary
	NotJudged int        `json:"not_judged"`  // slices holding no OpenSSL code: nothing was judged (Slice.Status)
	Ended     int        `json:"end_of_life"` // judged slices whose OpenSSL series is past its end of life
	// Advisories is what OpenSSL's published advisories say of the whole
	// input: the table's date, the slices they affect, what was
	// suppressed.
	Advisories *AdvisoryReport `json:"advisories"`
	Failures   []string        `json:"failures"` // every problem, one line each, located

	nothing  string                 // the failure saying no OpenSSL build information was found, if any
	assessed *advisory.Suppressions // the -vex file's assessments
}

// Binary is one inspected file, or one member of a wheel or tarball.
type Binary struct {
	Path     string    `json:"path"`             // on disk
	Member   string    `json:"member,omitempty"` // inside a zip or tar.gz
	Artifact string    `json:"artifact,omitempty"`
	Links    []string  `json:"links,omitempty"`  // symlinks inside the checked directory that point to it
	Format   string    `json:"format,omitempty"` // mach-o, universal, ar, elf
	Size     int64     `json:"size"`
	SHA256   string    `json:"sha256,omitempty"` // with Options.Digests, and in an artifact
	Error    string    `json:"error,omitempty"`  // could not be inspected
	Problems []Problem `json:"problems,omitempty"`
	Slices   []Slice   `json:"slices"`

	file     *inspect.File // the facts, until judged
	root     *root         // the artifact holding it, nil when none
	failures []string      // what judging it found, for Result.Failures
	notes    []string
	judged   bool // a slice carries OpenSSL build information
}

// Slice is one architecture of a binary.
type Slice struct {
	Arch        string         `json:"arch"`
	Format      string         `json:"format"`
	Objects     int            `json:"objects"`
	Family      string         `json:"family,omitempty"` // OpenSSL, BoringSSL, LibreSSL, AWS-LC
	Version     string         `json:"version,omitempty"`
	Platform    string         `json:"platform,omitempty"`
	BuiltOn     string         `json:"built_on,omitempty"`
	MinOS       string         `json:"minos,omitempty"` // "11.0", or "mixed: 10.12 (3 objects), 11.0 (1 objects)"
	MinOSMixed  bool           `json:"minos_mixed"`
	MinOSCounts map[string]int `json:"minos_counts,omitempty"` // objects per deployment target
	Compiler    string         `json:"compiler,omitempty"`     // the build's compiler line, chosen by layout (see Candidates)
	Compilers   []string       `json:"compilers,omitempty"`    // every distinct compiler line
	Candidates  []Candidate    `json:"candidates,omitempty"`   // every compiler line with its evidence, the chosen one first
	Opt         string         `json:"opt,omitempty"`          // effective optimisation the evidence shows
	OptFlag     string         `json:"opt_flag,omitempty"`     // the deciding -O word, "" when none
	OptStatus   string         `json:"opt_status"`             // ok, below, unknown, none (not OpenSSL's code, or too little to judge)
	OptSource   string         `json:"opt_source,omitempty"`   // the evidence the verdict rests on: compiler-line or machine-code
	Code        *Code          `json:"code,omitempty"`         // what the machine code says, beside the compiler line
	ISA         *ISA           `json:"isa,omitempty"`          // the instruction set of compiled x86-64 or arm64 code
	Signature   *Signature     `json:"signature,omitempty"`    // a linked Mach-O image's code signature
	Dylib       *Dylib         `json:"dylib,omitempty"`        // a linked image's install name (SONAME) and what it loads
	Unknown     string         `json:"unknown,omitempty"`      // why the optimisation is unknown
	Evidence    []Evidence     `json:"evidence,omitempty"`
	Libcrypto   bool           `json:"libcrypto"` // holds libcrypto's own build-info strings
	// Unmapped are build-info strings (and source paths) found in bytes
	// the slice's format does not load: appended past the end of an
	// image, an ELF section no segment maps. Never evidence; each is a
	// note too.
	Unmapped []Unmapped `json:"unmapped,omitempty"`
	// Series is the OpenSSL release series of Version and its end of
	// life (internal/lifecycle), for a judged slice whose version string
	// names an OpenSSL release; nil otherwise (forks, no version).
	Series *Series `json:"series,omitempty"`
	// Advisories are OpenSSL's published advisories affecting Version
	// (internal/advisory), for a judged slice whose version string names
	// an OpenSSL release; nil otherwise (forks, no version).
	Advisories *SliceAdvisories `json:"advisories,omitempty"`
	// Status is the verdict in a word: "ok", "failed", or "not judged"
	// for a slice holding no OpenSSL code (libz beside libcrypto, a file
	// without OpenSSL), which passes nothing and fails nothing.
	Status   string    `json:"status"`
	OK       bool      `json:"ok"` // no problem found (true for a slice not judged too: see Status)
	Problems []Problem `json:"problems,omitempty"`
}

// Slice statuses.
const (
	StatusOK        = "ok"
	StatusFailed    = "failed"
	StatusNotJudged = "not judged"
)

// Signature is a linked Mach-O image's code signature as check found it:
// its kind and whether every page hash still matches (arm64 code with a
// stale or no signature fails, rule code-signature). A certificate's CMS
// signature is not verified, only the hashes it covers.
type Signature struct {
	Kind       string `json:"kind,omitempty"` // "ad hoc", "ad hoc (linker-signed)", "certificate"
	Identifier string `json:"identifier,omitempty"`
	Hash       string `json:"hash,omitempty"` // sha256, sha1
	Pages      int    `json:"pages,omitempty"`
	Stale      int    `json:"stale"` // hashes that no longer match
	Valid      bool   `json:"valid"`
	Malformed  string `json:"malformed,omitempty"` // why it could not be read
}

// Dylib is what a linked Mach-O image says of itself and loads: its
// install name (a dylib's LC_ID_DYLIB) with its versions, the dylibs it
// loads by the names the loader will look for, and its run paths. An
// absolute install name outside the system (a builder's /Library/... or
// /Users/...) is where a program linked against it will look. For a linked
// ELF image it is the dynamic section: the SONAME as install name,
// DT_NEEDED as loads, DT_RPATH and DT_RUNPATH as run paths.
type Dylib struct {
	InstallName   string   `json:"install_name,omitempty"`
	Current       string   `json:"current_version,omitempty"`
	Compatibility string   `json:"compatibility_version,omitempty"`
	Loads         []string `json:"loads"`
	Rpaths        []string `json:"rpaths,omitempty"`
	// Unreadable is why an ELF image's dynamic section, which its program
	// headers announce, could not be read (malformed, or past one of the
	// reader's limits); the other fields are then empty, not "none".
	Unreadable string `json:"unreadable,omitempty"`
}

// Series is a release series and its end of life.
type Series struct {
	Name      string `json:"name"`        // "3.0", "1.1.1"
	EndOfLife string `json:"end_of_life"` // YYYY-MM-DD, upstream's last day of support
	LTS       bool   `json:"lts"`
	Ended     bool   `json:"ended"` // past its end of life on the day of the check
}

// Code is the code classifier's verdict on a slice (inspect.CodeVerdict):
// how the machine code looks, whatever the compiler line claims.
type Code struct {
	Class        string  `json:"class"` // -O0-like, optimised, too little evidence
	Score        float64 `json:"score"` // share of measured functions showing an -O0 trait; -O0-like from 0.5
	Functions    int     `json:"functions"`
	Instructions int     `json:"instructions"`
	Objects      int     `json:"objects"`     // measured
	AsmObjects   int     `json:"asm_objects"` // taken for hand-written assembly, left out
}

// ISA is what an x86-64 or arm64 slice's compiled code uses (every function
// decoded; hand-written assembly left out per member in a static
// library), and what holding it to a level found.
type ISA struct {
	Level        string   `json:"level"`      // lowest level holding every extension used
	Extensions   []string `json:"extensions"` // used, lowest level first
	Functions    int      `json:"functions"`
	Instructions int      `json:"instructions"`
	Undecoded    int      `json:"undecoded"`   // bytes not read as an instruction
	Attribution  string   `json:"attribution"` // members (assembly left out) or linked (together)
	AsmObjects   int      `json:"asm_objects"`
	Limit        string   `json:"limit,omitempty"`      // held to: -isa, or an artifact's -march
	List         string   `json:"list,omitempty"`       // the dispatch list that applied
	Dispatched   []string `json:"dispatched,omitempty"` // functions above the limit the list names
	Above        []ISAUse `json:"above"`                // functions above the limit outside it
	Unjudged     string   `json:"unjudged,omitempty"`   // why Above fails nothing (a linked image)
}

// ISAUse is a function above the limit: its highest-level instruction.
type ISAUse struct {
	Member      string `json:"member,omitempty"`
	Function    string `json:"function"`
	Extension   string `json:"extension"`
	Level       string `json:"level"`
	Instruction string `json:"instruction"`
}

// Candidate is one "compiler: " string found in a slice.
type Candidate struct {
	Line        string   `json:"line"`
	Member      string   `json:"member,omitempty"`
	Offset      int64    `json:"offset"`
	Beside      []string `json:"beside"`     // kinds of build-info strings laid out with it
	Configured  bool     `json:"configured"` // carries Configure's -D flags
	Placeholder bool     `json:"placeholder"`
	// Attested: laid out with libcrypto's other build strings, or carrying
	// Configure's flags. A string that is neither (V8's "compiler: ") is no
	// evidence and never chosen.
	Attested bool `json:"attested"`
	Chosen   bool `json:"chosen"`
}

// Unmapped is a run of bytes a slice's format does not load that holds
// build information (inspect.Unmapped).
type Unmapped struct {
	Member  string   `json:"member,omitempty"`
	Start   int64    `json:"start"` // from the start of the file
	End     int64    `json:"end"`   // exclusive
	Where   string   `json:"where"`
	Strings []string `json:"strings"`
}

// Evidence is one indication of how a slice was optimised.
type Evidence struct {
	Source string `json:"source"` // compiler-line, machine-code
	Known  bool   `json:"known"`
	Opt    string `json:"opt,omitempty"`
	Flag   string `json:"flag,omitempty"`
	Detail string `json:"detail"`
}

// Artifact is an osslbuild artifact found in the input and what verifying
// it against its manifest found.
type Artifact struct {
	Path     string   `json:"path"`             // directory, or the tarball
	Member   string   `json:"member,omitempty"` // the artifact's directory inside the tarball
	Name     string   `json:"name"`
	Version  string   `json:"version"` // OpenSSL version the manifest records
	Files    int      `json:"files"`   // files the manifest lists
	OK       bool     `json:"ok"`
	Problems []string `json:"problems,omitempty"`
}

// Rule names a kind of problem: the rules of package validate
// (optimisation, compiler-line, slices, cpu, deployment-target, version,
// ...) and RuleManifest, which only check has.
type Rule string

const (
	// RuleManifest: an artifact's manifest cannot be held against its library.
	RuleManifest Rule = "manifest"
	// RuleEndOfLife: the slice's OpenSSL series is past its end of life
	// (a failure with -strict only).
	RuleEndOfLife Rule = "end-of-life"
	// RuleAdvisory: the slice's OpenSSL release has a published advisory
	// at or above -fail-on (a failure with -fail-on only).
	RuleAdvisory Rule = "advisory"
)

// Problem is one broken rule.
type Problem struct {
	Rule    Rule   `json:"rule"`
	Member  string `json:"member,omitempty"` // the archive member it concerns, "" for the whole slice or binary
	Message string `json:"message"`
}

// where is the binary's name with the problem's member, as ar and ld print
// it: "lib/libcrypto.a(libcrypto-lib-cversion.o)".
func (p Problem) where(b Binary) string { return memberName(b.Name(), p.Member) }

// Name is "path" or "path(member)".
func (b Binary) Name() string { return memberName(b.Path, b.Member) }

// memberName is "path", or "path(member)" for a member of an archive.
func memberName(path, member string) string {
	if member == "" {
		return path
	}
	return path + "(" + member + ")"
}
