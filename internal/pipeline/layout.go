package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/platform"
)

// layOut copies the staged install into the artifact tree, with .pc files
// relocated away from the fixed build prefix.
func layOut(ctx context.Context, j *job) error {
	j.dir = filepath.Join(j.work, "artifact", j.name)
	if err := os.MkdirAll(filepath.Dir(j.dir), 0o755); err != nil {
		return err
	}
	if _, err := artifact.Layout(j.staging, j.plan.Recipe.Prefix, j.dir, j.plan.Slice); err != nil {
		return err
	}
	return installNames(ctx, j)
}

// installNames gives the slice's dylibs the install names the recipe asks
// for (OpenSSL links them with its prefix's lib/) and names libcrypto by it
// in libssl, then signs them again: an arm64 dylib whose pages no longer
// match its signature does not load. An ELF library keeps the SONAME
// OpenSSL links it with (libcrypto.so.3), which is all a program records;
// validation holds it to that.
func installNames(ctx context.Context, j *job) error {
	s := j.plan.Slice
	if s.Shared == nil || s.Format() != platform.MachO {
		return nil
	}
	prefix := j.plan.Recipe.Prefix
	libs := s.SharedLibraries()
	crypto := libs[0]
	for _, lib := range libs {
		p := filepath.Join(j.dir, "lib", lib)
		change := map[string]string{}
		if lib != crypto {
			change[prefix+"/lib/"+crypto] = s.InstallNameOf(crypto, prefix)
		}
		if err := j.tools.InstallNames(ctx, p, s.InstallNameOf(lib, prefix), change); err != nil {
			return err
		}
		if err := resign(p); err != nil {
			return fmt.Errorf("%s: %w", lib, err)
		}
	}
	return nil
}

// resign re-hashes the ad-hoc signature of a thin dylib, where it has one
// (ld64 and ld64.lld sign arm64 output; x86_64 needs none).
func resign(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	m, err := inspect.ParseMachOBytes(b)
	if err != nil {
		return err
	}
	if !m.CodeSignature.Present {
		return nil
	}
	if err := inspect.Resign(b, 0, m); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o755)
}
