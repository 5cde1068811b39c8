package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/recipe"
)

// Expect is what the Plan promises for one of a slice's libraries.
func Expect(p *recipe.Plan, lib string) validate.Expect {
	return validate.Built(p.Slice, lib)
}

// validateSlice holds every library of the tree against the Plan: the
// architecture and deployment target of every object, the compiler line
// (-O3, the recipe's flags) and the platform.
func validateSlice(ctx context.Context, j *job) error {
	return j.validate(ctx, func(e validate.Expect) validate.Expect { return e })
}

// validateFlagless stands in for validateSlice in the PycaWay variant: the
// same rules, except that the compiler line must carry no -O flag at all,
// as pyca's did (a pyca-way build that came out optimised reproduces
// nothing); validate then counts identical copies of that line as one (at
// -O0, crypto/info.o keeps its unused copy of buildinf.h's line beside
// cversion.o's).
func validateFlagless(ctx context.Context, j *job) error {
	return j.validate(ctx, func(e validate.Expect) validate.Expect {
		e.NoOptFlag = true
		return e
	})
}

func (j *job) validate(ctx context.Context, adjust func(validate.Expect) validate.Expect) error {
	lines, code, err := validateTree(ctx, j.dir, j.plan, adjust)
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
// included, and returns the compiler lines found and the code verdicts.
func validateTree(ctx context.Context, dir string, p *recipe.Plan, adjust func(validate.Expect) validate.Expect) ([]artifact.CompilerLine, []artifact.CodeEvidence, error) {
	var errs []error
	var lines []artifact.CompilerLine
	var code []artifact.CodeEvidence
	for _, lib := range artifact.Libraries {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		rep, err := validate.StaticLibraryContext(ctx, filepath.Join(dir, "lib", lib), adjust(Expect(p, lib)))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		lines = append(lines, artifact.CompilerLinesOf(rep.File, lib)...)
		code = append(code, artifact.CodeEvidenceOf(rep.File, lib)...)
	}
	return lines, code, errors.Join(errs...)
}
