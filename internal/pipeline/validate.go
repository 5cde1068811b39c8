package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/recipe"
)

// Expect is what the Plan promises for one of a slice's libraries.
func Expect(p *recipe.Plan, lib string) validate.Expect {
	return validate.ForLibrary(lib, p.Target.OS, p.Target.Arch, p.Target.MinOS, p.Target.Configure, p.Target.Flags)
}

// validateSlice holds every library of the tree against the Plan: the
// architecture and deployment target of every object, the compiler line
// (-O3, the recipe's flags) and the platform.
func validateSlice(ctx context.Context, j *job) error {
	return j.validate(ctx, func(e validate.Expect) validate.Expect { return e }, nil)
}

// validateFlagless stands in for validateSlice in the PycaWay variant: the
// same rules, except that the compiler line must carry no -O flag at all,
// as pyca's did (a pyca-way build that came out optimised reproduces
// nothing), and identical copies of it are one line (identicalCopies).
func validateFlagless(ctx context.Context, j *job) error {
	return j.validate(ctx, func(e validate.Expect) validate.Expect {
		e.NoOptFlag = true
		return e
	}, identicalCopies)
}

// identicalCopies forgives "more than one compiler line" when every copy
// in the slice is the same string: at -O0, crypto/info.o keeps its unused
// copy of buildinf.h's line beside cversion.o's (at -O3 the compiler drops
// it), so the pyca-way libcrypto.a holds two.
func identicalCopies(rep validate.Report, v validate.Violation) bool {
	if v.Rule != validate.RuleCompilerLine || v.Member != "" || rep.File == nil {
		return false
	}
	var lines []string
	for _, s := range rep.File.Slices {
		if s.Arch != v.Arch {
			continue
		}
		for _, bi := range s.BuildInfo {
			if bi.Kind == inspect.InfoCompiler {
				lines = append(lines, bi.Text)
			}
		}
	}
	if len(lines) < 2 {
		return false
	}
	for _, l := range lines[1:] {
		if l != lines[0] {
			return false
		}
	}
	return true
}

func (j *job) validate(ctx context.Context, adjust func(validate.Expect) validate.Expect, forgive func(validate.Report, validate.Violation) bool) error {
	lines, code, err := validateTree(ctx, j.dir, j.plan, adjust, forgive)
	if err != nil {
		return fmt.Errorf("refusing to publish: %w", err)
	}
	j.lines, j.code = lines, code
	for _, l := range lines {
		j.run.logf("%s: validated %s %s: %s", j.name, l.Library, l.Arch, l.Line)
	}
	for _, c := range code {
		j.run.logf("%s: machine code of %s %s: %s (score %.3f over %d functions)", j.name, c.Library, c.Arch, c.Class, c.Score, c.Functions)
	}
	return nil
}

// validateTree validates every library under dir/lib, its machine code
// included, and returns the compiler lines found and the code verdicts;
// forgive (nil: none) drops violations the variant expects.
func validateTree(ctx context.Context, dir string, p *recipe.Plan, adjust func(validate.Expect) validate.Expect, forgive func(validate.Report, validate.Violation) bool) ([]artifact.CompilerLine, []artifact.CodeEvidence, error) {
	var errs []error
	var lines []artifact.CompilerLine
	var code []artifact.CodeEvidence
	for _, lib := range artifact.Libraries {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		rep, err := validate.StaticLibraryContext(ctx, filepath.Join(dir, "lib", lib), adjust(Expect(p, lib)))
		if forgive != nil && len(rep.Violations) > 0 && errors.Is(err, validate.ErrInvalid) {
			rep.Violations = slices.DeleteFunc(rep.Violations, func(v validate.Violation) bool { return forgive(rep, v) })
			err = rep.Err()
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		lines = append(lines, artifact.CompilerLinesOf(rep.File, lib)...)
		code = append(code, artifact.CodeEvidenceOf(rep.File, lib)...)
	}
	return lines, code, errors.Join(errs...)
}
