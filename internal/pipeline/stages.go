package pipeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/build"
	"github.com/osslbuild/osslbuild/internal/configure"
	"github.com/osslbuild/osslbuild/internal/dispatch"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// The slice build, in order. A stage reads what the stages above it left in
// the job and adds its own part; the first error stops the build, and
// nothing leaves the job's private directory until the builder's caller
// publishes the validated tree (artifact.PublishAll, after the artifact cache).
// Adding a stage is one line here and one file beside this one.
//
// A stage marked proof or linkProof proves the laid-out artifact tree
// without changing it: the artifact cache runs the proof stages again over
// every tree it serves, from the tree's bytes, and the link too when what
// proved the entry has changed; the tests run both over a tree they give
// (FromTree).
var sliceStages = []stage{
	{"source", fetchSource, makes},         // source.go: sha256, size, OpenPGP against the pinned keys
	{"unpack", unpackSource, makes},        // source.go: safe extraction, patches; no recipe define the sources test
	{"toolchain", prepareToolchain, makes}, // toolchain.go: cc/ar/ranlib wrappers; the build environment, constructed
	{"configure", runConfigure, makes},     // configure.go: argv from the plan, in that environment
	{"gate", gateO3, makes},                // configure.go: the generated Makefile must say -O3 with every recipe flag
	{"make", makeLibraries, makes},         // make.go: make build_libs, install_dev into a staging directory
	{"layout", layOut, makes},              // layout.go: the artifact tree, relocatable .pc files
	{"validate", validateSlice, proof},     // validate.go: every object and build string held against the plan
	{"link", linkCheck, linkProof},         // link.go: every member linked into a program against the target's libSystem
	{"record", record, makes},              // record.go: manifest.json, sbom.json
}

// stageKind says what a stage does to the tree (see sliceStages).
type stageKind int

const (
	makes     stageKind = iota // builds, lays out or records the tree
	proof                      // proves the tree from its bytes: on every cache hit
	linkProof                  // proves the tree by linking it: on a hit whose proof record changed
)

// A Variant is a slice build with some of its stages swapped.
type Variant struct {
	// Name is appended to the artifact's name ("" for osslbuild's own build).
	Name   string
	stages []stage
}

// Osslbuild is the build osslbuild ships.
var Osslbuild = &Variant{stages: sliceStages}

// PycaWay is the build pyca's workflow made, for the library benchmark and
// the tests of check: the same table with the three stages the bug touches
// swapped. Configure runs once with the target's flags in its environment
// as CFLAGS, which replaces OpenSSL's "-O3 -Wall"; no gate stops it; the
// validation then expects that flag-less (-O0) compiler line.
var PycaWay = &Variant{Name: "pyca-way", stages: swap(sliceStages,
	stage{"configure", configurePycaWay, makes},
	stage{"gate", readPycaMakefile, makes},
	stage{"validate", validateFlagless, proof},
)}

// proofs are the variant's proof stages, in order, with the link stages
// when link is set.
func (v *Variant) proofs(link bool) []stage {
	return slices.DeleteFunc(slices.Clone(v.stages), func(s stage) bool {
		return s.kind == makes || s.kind == linkProof && !link
	})
}

// stage is one step of the slice build.
type stage struct {
	name string
	run  func(ctx context.Context, j *job) error
	kind stageKind
}

// swap returns stages with each replacement standing in for the stage of
// its name.
func swap(stages []stage, replacements ...stage) []stage {
	out := slices.Clone(stages)
	for _, r := range replacements {
		i := slices.IndexFunc(out, func(s stage) bool { return s.name == r.name })
		if i < 0 {
			panic("pipeline: no stage " + r.name + " to swap")
		}
		out[i] = r
	}
	return out
}

// job is one slice build in progress.
type job struct {
	// Given.
	run     *run
	plan    *recipe.Plan
	jobs    *build.Jobs // the make job budget shared with other slices, or nil
	variant string      // Variant.Name: "" for osslbuild's own build
	name    string      // the artifact's name
	work    string      // private build directory (absolute)
	logPath string      // full build log, kept beside work

	// Added by the stages, in table order.
	source   *source.Verified        // source
	tree     *source.Tree            // unpack
	tools    toolchain.Toolchain     // toolchain
	env      []string                // toolchain: the complete environment of Configure and make
	argv     []string                // configure (and its pyca-way stand-in)
	makefile *configure.Makefile     // gate (or its stand-in)
	gate     configure.GateResult    // gate
	staging  string                  // make: DESTDIR of make install_dev
	dir      string                  // layout: the artifact tree
	lines    []artifact.CompilerLine // validate
	code     []artifact.CodeEvidence // validate: the machine code's verdicts
	dispatch *dispatch.List          // validate: functions compiled for a higher target on purpose
	links    []artifact.LinkCheck    // link
	manifest *artifact.Manifest      // record
}

// runStages runs stages over j in order.
func runStages(ctx context.Context, stages []stage, j *job) error {
	for _, s := range stages {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.run(ctx, j); err != nil {
			return fmt.Errorf("%s: %s: %w", j.name, s.name, err)
		}
	}
	return nil
}
