package pipeline

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/link"
	"github.com/osslbuild/osslbuild/internal/platform"
)

// linkCheck links the smoke program with every member of the tree's
// libssl.a and libcrypto.a and the target's system library, for the exact
// deployment target, into an executable (package link): a slice with an
// undefined symbol, or one that needs a newer macOS than it claims, is not
// published. The manifest records what it linked against.
func linkCheck(ctx context.Context, j *job) error {
	checks, err := j.run.linkTree(ctx, j.dir, []platform.Slice{j.plan.Slice})
	if err != nil {
		return fmt.Errorf("refusing to publish: %w", err)
	}
	j.links = checks
	for _, c := range checks {
		note := ""
		if c.Note != "" {
			note = " (" + c.Note + ")"
		}
		j.run.logf("%s: linked %s with %s of %s for %s against %s%s", j.name, c.Program, linkedWhat(c), c.Arch, c.Platform, c.System, note)
	}
	return nil
}

// linkTree runs the link check over the artifact tree dir for each slice
// (one per architecture the libraries hold).
func (r *run) linkTree(ctx context.Context, dir string, slices []platform.Slice) ([]artifact.LinkCheck, error) {
	tc, _, err := r.toolchain(ctx, slices[0])
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(r.Work, 0o755); err != nil {
		return nil, err
	}
	return link.Check(ctx, tc, link.Options{Dir: dir, Slices: slices, Work: r.Work, Program: r.linkProgram})
}

// linkedWhat says what a link check linked: "1114 members" of the
// archives, or the shared libraries.
func linkedWhat(c artifact.LinkCheck) string {
	for _, l := range c.Libraries {
		if !strings.HasSuffix(l, ".a") {
			return strings.Join(c.Libraries, " and ")
		}
	}
	return fmt.Sprintf("%d members", c.Members)
}
