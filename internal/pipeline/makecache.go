package pipeline

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/build"
	"github.com/osslbuild/osslbuild/internal/configure"
	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/proc"
)

// The make cache keeps what the expensive stages make (Configure, the
// gate, make build_libs and install_dev: the staging directory), keyed by
// the plan: the Configure argv, the constructed environment, the
// generated toolchain wrappers, the toolchain's identity (with the SDK's
// digest), the versions of make and perl that run, the source's sha256 and
// SOURCE_DATE_EPOCH, the patches applied, the variant and whether make
// leaves the static libraries out. That is what decides the objects. The Go code in the key is the code of the segment
// itself: internal/build/build.go (build.Invocation: how make runs),
// internal/configure/gate.go (configure.GateSource: what make may start
// from) and this package's configure.go (how Configure runs, the pyca
// way's stand-in too); no other file's comment, name or code is.
// Everything after make (layout, validation, link, records, tarball) runs
// with the current code on every use, so a change there is exercised
// without a rebuild. It is off unless Settings.MakeCache names a directory: the
// test fixtures use it, so a comment on the build path costs seconds, not
// a rebuild of every real OpenSSL. -rebuild (and every reproducibility
// build, which must build) bypasses it.
//
// The segment it stands in for, from the first stage to the last.
const makeFirst, makeLast = "configure", "make"

// makeCached returns stages with the segment from configure to make run
// as one stage that restores it from the make cache at dir, or runs it and
// stores what it made.
func makeCached(stages []stage, dir string) []stage {
	i := slices.IndexFunc(stages, func(s stage) bool { return s.name == makeFirst })
	k := slices.IndexFunc(stages, func(s stage) bool { return s.name == makeLast })
	if dir == "" || i < 0 || k < i {
		return stages
	}
	segment := slices.Clone(stages[i : k+1])
	var names []string
	for _, s := range segment {
		names = append(names, s.name)
	}
	cached := stage{name: strings.Join(names, "+"), kind: makes, run: func(ctx context.Context, j *job) error {
		return j.makeFromCache(ctx, dir, segment)
	}}
	return slices.Concat(stages[:i], []stage{cached}, stages[k+1:])
}

// madeRecord is what the segment leaves in the job besides the staging
// directory, with the build directory written as $WORK.
type madeRecord struct {
	Argv []string             `json:"argv"`
	Env  []string             `json:"env"`
	Gate configure.GateResult `json:"gate"`
}

// configureSource is configure.go, the stages from Configure to the gate
// (the PycaWay variant's stand-in among them).
//
//go:embed configure.go
var configureSource []byte

// segmentCode digests the Go code that runs inside the segment.
var segmentCode = func() string {
	h := sha256.New()
	for _, src := range [][]byte{build.Invocation, configure.GateSource, configureSource} {
		sum := sha256.Sum256(src)
		h.Write(sum[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}()

// toolVersions is what make and perl on the build's PATH say they are:
// another make or perl may make other objects (a jobserver, a generated
// assembly file), so they are in the key.
func toolVersions(ctx context.Context, env []string) (string, error) {
	var out []string
	for _, argv := range [][]string{{"make", "--version"}, {"perl", "-e", "print $^V"}} {
		b, err := proc.Output(ctx, proc.Cmd{Args: argv, Env: env})
		if err != nil {
			return "", fmt.Errorf("make cache: %s: %w", strings.Join(argv, " "), err)
		}
		l, _, _ := strings.Cut(string(b), "\n")
		out = append(out, argv[0]+" "+strings.TrimSpace(l))
	}
	return strings.Join(out, "; "), nil
}

// makeKey digests the plan as the job holds it after the toolchain stage.
func (j *job) makeKey(ctx context.Context) (string, error) {
	_, id, err := j.run.toolchain(ctx, j.plan.Slice)
	if err != nil {
		return "", err
	}
	tools, err := toolVersions(ctx, j.env)
	if err != nil {
		return "", err
	}
	wrappers, err := artifact.HashTree(context.Background(), filepath.Join(j.work, "toolchain"))
	if err != nil {
		return "", fmt.Errorf("make cache: toolchain wrappers: %w", err)
	}
	// The wrappers name the build directory; their digests are taken with
	// it written as $WORK.
	for rel := range wrappers {
		b, err := os.ReadFile(filepath.Join(j.work, "toolchain", rel))
		if err != nil {
			return "", err
		}
		wrappers[rel] = artifact.SHA256([]byte(strings.ReplaceAll(string(b), j.work, "$WORK")))
	}
	var patches []string
	for _, p := range j.tree.Patches {
		patches = append(patches, p.Name+"@"+p.SHA256)
	}
	return digestJSON(struct {
		Format    int
		Variant   string
		Argv      []string
		Env       []string
		Wrappers  map[string]string
		Toolchain any
		Source    string
		Patches   []string
		Epoch     int64
		Code      string
		Tools     string
		// SharedOnly: make leaves the static libraries out (makeLibraries).
		SharedOnly bool
	}{2, j.variant, configure.Args(j.plan), scrubWork(j.env, j.work), wrappers, id, j.source.Tarball.SHA256, patches, j.tree.SourceDateEpoch, segmentCode, tools, j.sharedOnly()})
}

// makeFromCache restores the segment's result from the entry of the job's
// key, or runs segment and stores its result there.
func (j *job) makeFromCache(ctx context.Context, dir string, segment []stage) error {
	key, err := j.makeKey(ctx)
	if err != nil {
		return err
	}
	entry := filepath.Join(dir, key)
	stage := filepath.Join(j.work, "stage")
	if b, err := ctxio.ReadFile(ctx, filepath.Join(entry, "made.json"), false, 1<<20); err == nil {
		var rec madeRecord
		if err := json.Unmarshal(b, &rec); err == nil {
			if err := os.CopyFS(stage, os.DirFS(filepath.Join(entry, "stage"))); err == nil {
				j.argv, j.env, j.gate, j.staging = rec.Argv, replaceIn(rec.Env, "$WORK", j.work), rec.Gate, stage
				j.run.logf("%s: configure, gate and make: this plan's staging directory restored from the make cache (%s)", j.name, key[:12])
				return nil
			}
			os.RemoveAll(stage)
		}
		j.run.logf("%s: make cache entry %s is unreadable; building", j.name, key[:12])
		os.RemoveAll(entry)
	}
	for _, s := range segment {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.run(ctx, j); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	j.storeMade(entry)
	return nil
}

// storeMade copies the staging directory and the record into entry,
// atomically; a failure costs only the next build its hit.
func (j *job) storeMade(entry string) {
	if _, err := os.Stat(entry); err == nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(entry), 0o755); err != nil {
		return
	}
	tmp, err := os.MkdirTemp(filepath.Dir(entry), ".tmp-")
	if err != nil {
		return
	}
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(filepath.Join(tmp, "stage"), os.DirFS(j.staging)); err != nil {
		j.run.logf("%s: warning: not in the make cache: %v", j.name, err)
		return
	}
	rec := madeRecord{Argv: j.argv, Env: scrubWork(j.env, j.work), Gate: j.gate}
	if err := writeJSON(filepath.Join(tmp, "made.json"), rec); err != nil {
		return
	}
	os.Rename(tmp, entry)
}
