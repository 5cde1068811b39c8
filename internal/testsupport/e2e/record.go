package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/repro"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// The reproducibility proof without a second build in the same run: each
// plan is built once per run (a fixture), and its artifacts are held to a
// record of the same plans built elsewhere, past every cache, in a deeper
// directory and under repro.HostileEnv (the twins below, built by
// go test ./internal/repro -run TestReproducibleAgainstRecord -record).
// A cold run on any machine therefore compares two independent builds,
// made on different machines, days, directories and environments; a
// second build of the same plan in every run proved less (one machine,
// minutes apart) at a quarter of a cold run's time.

// A Twin is one build the record holds: a recipe target (or universal2)
// whose fixture's artifacts are compared with the record.
type Twin struct {
	Name      string   // its name in the record and in a test's output
	Recipe    string   // a recipe under the repository ("" for the embedded one)
	Target    string   // a recipe target, or "universal2"
	Artifacts []string // the artifacts of the fixture compared (names under dist/)
	// Fixture returns the dist directory of the fixture of the same plans.
	Fixture func(t testing.TB) string
}

// Twins are the recorded builds: osslbuild's own universal2 (both slices
// and their merge: what pyca ships), and the shared-library recipe's arm64
// dylibs (LC_UUID and the ad-hoc signature derive from the contents) and
// linux-x86_64 ELF libraries (the GNU build ID, natively with gcc).
var Twins = []Twin{
	{"universal2", "", "universal2",
		[]string{"openssl-macos-arm64", "openssl-macos-x86-64", "openssl-macos-universal2"},
		func(t testing.TB) string { return filepath.Join(Universal2(t), "dist") }},
	{"shared-arm64", SharedRecipe, "arm64",
		[]string{"shared-openssl-aarch64-apple-darwin"},
		func(t testing.TB) string { return filepath.Join(SharedArm64(t), "dist") }},
	{"shared-linux-x86_64", SharedRecipe, "linux-x86_64",
		[]string{"shared-openssl-x86_64-unknown-linux-gnu"},
		func(t testing.TB) string { return filepath.Join(SharedLinux(t), "dist") }},
}

// Require is the twin's platform requirement (Require, or RequireLinux for
// a native Linux build).
func (tw Twin) Require(t testing.TB) {
	t.Helper()
	if tw.Target == "linux-x86_64" {
		RequireLinux(t)
		return
	}
	Require(t)
}

// BuildTwin builds tw in dir as the record's builds are made: in a deeper
// directory, under repro.HostileEnv, with an artifact cache of its own and
// the make cache of second builds (make-hostile, never the fixtures'), and
// returns its dist directory. Remove make-hostile from the fixture store
// to record from fresh makes.
func BuildTwin(t testing.TB, tw Twin, dir string) string {
	t.Helper()
	tw.Require(t)
	o := hostileSettings(t, dir)
	o.Out = filepath.Join(dir, "dist")
	if tw.Recipe != "" {
		o.Recipe, o.Version = filepath.Join(testfixture.RepoRoot(), tw.Recipe), ""
	}
	release := BuildSlot(t)
	defer release()
	restore := repro.HostileEnv()
	defer restore()
	var err error
	if tw.Target == "universal2" {
		_, err = pipeline.Universal2(context.Background(), o, Runtime(t))
	} else {
		_, err = pipeline.Slice(context.Background(), o, Runtime(t), tw.Target, nil)
	}
	if err != nil {
		t.Fatalf("twin %s: %v", tw.Name, err)
	}
	return o.Out
}

// Record is what the record holds of one artifact.
type Record struct {
	// Plan digests the manifest's account of what decided the bytes (the
	// artifact's name, the source's sha256, the patches, the target with
	// its options and flags, the toolchain, Configure's argv and
	// environment, SOURCE_DATE_EPOCH): a record of another plan is stale,
	// not a difference.
	Plan string `json:"plan"`
	// Files are the artifact tree's files and their sha256, as its
	// manifest lists them, but sbom.json (it names osslbuild's revision,
	// as the manifest does).
	Files map[string]string `json:"files"`
	// Tar lists the tarball's entries: type, mode, owner, time, and size
	// but for manifest.json and sbom.json.
	Tar []string `json:"tar"`
}

// RecordFile is the record, under the repository.
const RecordFile = "internal/repro/testdata/record.json"

// RecordOf reads the record of artifact name under dist.
func RecordOf(dist, name string) (Record, error) {
	var r Record
	path := filepath.Join(dist, name, "manifest.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	var src struct {
		SHA256 string `json:"sha256"`
	}
	if err := json.Unmarshal(m["openssl"], &src); err != nil || src.SHA256 == "" {
		return r, fmt.Errorf("%s: openssl.sha256: want the source's digest (%v)", path, err)
	}
	plan := map[string]json.RawMessage{"openssl.sha256": json.RawMessage(`"` + src.SHA256 + `"`)}
	for _, k := range []string{"name", "patches", "target", "toolchain", "configure", "source_date_epoch"} {
		v, ok := m[k]
		if !ok {
			return r, fmt.Errorf("%s: no %q: want a manifest of an artifact", path, k)
		}
		plan[k] = v
	}
	pb, err := json.Marshal(plan) // sorted keys, compact values
	if err != nil {
		return r, err
	}
	sum := sha256.Sum256(pb)
	r.Plan = hex.EncodeToString(sum[:])
	if err := json.Unmarshal(m["files"], &r.Files); err != nil || len(r.Files) == 0 {
		return r, fmt.Errorf("%s: files: want the artifact's file digests (%v)", path, err)
	}
	delete(r.Files, "sbom.json") // names osslbuild's revision, as the manifest does
	r.Tar, err = tarListing(filepath.Join(dist, name+".tar.gz"))
	return r, err
}

// tarListing is one line per entry of the tarball at path, read by
// check's hardened walker (inspect.WalkTarGzEntries).
func tarListing(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	err = inspect.WalkTarGzEntries(context.Background(), path, f, inspect.Limits{}, func(m inspect.Member, _ io.Reader) error {
		h := m.Tar
		size := fmt.Sprint(h.Size)
		if b := filepath.Base(h.Name); b == "manifest.json" || b == "sbom.json" {
			size = "-"
		}
		out = append(out, fmt.Sprintf("%c %o %d:%d %s:%s %d %s %s", h.Typeflag, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime.Unix(), size, h.Name))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// CompareRecord says how got (this run's artifact name) differs from want
// (the record's): a changed plan first, as the one problem (the record is
// stale, not the build irreproducible), else every file and tar entry
// that differs.
func CompareRecord(name string, want, got Record) []string {
	if want.Plan != got.Plan {
		return []string{fmt.Sprintf("%s: its plan changed since it was recorded (plan %.12s, recorded %.12s): if the change is meant, record again (%s)", name, got.Plan, want.Plan, RecordCommand)}
	}
	var problems []string
	names := map[string]string{} // every file either side names
	maps.Copy(names, want.Files)
	maps.Copy(names, got.Files)
	for _, f := range slices.Sorted(maps.Keys(names)) {
		w, g := want.Files[f], got.Files[f]
		switch {
		case w == "":
			problems = append(problems, fmt.Sprintf("%s: %s is not in the record", name, f))
		case g == "":
			problems = append(problems, fmt.Sprintf("%s: %s is recorded (sha256 %.16s) but not built", name, f, w))
		case w != g:
			problems = append(problems, fmt.Sprintf("%s: %s has sha256 %.16s, the record's build %.16s", name, f, g, w))
		}
	}
	if !slices.Equal(want.Tar, got.Tar) {
		for _, l := range got.Tar {
			if !slices.Contains(want.Tar, l) {
				problems = append(problems, fmt.Sprintf("%s.tar.gz: entry %q is not the record's", name, l))
			}
		}
		for _, l := range want.Tar {
			if !slices.Contains(got.Tar, l) {
				problems = append(problems, fmt.Sprintf("%s.tar.gz: the record's entry %q is missing", name, l))
			}
		}
		if len(problems) == 0 {
			problems = append(problems, fmt.Sprintf("%s.tar.gz: its entries are the record's in another order", name))
		}
	}
	if len(problems) > 0 {
		problems = append(problems, fmt.Sprintf("%s: the plan is the recorded one, so either the build is not reproducible or code after make changed what it lays out; if that change is meant, record again (%s)", name, RecordCommand))
	}
	return problems
}

// RecordCommand records the twins again.
const RecordCommand = "go test -trimpath -timeout 60m ./internal/repro -run TestReproducibleAgainstRecord -record"

// LoadRecords reads the record file (artifact name -> Record).
func LoadRecords() (map[string]Record, error) {
	path := filepath.Join(testfixture.RepoRoot(), filepath.FromSlash(RecordFile))
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f recordFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Artifacts, nil
}

// WriteRecords writes the record file atomically.
func WriteRecords(records map[string]Record) error {
	path := filepath.Join(testfixture.RepoRoot(), filepath.FromSlash(RecordFile))
	b, err := json.MarshalIndent(recordFile{
		About:     "The artifacts of e2e.Twins, built past every cache in a deeper directory under repro.HostileEnv; this run's fixtures of the same plans must match them. Written by: " + RecordCommand,
		Artifacts: records,
	}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

type recordFile struct {
	About     string            `json:"about"`
	Artifacts map[string]Record `json:"artifacts"`
}

// Leaks are what no fixture output may contain: this checkout and the
// fixture store (build directories live under it).
func Leaks() []string {
	return []string{testfixture.RepoRoot(), Dir()}
}
