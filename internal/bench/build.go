package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/pipeline"
)

// Target is the recipe target both builds are made for: the native Linux
// one, because the code has to run here to be measured.
const Target = "linux-x86_64"

// Version is the release measured when Options.Settings.Version is empty:
// the one whose C/assembly paths (Paths) were checked against the sources.
const Version = "4.0.2"

// PycaCFLAGS is what the pyca-way build of Target puts in Configure's
// environment (the target has no flags of its own to move there).
const PycaCFLAGS = pipeline.PycaStandInCFLAGS

// Osslbuild builds (or takes from the artifact cache) osslbuild's
// linux-x86_64 artifact and returns the published directory.
func Osslbuild(ctx context.Context, o Options) (string, error) {
	return buildVariant(ctx, o, pipeline.Osslbuild)
}

// PycaWay builds (or takes from the artifact cache) the same sources with
// the same toolchain and Configure options the way pyca's step did
// (pipeline.PycaWay: libcrypto at -O0, checked by its validation stage) and
// returns the published directory.
func PycaWay(ctx context.Context, o Options) (string, error) {
	return buildVariant(ctx, o, pipeline.PycaWay)
}

func buildVariant(ctx context.Context, o Options, v *pipeline.Variant) (string, error) {
	o.defaults()
	res, err := pipeline.Slice(ctx, o.Settings, o.Runtime, Target, v)
	if err != nil {
		return "", fmt.Errorf("bench: build of %s %s: %w", Target, o.Settings.Version, err)
	}
	return res.Published.Dir, nil
}

// LibcryptoCompilerLine returns the parsed "compiler:" line embedded in
// <artifact>/lib/libcrypto.a.
func LibcryptoCompilerLine(artifact string) (inspect.CompilerLine, error) {
	lib := filepath.Join(artifact, "lib", "libcrypto.a")
	f, err := os.Open(lib)
	if err != nil {
		return inspect.CompilerLine{}, fmt.Errorf("bench: compiler line: %w", err)
	}
	defer f.Close()
	infos, err := inspect.ScanBuildInfo(f)
	if err != nil {
		return inspect.CompilerLine{}, fmt.Errorf("bench: compiler line of %s: %w", lib, err)
	}
	for _, bi := range infos {
		if bi.Kind == inspect.InfoCompiler {
			return inspect.ParseCompilerLine(bi.Text), nil
		}
	}
	return inspect.CompilerLine{}, fmt.Errorf("bench: %s has no \"compiler:\" build-info string", lib)
}
