package validate

import (
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/platform"
)

// How the compiler line and the machine code combine, for every pairing
// that matters: the line shows a level, the code only -O0-like or
// optimised, and code with too little evidence says nothing.
func TestJudgeLineAndCode(t *testing.T) {
	line := func(l inspect.OptLevel, flag string) Evidence {
		return Evidence{Source: SourceCompilerLine, Known: true, Level: l, Flag: flag}
	}
	placeholder := Evidence{Source: SourceCompilerLine}
	code := func(c inspect.CodeClass) Evidence {
		return machineCodeEvidence(inspect.Slice{Code: &inspect.CodeVerdict{Class: c, Functions: 100}})[0]
	}
	o0, opt, little := code(inspect.CodeO0), code(inspect.CodeOptimised), code(inspect.CodeTooLittle)
	for _, tc := range []struct {
		name       string
		ev         []Evidence
		min        inspect.OptLevel
		status     OptStatus
		source     Source
		contradict bool
	}{
		{"-O3 line, optimised code", []Evidence{line(inspect.O3, "-O3"), opt}, inspect.O3, OptOK, SourceCompilerLine, false},
		{"-O3 line, -O0 code", []Evidence{line(inspect.O3, "-O3"), o0}, inspect.O3, OptBelow, SourceMachineCode, true},
		{"-O3 line, -O0 code, -minopt 0", []Evidence{line(inspect.O3, "-O3"), o0}, inspect.O0, OptOK, SourceMachineCode, true},
		{"-Os line, -O0 code", []Evidence{line(inspect.Os, "-Os"), o0}, inspect.O2, OptBelow, SourceMachineCode, true},
		{"-O1 line, -O0 code", []Evidence{line(inspect.O1, "-O1"), o0}, inspect.O1, OptBelow, SourceMachineCode, true},
		{"-Og line, -O0 code: no contradiction", []Evidence{line(inspect.Og, "-Og"), o0}, inspect.O0, OptOK, SourceMachineCode, false},
		{"no -O, optimised code", []Evidence{line(inspect.O0, ""), opt}, inspect.O3, OptBelow, SourceCompilerLine, true},
		{"explicit -O0, optimised code", []Evidence{line(inspect.O0, "-O0"), opt}, inspect.O0, OptOK, SourceCompilerLine, true},
		{"no -O, -O0 code", []Evidence{line(inspect.O0, ""), o0}, inspect.O3, OptBelow, SourceCompilerLine, false},
		{"-O1 line below -O3, optimised code does not rescue it", []Evidence{line(inspect.O1, "-O1"), opt}, inspect.O3, OptBelow, SourceCompilerLine, false},
		{"-O3 line, too little code", []Evidence{line(inspect.O3, "-O3"), little}, inspect.O3, OptOK, SourceCompilerLine, false},
		{"no -O, too little code", []Evidence{line(inspect.O0, ""), little}, inspect.O3, OptBelow, SourceCompilerLine, false},
		{"placeholder, optimised code", []Evidence{placeholder, opt}, inspect.O3, OptOK, SourceMachineCode, false},
		{"placeholder, -O0 code", []Evidence{placeholder, o0}, inspect.O3, OptBelow, SourceMachineCode, false},
		{"placeholder, too little code", []Evidence{placeholder, little}, inspect.O3, OptUnknown, "", false},
		{"no line, optimised code", []Evidence{opt}, inspect.O3, OptOK, SourceMachineCode, false},
		{"no line, -O0 code", []Evidence{o0}, inspect.O1, OptBelow, SourceMachineCode, false},
		{"no line, -O0 code, -minopt 0", []Evidence{o0}, inspect.O0, OptOK, SourceMachineCode, false},
		{"no line, too little code: not judged", []Evidence{little}, inspect.O3, OptNone, "", false},
		{"nothing", nil, inspect.O3, OptNone, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judgeOpt(tc.ev, tc.min)
			if v.Status != tc.status || v.Source != tc.source {
				t.Errorf("status %s from %q, want %s from %q", v.Status, v.Source, tc.status, tc.source)
			}
			if v.Source == SourceMachineCode {
				want := inspect.CodeOptimised
				for _, e := range tc.ev {
					if e.Code != nil && e.Code.Class == inspect.CodeO0 {
						want = inspect.CodeO0
					}
				}
				if v.Class != want {
					t.Errorf("class %q, want %q", v.Class, want)
				}
			}
			l, c := contradiction(tc.ev)
			if got := l != nil && c != nil; got != tc.contradict {
				t.Errorf("contradiction %v, want %v", got, tc.contradict)
			}
		})
	}
}

// Check judges only slices that hold OpenSSL: code alone (a bundle's libz
// at -O0, a program that loads libcrypto) is measured by nobody's promise
// and judged by no policy; the same code in a library the build or a
// manifest names as OpenSSL's is judged by it.
func TestCodeJudgedOnlyInOpenSSL(t *testing.T) {
	o0 := &inspect.CodeVerdict{Class: inspect.CodeO0, Score: 0.9, Functions: 400}
	version := "OpenSSL 4.0.2 25 Aug 2026"
	for _, tc := range []struct {
		name   string
		rec    inspect.Record
		binary OptStatus // under check's policy (Binary)
	}{
		{"no strings at all (libz)", inspect.Record{}, OptNone},
		{"the headers' version string only (a program loading libcrypto)", inspect.Record{Version: &inspect.BuildInfo{Kind: inspect.InfoVersion, Value: version}, Family: inspect.FamilyOpenSSL}, OptNone},
		{"OpenSSL's source paths (libssl)", inspect.Record{Family: inspect.FamilyOpenSSL, FamilyMarker: "ssl/ssl_lib.c"}, OptBelow},
		{"a fork's source paths (Bun)", inspect.Record{Family: inspect.FamilyBoringSSL, FamilyMarker: "boringssl/crypto/"}, OptBelow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := inspect.Slice{Format: inspect.FormatAr, Arch: "arm64", Record: tc.rec, Code: o0}
			f := &inspect.File{Path: "lib.a", Format: inspect.FormatAr, Slices: []inspect.Slice{s}}
			r := Binary(f, Policy{MinOpt: inspect.O2})
			if got := r.Slices[0].Opt.Status; got != tc.binary {
				t.Errorf("check's policy: %s, want %s", got, tc.binary)
			}
			if lib, _ := Validate(f, Expect{Slice: platform.Slice{Arch: "arm64"}, MinOpt: inspect.O3}); lib.Slices[0].Opt.Status != OptBelow {
				t.Errorf("as a build's library: %s, want %s", lib.Slices[0].Opt.Status, OptBelow)
			}
		})
	}
}
