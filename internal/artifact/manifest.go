package artifact

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/configure/record"
	"github.com/osslbuild/osslbuild/internal/dispatch"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/toolid"
)

// ManifestName is the manifest's file name inside an artifact.
const ManifestName = "manifest.json"

// Schema identifies the manifest format.
const Schema = "https://github.com/osslbuild/osslbuild/manifest/v1"

// Manifest records how an artifact was made. It holds no build directory
// and no time of day, so two builds of the same inputs write the same bytes.
type Manifest struct {
	Schema          string          `json:"schema"`
	Name            string          `json:"name"`
	Osslbuild       string          `json:"osslbuild"`
	Recipe          RecipeRef       `json:"recipe"`
	OpenSSL         Source          `json:"openssl"`
	Patches         []Patch         `json:"patches"`
	Target          platform.Slice  `json:"target"` // the slice, exactly as the plan that built it had it
	Toolchain       toolid.Identity `json:"toolchain"`
	Configure       Configure       `json:"configure"`
	SourceDateEpoch int64           `json:"source_date_epoch"`
	CompilerLines   []CompilerLine  `json:"compiler_lines"`
	CodeEvidence    []CodeEvidence  `json:"code_evidence,omitempty"`   // per library and architecture: what the machine code says
	LinkChecks      []LinkCheck     `json:"link_checks,omitempty"`     // per architecture: the libraries linked into a program
	Dylibs          []Dylib         `json:"dylibs,omitempty"`          // per dylib and architecture: install name, versions, what it loads, its signature
	Slices          []*Manifest     `json:"slices,omitempty"`          // universal2: each slice's manifest
	HeaderDispatch  []string        `json:"header_dispatch,omitempty"` // universal2: headers merged per arch
	// Variant names a build made with some stages swapped (pipeline's
	// PycaWay: "pyca-way"); "" for osslbuild's own.
	Variant string `json:"variant,omitempty"`
	// Claims are what the maker of a slice asserted that a merge could
	// neither verify nor recompute: recorded as the slice's, never as the
	// universal artifact's own facts.
	Claims *Claims           `json:"claims,omitempty"`
	Files  map[string]string `json:"files"` // sha256 of every other file in the artifact
}

// Claims are a merged slice's unverifiable records: the osslbuild and the
// toolchain that built it elsewhere, the recipe it names, and where its
// source came from and who signed it (the merge verified the tarball's
// sha256 and size against its own recipe, not the signature).
type Claims struct {
	Osslbuild string          `json:"osslbuild"`
	Toolchain toolid.Identity `json:"toolchain"`
	Recipe    RecipeRef       `json:"recipe"`
	Source    Source          `json:"openssl"`
}

// RecipeRef names the recipe and pins its content.
type RecipeRef struct {
	Name   string `json:"name"`
	Origin string `json:"origin,omitempty"` // "embedded" or "file" (-recipe=FILE)
	Path   string `json:"path"`             // recipe.RecordedPath: never an absolute path
	SHA256 string `json:"sha256"`
	// Content is a file recipe's bytes, so that anyone holding the
	// artifact can rebuild it (verify:rebuild). An embedded recipe is not
	// copied: the osslbuild revision the manifest names holds it at Path.
	// "" in a manifest from before it (docs/trust.md, "Rebuilding an artifact").
	Content string `json:"content,omitempty"`
}

// Source is the verified OpenSSL source release.
type Source struct {
	Version      string `json:"version"`
	File         string `json:"file"`
	SHA256       string `json:"sha256"`
	Size         int64  `json:"size"`
	URL          string `json:"url"`
	SignatureURL string `json:"signature_url,omitempty"`
	// SignatureSHA256 is the digest of the detached signature that was
	// verified ("" for a release without one, or a manifest from before it).
	SignatureSHA256 string `json:"signature_sha256,omitempty"`
	Signer          string `json:"signer,omitempty"`      // primary key fingerprint
	SigningKey      string `json:"signing_key,omitempty"` // (sub)key that made the signature
	SignedAt        string `json:"signed_at,omitempty"`
	// SignerKey is the key file that verified the signature and where it
	// came from: what a rebuild needs to verify the release the same way.
	SignerKey *KeyRef `json:"signer_key,omitempty"`
}

// KeyRef names a release key file and pins its content, as RecipeRef
// does a recipe.
type KeyRef struct {
	Fingerprint string `json:"fingerprint"` // its primary key's: the Source's signer
	// Origin is "osslbuild" (osslbuild's keys/, at the manifest's
	// osslbuild revision) or "recipe" (the recipe's release_keys).
	Origin string `json:"origin"`
	// Path is keys/openssl-<fingerprint>.asc in osslbuild's repository, or
	// the path the recipe gives, relative to the recipe (never absolute).
	Path   string `json:"path"`
	SHA256 string `json:"sha256"` // of the file's bytes
}

// Patch is one applied patch.
type Patch struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// Parts are the slices the artifact holds: each slice of a universal
// artifact, else its own.
func (m *Manifest) Parts() []platform.Slice {
	var out []platform.Slice
	for _, s := range m.Slices {
		if s != nil {
			out = append(out, s.Target)
		}
	}
	if len(m.Slices) == 0 {
		out = append(out, m.Target)
	}
	return out
}

// Configure is the exact invocation.
type Configure struct {
	Argv []string `json:"argv"`
	// Env is the complete environment passed, with the build directory
	// written as $WORK. What the invoking user had set is deliberately not
	// recorded: it had no effect, and would make the manifest differ.
	Env    []string `json:"env"`
	CFLAGS string   `json:"cflags"` // CFLAGS in the generated Makefile
}

// CompilerLine is a "compiler:" line found in a built library.
type CompilerLine struct {
	Arch    string `json:"arch"`
	Library string `json:"library"`
	Member  string `json:"member"`
	Line    string `json:"line"`
	Opt     string `json:"optimisation"`
}

// CodeEvidence is the code classifier's verdict on one library slice,
// taken when the build validated it: deterministic (the sample is fixed by
// the bytes), so it is the same for the same library.
type CodeEvidence struct {
	Arch      string  `json:"arch"`
	Library   string  `json:"library"`
	Class     string  `json:"class"`     // -O0-like, optimised, too little evidence
	Score     float64 `json:"score"`     // share of measured functions showing an -O0 trait (3 decimals); -O0-like from 0.5
	Functions int     `json:"functions"` // functions measured
	// ISA is the instruction-set evidence of an x86-64 slice.
	ISA *ISARecord `json:"isa,omitempty"`
}

// ISARecord is what a slice's compiled x86-64 code uses, the level it was
// held to (the slice's -march) and the functions above that level the
// sources compile for a higher target on purpose.
type ISARecord struct {
	Level      string          `json:"level"` // of the compiled code (hand-written assembly left out)
	Extensions []string        `json:"extensions,omitempty"`
	Limit      string          `json:"limit,omitempty"` // the level it was held to
	List       string          `json:"list,omitempty"`  // where the dispatch list came from
	Dispatched []dispatch.Func `json:"dispatched,omitempty"`
}

// CodeEvidenceOf lists the code verdicts of lib's slices (codeclass.Measure
// must have run on the report's file), as the manifest records them, with
// what the instruction-set rule found.
func CodeEvidenceOf(rep validate.Report, lib string) []CodeEvidence {
	f := rep.File
	if f == nil {
		return nil
	}
	var out []CodeEvidence
	for i, s := range f.Slices {
		c := s.Code
		if c == nil {
			continue
		}
		e := CodeEvidence{Arch: s.Arch, Library: lib, Class: string(c.Class),
			Score: math.Round(c.Score*1000) / 1000, Functions: c.Functions}
		if c.ISA != nil {
			e.ISA = &ISARecord{Level: c.ISA.Level, Extensions: c.ISA.Extensions}
			if i < len(rep.Slices) && rep.Slices[i].ISA != nil {
				v := rep.Slices[i].ISA
				e.ISA.Limit, e.ISA.List, e.ISA.Dispatched = v.Limit, v.List, v.Dispatched
			}
		}
		out = append(out, e)
	}
	return out
}

// ExpectOf is what manifest m promises for lib in its slice s: the
// build's own expectations, every version string naming its release, and
// compiled code held to the slice's level with the dispatch list the
// manifest records (for a manifest older than that record, the list known
// for its release).
func ExpectOf(m *Manifest, s platform.Slice, lib string) validate.Expect {
	list := dispatch.Known(m.OpenSSL.Version)
	for _, part := range append([]*Manifest{m}, m.Slices...) {
		if part == nil {
			continue
		}
		for _, c := range part.CodeEvidence {
			if c.ISA != nil && c.ISA.List != "" && c.Library == lib && validate.SameArch(c.Arch, s.Arch) {
				list = dispatch.List{Name: c.ISA.List, Funcs: c.ISA.Dispatched}
			}
		}
	}
	return Expectation(s, lib, m.OpenSSL.Version, list)
}

// Expectation is what slice s's library lib must show, whether a build's
// Plan or an artifact's manifest says what s is: the build's own
// expectations (validate.Built), every version string naming version
// ("" checks none), and compiled x86-64 code held to the slice's level
// except the functions of list, compiled higher on purpose.
func Expectation(s platform.Slice, lib, version string, list dispatch.List) validate.Expect {
	e := validate.Built(s, lib)
	e.Version = version
	if e.ISA != nil {
		e.ISA.Dispatch = list
	}
	return e
}

// LinkCheck records that a consumer program linked with every member of
// the artifact's libraries into an executable for one architecture and
// deployment target, against the system library named; the facts only
// (tools, stubs and the program by version and digest, no path), so
// manifests stay reproducible.
type LinkCheck struct {
	Arch          string   `json:"arch"`
	Platform      string   `json:"platform"` // linked for, e.g. "macos 10.12"
	Program       string   `json:"program"`  // e.g. smoke/smoke.c
	ProgramSHA256 string   `json:"program_sha256"`
	Libraries     []string `json:"libraries"` // linked whole (-all_load)
	Members       int      `json:"members"`   // objects of Arch in them
	Linker        string   `json:"linker"`
	System        string   `json:"system"` // the system library or stub linked against
	SystemSHA256  string   `json:"system_sha256,omitempty"`
	Note          string   `json:"note,omitempty"` // where System does not match Platform exactly
	Result        string   `json:"result"`
}

// WriteManifest hashes every file in dir (except the manifest itself), stores
// the digests in m.Files and writes dir/manifest.json.
func WriteManifest(ctx context.Context, dir string, m *Manifest) error {
	files, err := HashTree(ctx, dir)
	if err != nil {
		return err
	}
	delete(files, ManifestName)
	m.Files = files
	m.Schema = Schema
	b, err := EncodeManifest(m)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestName), b, 0o644)
}

// EncodeManifest is m as manifest.json holds it, byte for byte.
func EncodeManifest(m *Manifest) ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseManifest decodes a manifest.json's bytes.
func ParseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// ParseIfOurs is ParseManifest for a manifest.json met on the way (in a
// directory or tarball check walks): a JSON document that does not claim
// osslbuild's Schema is someone else's (an npm package's, a web app's)
// and gives nil and no error, so that only a file that says it is
// osslbuild's manifest can fail to be one.
func ParseIfOurs(b []byte) (*Manifest, error) {
	var head struct {
		Schema any `json:"schema"`
	}
	if err := json.Unmarshal(b, &head); err != nil || head.Schema != Schema {
		if json.Valid(b) || !bytes.Contains(b, []byte(Schema)) {
			return nil, nil
		}
	}
	return ParseManifest(b)
}

// CompilerLinesOf lists the "compiler:" lines inspect found in lib, per
// slice, as the manifest records them.
func CompilerLinesOf(f *inspect.File, lib string) []CompilerLine {
	if f == nil {
		return nil
	}
	var out []CompilerLine
	for _, s := range f.Slices {
		for _, bi := range s.BuildInfo {
			if bi.Kind == inspect.InfoCompiler {
				out = append(out, CompilerLine{Arch: s.Arch, Library: lib, Member: bi.Member, Line: bi.Text,
					Opt: inspect.ParseCompilerLine(bi.Text).Opt.String()})
			}
		}
	}
	return out
}

// VerifyManifest holds a manifest to itself, the one verification of a
// manifest's fields that merge, check, smoke and the artifact cache share
// (after its files were held to it): every slice's Configure record must be
// what osslbuild runs for the slice it records (record.Check); a
// universal artifact records no Configure run of its own, and exactly one
// slice for each architecture its target names ("x86_64+arm64"), none of
// them universal. It returns every problem.
func VerifyManifest(m *Manifest) []string {
	var out []string
	slice := func(where string, s *Manifest) {
		for _, p := range record.Check(s.Target, s.Configure.Argv, s.Configure.Env, s.Configure.CFLAGS, s.Variant == "pyca-way") {
			out = append(out, where+p)
		}
	}
	if len(m.Slices) == 0 {
		slice("", m)
		return out
	}
	if len(m.Configure.Argv)+len(m.Configure.Env) > 0 || m.Configure.CFLAGS != "" {
		out = append(out, "a universal artifact records a Configure run of its own")
	}
	var archs []string
	for _, s := range m.Slices {
		if s == nil {
			out = append(out, "an empty slice entry")
			continue
		}
		slice(s.Target.Arch+" slice: ", s)
		if len(s.Slices) > 0 {
			out = append(out, s.Target.Arch+" slice: is itself universal")
		}
		archs = append(archs, s.Target.Arch)
	}
	want := strings.Split(m.Target.Arch, "+")
	if a, b := slices.Sorted(slices.Values(archs)), slices.Sorted(slices.Values(want)); !slices.Equal(a, b) {
		out = append(out, fmt.Sprintf("its target names the architectures %s, its slices are %s", m.Target.Arch, strings.Join(archs, ", ")))
	}
	return out
}

// Distribute gives each slice of a universal manifest its architecture's
// share of the manifest's compiler lines, code evidence and link records:
// what the merged libraries hold, and were linked as, for that slice.
func Distribute(m *Manifest) {
	for _, s := range m.Slices {
		if s == nil {
			continue
		}
		arch := s.Target.Arch
		s.CompilerLines = ofArch(m.CompilerLines, arch, func(l CompilerLine) string { return l.Arch })
		s.CodeEvidence = ofArch(m.CodeEvidence, arch, func(c CodeEvidence) string { return c.Arch })
		s.LinkChecks = ofArch(m.LinkChecks, arch, func(c LinkCheck) string { return c.Arch })
	}
}

// ofArch is the records of all for architecture arch (nil for none).
func ofArch[T any](all []T, arch string, archOf func(T) string) []T {
	var out []T
	for _, x := range all {
		if validate.SameArch(archOf(x), arch) {
			out = append(out, x)
		}
	}
	return out
}
