//go:build mage

// osslbuild builds OpenSSL for macOS, static libraries or dylibs, correctly
// (-O3, the right architecture and deployment target, proven on every
// output), reproducibly, and with provenance. Every target is a few lines calling
// into internal/; see README.md.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/magefile/mage/mg"

	"github.com/osslbuild/osslbuild/internal/bench"
	"github.com/osslbuild/osslbuild/internal/bump"
	"github.com/osslbuild/osslbuild/internal/check"
	"github.com/osslbuild/osslbuild/internal/diff"
	"github.com/osslbuild/osslbuild/internal/link"
	"github.com/osslbuild/osslbuild/internal/pipeline"
	"github.com/osslbuild/osslbuild/internal/rebuild"
	"github.com/osslbuild/osslbuild/internal/report"
	"github.com/osslbuild/osslbuild/internal/repro"
	"github.com/osslbuild/osslbuild/internal/targets"
)

// Aliases give targets names Go identifiers cannot have.
var Aliases = map[string]any{
	"build:linux-x86_64": Build.LinuxX86_64,
}

// Check audits OpenSSL builds anywhere: Mach-O or ELF files, static libraries, wheels, osslbuild artifacts (verified against their manifests), directories; fails below -minopt (0, 1, 2, 3, s or z; default 2), on a missing -arch=arm64,x86_64, and with -strict where the optimisation is unknown, the OpenSSL series past its end of life or a macOS arm64 slice's compiled code above apple-m1, and with -isa=core2 (x86-64, x86-64-v2, x86-64-v3; arm64's apple-m1, apple-m2) on compiled code above that level outside the release's dispatch list; reports OpenSSL's published advisories for each release and with -failon=high (low, moderate, critical) fails at or above it, -vex=FILE suppressing assessed CVEs, -advisories=FILE a newer table than the built-in one (-advisoriesOlder to take an older) (-json or -format=json for machines, -format=sarif for code scanning, -format=cyclonedx for a CycloneDX 1.5 SBOM of the libraries found).
func Check(ctx context.Context, path string, minopt *string, arch *string, json *bool, strict *bool, isa *string, format *string, failon *string, vex *string, advisories *string, advisoriesOlder *bool) error {
	return targets.Run(ctx, func(ctx context.Context) error {
		return check.Run(ctx, check.FromFlags(path, minopt, arch, json, strict, isa, format, failon, vex, advisories, advisoriesOlder))
	})
}

// Smoke links smoke/smoke.c with every member of an artifact's libraries (a directory or its .tar.gz, verified against its manifest first) and runs it where this machine can (linux-x86_64 artifacts on Linux; on an Apple silicon Mac arm64 natively and x86_64 under arch -x86_64; elsewhere it only links, and says so): known answers, a TLS 1.3 handshake, the build strings.
func Smoke(ctx context.Context, artifact string) error {
	return targets.Flags{}.Run(ctx, func(ctx context.Context, s pipeline.Settings) error {
		return link.RunSmoke(ctx, artifact, s.Toolchain, s.Work, report.Stdout(), os.Getenv)
	})
}

// Diff compares two osslbuild artifacts (directories, their .tar.gz, or a manifest.json alone), each verified against its manifest first: release and options, Configure's argv and environment, compiler lines, each library's size, members and exported symbols, instruction set, code evidence, deployment targets, dylibs' install names and loads, files and digests; an artifact and itself are identical (-format=text, markdown for a pull request's body, json).
func Diff(ctx context.Context, a, b string, format *string) error {
	return targets.Run(ctx, func(ctx context.Context) error {
		return diff.Run(ctx, a, b, targets.Deref(format), report.Stdout())
	})
}

// Actions writes GitHub Actions workflow commands for the composite action's shell steps.
type Actions mg.Namespace

// Error prints a GitHub Actions error annotation titled title with message, escaped so that no name in it can start another command (action.yml's fail), and fails.
func (Actions) Error(title, message string) error {
	return targets.Annotate(title, message)
}

// Source fetches and unpacks verified OpenSSL sources.
type Source mg.Namespace

// Fetch downloads the release (-version=X.Y.Z, default from the recipe; -sha256 for one the recipe does not list; -recipe=FILE for a consumer's recipe) into the cache and verifies its sha256, size and OpenPGP signature.
func (Source) Fetch(ctx context.Context, version *string, sha256 *string, recipe *string) error {
	return targets.Flags{Recipe: recipe, Version: version, SHA256: sha256}.RunBuild(ctx, func(ctx context.Context, s pipeline.Settings) error {
		_, err := pipeline.Fetch(ctx, s, targets.Runtime())
		return err
	})
}

// Unpack gives a verified, patched source tree (-dest=DIR, default build/src/openssl-X.Y.Z; -version, -recipe).
func (Source) Unpack(ctx context.Context, version *string, dest *string, recipe *string) error {
	return targets.Flags{Recipe: recipe, Version: version}.Run(ctx, func(ctx context.Context, s pipeline.Settings) error {
		_, err := pipeline.Unpack(ctx, s, targets.Runtime(), targets.Deref(dest))
		return err
	})
}

// Build builds artifacts into dist/.
type Build mg.Namespace

// Arm64 builds and validates the recipe's arm64 target, dist/openssl-macos-arm64 by default (-recipe=FILE for a consumer's recipe, -version, -sha256, -options, -jobs, -out, -rebuild).
func (Build) Arm64(ctx context.Context, version, sha256, options *string, jobs *int, out *string, rebuild *bool, recipe *string) error {
	return slice(ctx, "arm64", targets.Flags{Recipe: recipe, Version: version, SHA256: sha256, Options: options, Jobs: jobs, Out: out, Rebuild: rebuild})
}

// X86_64 builds and validates the recipe's x86_64 target, dist/openssl-macos-x86-64 by default (flags as build:arm64).
func (Build) X86_64(ctx context.Context, version, sha256, options *string, jobs *int, out *string, rebuild *bool, recipe *string) error {
	return slice(ctx, "x86_64", targets.Flags{Recipe: recipe, Version: version, SHA256: sha256, Options: options, Jobs: jobs, Out: out, Rebuild: rebuild})
}

// LinuxX86_64 builds and validates the recipe's linux-x86_64 target natively, dist/openssl-linux-x86_64 by default (ELF objects; also build:linux-x86_64; flags as build:arm64).
func (Build) LinuxX86_64(ctx context.Context, version, sha256, options *string, jobs *int, out *string, rebuild *bool, recipe *string) error {
	return slice(ctx, "linux-x86_64", targets.Flags{Recipe: recipe, Version: version, SHA256: sha256, Options: options, Jobs: jobs, Out: out, Rebuild: rebuild})
}

// Universal2 builds both slices side by side (one -jobs budget) and merges them into dist/openssl-macos-universal2 (flags as build:arm64).
func (Build) Universal2(ctx context.Context, version, sha256, options *string, jobs *int, out *string, rebuild *bool, recipe *string) error {
	return targets.Flags{Recipe: recipe, Version: version, SHA256: sha256, Options: options, Jobs: jobs, Out: out, Rebuild: rebuild}.RunBuild(ctx, func(ctx context.Context, s pipeline.Settings) error {
		return targets.Done(pipeline.Universal2(ctx, s, targets.Runtime()))
	})
}

// Merge merges two slice artifacts built elsewhere (directories or .tar.gz) into dist/openssl-macos-universal2, holding them to the recipe that built them (-recipe=FILE, -out).
func (Build) Merge(ctx context.Context, arm64, x86_64 string, out *string, recipe *string) error {
	return targets.Flags{Recipe: recipe, Out: out}.Run(ctx, func(ctx context.Context, s pipeline.Settings) error {
		return targets.Done(pipeline.Merge(ctx, s, targets.Runtime(), arm64, x86_64))
	})
}

// slice builds one recipe target and publishes it.
func slice(ctx context.Context, target string, f targets.Flags) error {
	return f.RunBuild(ctx, func(ctx context.Context, s pipeline.Settings) error {
		return targets.Done(pipeline.Slice(ctx, s, targets.Runtime(), target, nil))
	})
}

// Verify checks properties of builds.
type Verify mg.Namespace

// Reproducible builds twice in different directories, the second with a hostile environment, TZ and umask, and requires identical tarballs (-arch=arm64|x86_64|universal2, default arm64; -version, -recipe).
func (Verify) Reproducible(ctx context.Context, arch *string, version *string, recipe *string) error {
	return targets.Flags{Recipe: recipe, Version: version}.Run(ctx, func(ctx context.Context, s pipeline.Settings) error {
		a := "arm64"
		if arch != nil {
			a = *arch
		}
		return repro.Verify(ctx, s, targets.Runtime(), a)
	})
}

// Rebuild verifies an artifact (a directory or its .tar.gz) against its manifest, refuses what this checkout and machine cannot rebuild (another revision, toolchain or headers; the release not fetchable and verifiable), rebuilds it in a fresh directory past the artifact cache and compares every file: one line per file PASS or FAIL (the first differing member and byte offset), then a verdict; a universal2 is rebuilt slice by slice where only some slices' toolchains are here.
func (Verify) Rebuild(ctx context.Context, artifact string) error {
	return targets.Flags{}.Run(ctx, func(ctx context.Context, s pipeline.Settings) error {
		_, err := rebuild.Run(ctx, rebuild.Options{Artifact: artifact, Settings: s, Runtime: targets.Runtime(), Report: report.Stdout()})
		return err
	})
}

// Recipe edits a recipe file, recipes/openssl.toml by default.
type Recipe mg.Namespace

// Bump adds a verified release to the recipe: an X.Y.Z version, or X.Y for the newest of that series (-dryrun to only print the diff; -recipe=FILE edits a consumer's recipe, keeping its comments).
func (Recipe) Bump(ctx context.Context, version string, dryrun *bool, recipe *string) error {
	return targets.Flags{}.Run(ctx, func(ctx context.Context, s pipeline.Settings) error {
		return bump.Target(ctx, targets.Deref(recipe), s.Fetch, version, dryrun != nil && *dryrun, report.Stdout())
	})
}

// Bench measures osslbuild against what it replaces.
type Bench mg.Namespace

// Build times build:arm64 against pyca's shell sequence, build:universal2 against two sequential builds + lipo, interleaved A/B, and cache hits of build:arm64 and build:universal2 (compiled magefile) against the full builds that filled the cache (-rounds=3, -only=arm64|universal2|cache).
func (Bench) Build(ctx context.Context, rounds *int, only *string, version *string) error {
	return targets.Flags{Version: version}.Run(ctx, func(ctx context.Context, s pipeline.Settings) error {
		return bench.BuildReport(ctx, s, targets.Deref(rounds), targets.Deref(only), report.Stdout())
	})
}

// Library builds 4.0.2 for linux-x86_64 with osslbuild and the way pyca's step did (CFLAGS in Configure's environment: -O0), runs bench/osslbench.c against both in alternating short slices (median pair ratio with its 95% interval, or "too noisy") and writes bench/library-<date>.md.
func (Bench) Library(ctx context.Context) error {
	return targets.Flags{}.Run(ctx, func(ctx context.Context, s pipeline.Settings) error {
		path, err := bench.WriteLibraryReport(ctx, bench.Options{Settings: s, Runtime: targets.Runtime()}, "bench", "go tool mage bench:library")
		if err == nil {
			fmt.Fprintln(report.Stdout(), "bench:library: wrote", path)
		}
		return err
	})
}
