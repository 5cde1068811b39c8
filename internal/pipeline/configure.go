package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/configure"
	"github.com/osslbuild/osslbuild/internal/recipe"
)

// runConfigure runs OpenSSL's Configure with the plan's argv: every flag an
// argument, none in the environment.
func runConfigure(ctx context.Context, j *job) error {
	j.argv = configure.Args(j.plan)
	j.run.logf("%s: %s", j.name, strings.Join(j.argv, " "))
	return j.configure(ctx)
}

func (j *job) configure(ctx context.Context) error {
	lf, err := os.OpenFile(j.logPath, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close()
	var out bytes.Buffer
	err = configure.RunArgs(ctx, j.tree.Dir, j.argv, j.env, io.MultiWriter(lf, &out))
	if err != nil {
		if opts, line := unsupportedOptions(out.String()); opts != nil {
			return fmt.Errorf("OpenSSL %s does not know the option(s) %s (its Configure: %q): %w", j.plan.Release.Version, strings.Join(opts, " "), line, recipe.ErrOption)
		}
	}
	return err
}

// unsupportedRe is Configure's refusal of options the release does not
// know: "***** Unsupported options: a b" (3.0: "a, b").
var unsupportedRe = regexp.MustCompile(`(?m)^\*+ Unsupported options: (.+)$`)

// unsupportedOptions lists the options Configure refused in its output
// (nil if none) and its line saying so. The release's own Configure is the
// authority on which no-/enable- features it knows; its message names
// them, the error names the release.
func unsupportedOptions(out string) ([]string, string) {
	m := unsupportedRe.FindStringSubmatch(out)
	if m == nil {
		return nil, ""
	}
	opts := strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' })
	slices.Sort(opts)
	return opts, strings.TrimSpace(strings.TrimLeft(m[0], "* "))
}

// gateO3 reads the generated Makefile and refuses to spend minutes in make
// unless the effective optimisation is -O3, every recipe flag is there and
// the platform is the recipe's.
func gateO3(ctx context.Context, j *job) (err error) {
	j.makefile, j.gate, err = configure.Gate(j.tree.Dir, j.plan)
	if err != nil {
		return err
	}
	j.run.logf("%s: gate passed: CFLAGS=%s (effective %s); compile flags: %s", j.name, j.gate.CFLAGS, j.gate.EffectiveOpt, j.gate.CompileFlags)
	return nil
}

// PycaStandInCFLAGS stands in for the target's flags in the pyca-way build
// of a target that has none (linux-x86_64): an environment CFLAGS must be
// set to trigger Configure's replacement. -Wa,--noexecstack is already in
// linux-x86_64's CNF_CFLAGS, so repeating it changes no object: the only
// difference from osslbuild's build is that "-Wall -O3" is gone.
const PycaStandInCFLAGS = "-Wa,--noexecstack"

// configurePycaWay stands in for runConfigure in the PycaWay variant:
// Configure runs once, as pyca's step ran it, the target's flags moved from
// the command line into CFLAGS in its environment. Configure takes that
// CFLAGS as a replacement for the target's "-O3 -Wall", so the libraries
// come out at -O0. make then runs in that environment too, as it did there.
func configurePycaWay(ctx context.Context, j *job) error {
	flags := j.plan.Slice.Flags
	cflags := strings.Join(flags, " ")
	if cflags == "" {
		cflags = PycaStandInCFLAGS
	}
	j.argv = slices.DeleteFunc(configure.Args(j.plan), func(a string) bool { return slices.Contains(flags, a) })
	j.env = append(slices.DeleteFunc(slices.Clone(j.env), func(kv string) bool { return strings.HasPrefix(kv, "CFLAGS=") }), "CFLAGS="+cflags)
	j.run.logf("%s: CFLAGS=%s %s (the pyca way: CFLAGS in Configure's environment)", j.name, cflags, strings.Join(j.argv, " "))
	return j.configure(ctx)
}

// readPycaMakefile stands in for the gate in the PycaWay variant: no gate,
// the Makefile's flags read as they are, to be validated as flag-less.
func readPycaMakefile(ctx context.Context, j *job) (err error) {
	j.makefile, err = configure.ReadMakefile(j.tree.Dir)
	if err != nil {
		return err
	}
	j.gate = configure.GateResult{CFLAGS: j.makefile.Vars["CFLAGS"], CompileFlags: j.makefile.CompileFlags()}
	j.run.logf("%s: Makefile CFLAGS=%s (OpenSSL's -O3 -Wall replaced)", j.name, j.gate.CFLAGS)
	return nil
}
