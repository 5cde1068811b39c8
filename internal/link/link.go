// Package link proves that an artifact's static libraries are usable as a
// consumer uses them. Check links the smoke program (smoke/smoke.c: TLS
// client and server, digests, ciphers, key generation) with every member of
// libssl.a and libcrypto.a (-all_load, so nothing escapes by not being
// referenced) and the system library of each slice's exact deployment
// target into an executable, with undefined symbols as errors; the
// toolchain says how (ld64.lld-14 and Zig's libSystem stubs in cross mode,
// Xcode's linker and SDK on a Mac, cc on Linux). A failure names the first
// undefined symbol and the object that needs it, and, when the system
// library has the symbol only on a newer macOS (its $ld$hide$os markers),
// says which. Smoke builds the same program and runs it where the slice can
// run.
package link

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/toolchain"
	"github.com/osslbuild/osslbuild/smoke"
)

// Libraries are linked in this order: the user of libcrypto first.
var Libraries = []string{"libssl.a", "libcrypto.a"}

// Program is a C consumer program to link.
type Program struct {
	Name   string // as records name it, e.g. smoke/smoke.c
	Source []byte
}

// SmokeProgram is the program Check links by default.
var SmokeProgram = Program{Name: smoke.Name, Source: smoke.Source}

// Options are what Check links.
type Options struct {
	Dir     string           // artifact directory: include/ and lib/
	Slices  []platform.Slice // every architecture the libraries hold, as its manifest or plan says
	Work    string           // parent of the scratch directory ("" = the system's)
	Program Program          // zero = SmokeProgram
}

// ErrMissingLibrary marks an artifact without one of Libraries.
var ErrMissingLibrary = errors.New("library missing")

// Check links o.Program for every slice and returns the records the
// manifest keeps; the first slice that fails stops it with an *Error (or a
// setup error wrapping toolchain.ErrSetup).
func Check(ctx context.Context, tc toolchain.Toolchain, o Options) ([]artifact.LinkCheck, error) {
	if o.Program.Source == nil {
		o.Program = SmokeProgram
	}
	work, err := os.MkdirTemp(o.Work, "link-")
	if err != nil {
		return nil, fmt.Errorf("link check: scratch directory: %w", err)
	}
	defer os.RemoveAll(work)
	var out []artifact.LinkCheck
	for _, s := range o.Slices {
		inputs, err := inputsOf(o.Dir, s)
		if err != nil {
			return nil, err
		}
		libs, result := Libraries, "linked: every member, no undefined symbol"
		members := 0
		if s.Shared != nil {
			// A slice of shared libraries: the program links against
			// them, as a consumer's does.
			libs = dylibs(s)
			result = "linked against the shared libraries: no undefined symbol"
		} else if members, err = countMembers(inputs, s.Arch); err != nil {
			return nil, err
		}
		l, err := build(ctx, tc, o.Dir, inputs, s, o.Program, work, filepath.Join(work, "program-"+s.Arch))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(o.Program.Source)
		out = append(out, artifact.LinkCheck{
			Arch: s.Arch, Platform: l.Platform,
			Program: o.Program.Name, ProgramSHA256: hex.EncodeToString(sum[:]),
			Libraries: libs, Members: members,
			Linker: l.Linker, System: l.System, SystemSHA256: l.SystemSHA256, Note: l.Note,
			Result: result,
		})
	}
	return out, nil
}

// Build links p for slice s of the artifact in dir into the executable
// out, as Check does, and says what it used.
func Build(ctx context.Context, tc toolchain.Toolchain, dir string, s platform.Slice, p Program, out string) (toolchain.Linked, error) {
	archives, err := inputsOf(dir, s)
	if err != nil {
		return toolchain.Linked{}, err
	}
	work, err := os.MkdirTemp(filepath.Dir(out), ".link-")
	if err != nil {
		return toolchain.Linked{}, fmt.Errorf("link: scratch directory: %w", err)
	}
	defer os.RemoveAll(work)
	return build(ctx, tc, dir, archives, s, p, work, out)
}

func build(ctx context.Context, tc toolchain.Toolchain, dir string, archives []string, s platform.Slice, p Program, work, out string) (toolchain.Linked, error) {
	src := filepath.Join(work, filepath.Base(p.Name))
	if err := os.WriteFile(src, p.Source, 0o644); err != nil {
		return toolchain.Linked{}, fmt.Errorf("link: %w", err)
	}
	spec := toolchain.LinkSpec{
		Slice: s, Source: src, Include: filepath.Join(dir, "include"),
		Archives: archives, Dir: work, Out: out,
	}
	if s.Shared != nil && (s.Shared.InstallName == "@rpath" || s.Format() == platform.ELF) {
		// The program finds @rpath/libcrypto.3.dylib (an ELF program
		// libcrypto.so.3, its SONAME) in the artifact's lib/ when smoke
		// runs it.
		lib, err := filepath.Abs(filepath.Join(dir, "lib"))
		if err != nil {
			return toolchain.Linked{}, err
		}
		spec.Rpaths = []string{lib}
	}
	l, err := tc.Link(ctx, spec)
	var le *toolchain.LinkError
	if errors.As(err, &le) {
		return l, explain(s, p, le)
	}
	if err != nil {
		return l, fmt.Errorf("link check %s: %w", s, err)
	}
	return l, nil
}

// dylibs are a shared slice's libraries the program links, libssl first.
func dylibs(s platform.Slice) []string {
	l := s.SharedLibraries()
	return []string{l[1], l[0]}
}

// inputsOf is what a program for slice s links from the artifact in dir,
// in link order: its static archives (Libraries), or a shared slice's
// dylibs; a missing one is named.
func inputsOf(dir string, s platform.Slice) ([]string, error) {
	libs := Libraries
	if s.Shared != nil {
		libs = dylibs(s)
	}
	var out []string
	for _, l := range libs {
		p := filepath.Join(dir, "lib", l)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("link check: artifact %s has no lib/%s: %w", dir, l, ErrMissingLibrary)
		}
		out = append(out, p)
	}
	if _, err := os.Stat(filepath.Join(dir, "include", "openssl", "ssl.h")); s.Shared == nil && err != nil {
		return nil, fmt.Errorf("link check: artifact %s has no include/openssl/ssl.h: %w", dir, err)
	}
	return out, nil
}

// countMembers is how many objects of arch the archives hold: what
// -all_load loads.
func countMembers(archives []string, arch string) (int, error) {
	n := 0
	for _, a := range archives {
		f, err := inspect.Inspect(a)
		if err != nil {
			return 0, fmt.Errorf("link check: %w", err)
		}
		found := false
		for _, s := range f.Slices {
			if s.Arch == arch {
				n += len(s.Objects)
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("link check: %s has no %s slice", filepath.Base(a), arch)
		}
	}
	return n, nil
}
