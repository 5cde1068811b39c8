package check

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/report"
)

// SARIF is the result as a SARIF 2.1.0 log, for GitHub code scanning: one
// result per failing slice (and per binary or artifact with a problem of
// its own), its rule the first problem's, its message every problem, its
// location the file; and one per slice with known advisories, of rule
// advisory (an error when -fail-on fails it, a warning or a note
// otherwise). -json is check's own schema, everything it found;
// -format=sarif is the failures and advisories, in the form code scanning
// reads.

const sarifSchema = "https://json.schemastore.org/sarif-2.1.0.json"

// ruleHelp describes every rule a result can name.
var ruleHelp = map[string]string{
	string(validate.RuleOptimisation):  "OpenSSL's code is optimised below the minimum (-minopt), or its compiler line and machine code disagree",
	string(validate.RuleCompilerLine):  "OpenSSL's compiler line is missing, duplicated or records nothing where it must",
	string(validate.RuleSlices):        "a required architecture slice is missing, or the slices disagree",
	string(validate.RuleCPU):           "an object is for another CPU",
	string(validate.RuleFileType):      "a Mach-O file of an unexpected type",
	string(validate.RuleDeployment):    "an object's deployment target is missing or wrong, or (-strict) below the one its compiler line names",
	string(validate.RuleArchFlag):      "the compiler line names no -arch, or another architecture's",
	string(validate.RuleFlag):          "the compiler line lacks a flag the build promised",
	string(validate.RulePlatform):      "the Configure target is not the expected one",
	string(validate.RuleVersion):       "the OpenSSL version is not the expected one, or the slices disagree",
	string(validate.RuleFormat):        "the file cannot be read as what it should be",
	string(validate.RuleISA):           "compiled code uses instructions above the level (-isa, the build's -march or -mcpu, or under -strict apple-m1 for a macOS arm64 slice) outside the release's dispatch list",
	string(validate.RuleCodeSignature): "an arm64 image's code signature is missing, malformed or stale: macOS will not load it",
	string(validate.RuleInstallName):   "an artifact's dylib has another install name than its manifest records",
	string(validate.RuleDependency):    "an artifact's dylib loads a dylib other than libSystem and its sibling, or has a run path",
	string(validate.RuleBuildPath):     "a dylib names the build directory",
	string(validate.RuleExports):       "a dylib exports a symbol no object of the release defines",
	string(validate.RuleRefusedFlag):   "an artifact's compiler line shows a flag that loads code into the compiler, reads a file into the compile or changes code generation behind -O3",
	string(RuleManifest):               "an osslbuild artifact differs from what its manifest promises",
	string(RuleEndOfLife):              "the OpenSSL series is past its end of life (-strict)",
	string(RuleSBOMMismatch):           "an SBOM shipped with the binaries (a wheel's .dist-info/sboms/, an artifact's sbom.json) lists another OpenSSL version than they hold",
	string(RuleSBOMMalformed):          "an SBOM shipped with the binaries cannot be read: malformed JSON, or CycloneDX or SPDX fields of the wrong type",
	string(RuleAdvisory):               "the OpenSSL release has published security advisories (OpenSSL's, matched by version): an error at or above -fail-on, a warning (high, critical, unrated) or note otherwise",
	"inspect":                          "the file could not be inspected",
	"nothing-judged":                   "nothing in the input holds OpenSSL's build information",
}

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool struct {
		Driver sarifDriver `json:"driver"`
	} `json:"tool"`
	Results []sarifResult `json:"results"`
	// Properties (a SARIF property bag) name the advisory table the
	// results were judged against.
	Properties *sarifRunProperties `json:"properties,omitempty"`
}

type sarifRunProperties struct {
	Advisories sarifTable `json:"osslbuild.advisories"`
}

type sarifTable struct {
	Table   string            `json:"table"`
	AsOf    string            `json:"as_of"`
	Origin  string            `json:"origin"`
	Sources []advisory.Source `json:"sources"`
	Stale   string            `json:"stale,omitempty"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifLocation struct {
	Physical struct {
		Artifact struct {
			URI string `json:"uri"`
		} `json:"artifactLocation"`
	} `json:"physicalLocation"`
}

// SARIF writes res as a SARIF 2.1.0 log; version names the tool's own.
func SARIF(w io.Writer, res *Result, version string) error {
	results := []sarifResult{} // [] in the log when nothing failed
	addLevel := func(rule, level, file, msg string) {
		r := sarifResult{RuleID: rule, Level: level, Message: sarifMessage{Text: report.Printable(msg)}}
		if file != "" {
			var l sarifLocation
			l.Physical.Artifact.URI = sarifURI(file)
			r.Locations = []sarifLocation{l}
		}
		results = append(results, r)
	}
	add := func(rule, file, msg string) { addLevel(rule, "error", file, msg) }
	for _, b := range res.Binaries {
		if b.Error != "" {
			add("inspect", b.Path, b.Error)
			continue
		}
		if len(b.Problems) > 0 {
			add(string(b.Problems[0].Rule), b.Path, joinProblems(b, "", b.Problems))
		}
		for _, s := range b.Slices {
			// Advisories are a result of their own (rule advisory), failing
			// under -fail-on and a warning or note otherwise.
			others := slices.DeleteFunc(slices.Clone(s.Problems), func(p Problem) bool { return p.Rule == RuleAdvisory })
			if len(others) > 0 {
				add(string(others[0].Rule), b.Path, joinProblems(b, " "+s.Arch, others))
			}
			if sa := s.Advisories; sa != nil && sa.Total > 0 {
				level := "note"
				switch {
				case len(sa.Failing) > 0:
					level = "error"
				case sa.Highest == string(advisory.Critical), sa.Highest == string(advisory.High), sa.Highest == string(advisory.Unknown):
					level = "warning"
				}
				msg := strings.Join(advisoryLines(b, s), "\n")
				for _, p := range s.Problems {
					if p.Rule == RuleAdvisory {
						msg = p.where(b) + " " + s.Arch + ": " + p.Message + "\n" + msg
					}
				}
				addLevel(string(RuleAdvisory), level, b.Path, msg)
			}
		}
	}
	for _, a := range res.Artifacts {
		if len(a.Problems) > 0 {
			add(string(RuleManifest), a.Path, "artifact "+a.Name+": "+strings.Join(a.Problems, "\n"))
		}
	}
	for _, s := range res.SBOMs {
		for _, p := range s.Problems {
			add(string(p.Rule), s.Path, s.Name()+": "+p.Message)
		}
	}
	if res.nothing != "" {
		add("nothing-judged", res.Path, res.nothing)
	}
	used := map[string]bool{}
	for _, r := range results {
		used[r.RuleID] = true
	}
	var rules []sarifRule
	for _, id := range slices.Sorted(maps.Keys(ruleHelp)) {
		rules = append(rules, sarifRule{ID: id, ShortDescription: sarifMessage{Text: ruleHelp[id]}})
	}
	// A rule the table lacks still gets an entry, in name order: the log
	// is the same bytes on every run.
	for _, id := range slices.Sorted(maps.Keys(used)) {
		if _, ok := ruleHelp[id]; !ok {
			rules = append(rules, sarifRule{ID: id, ShortDescription: sarifMessage{Text: id}})
		}
	}
	run := sarifRun{Results: results}
	run.Tool.Driver = sarifDriver{Name: "osslbuild check", InformationURI: "https://github.com/osslbuild/osslbuild", Version: version, Rules: rules}
	if a := res.Advisories; a != nil {
		// The table, not the matches: those are the results.
		run.Properties = &sarifRunProperties{Advisories: sarifTable{Table: a.Table, AsOf: a.AsOf, Origin: a.Origin, Sources: a.Sources, Stale: a.Stale}}
	}
	return report.JSON(w, sarifLog{Schema: sarifSchema, Version: "2.1.0", Runs: []sarifRun{run}})
}

// sarifURI is a file as SARIF names it (artifactLocation.uri, an RFC 3986
// URI reference): relative paths stay relative references (code scanning
// resolves them against the repository), absolute ones become file: URIs.
// Every byte but the unreserved ones and the "/" between segments is
// percent-encoded: a quote, a backslash, a space, a newline, a "%", a ":"
// (which in a first segment would read as a scheme), a "?" or "#".
func sarifURI(p string) string {
	p = filepath.ToSlash(p)
	if strings.HasPrefix(p, "/") {
		return "file://" + escapePath(p)
	}
	for strings.HasPrefix(p, "./") {
		p = strings.TrimLeft(strings.TrimPrefix(p, "./"), "/")
	}
	return escapePath(p)
}

// escapePath percent-encodes p, keeping RFC 3986's unreserved characters
// (ALPHA, DIGIT, "-", ".", "_", "~") and "/".
func escapePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~', c == '/':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
