package validate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/codeclass"
	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/dispatch"
	"github.com/osslbuild/osslbuild/internal/platform"
)

// RuleISA: compiled code uses an instruction-set extension above the
// slice's -march or -mcpu (or check's -isa) outside the dispatch list.
const RuleISA Rule = "instruction-set"

// ISA is an instruction-set expectation: compiled code at most Limit
// (codeclass.ISALevels), except the functions of Dispatch, which the
// sources compile for a higher target on purpose and run behind a CPU
// check.
type ISA struct {
	Limit    string
	Dispatch dispatch.List
}

// ISAVerdict is what the instruction-set rule found in one slice.
type ISAVerdict struct {
	Limit string // the level held to
	List  string // the dispatch list that applied
	// Dispatched are the functions above Limit that the list names, each
	// once, with their source reference where the list has one.
	Dispatched []dispatch.Func
	// Above are the uses above Limit outside the list: violations, or
	// (a linked image, where compiled code and hand-written assembly
	// cannot be told apart) reported only.
	Above []inspect.ISAUse
	// Unjudged says why Above fails nothing, "" when it does.
	Unjudged string
}

// LevelOf is the level a slice is built for: its -march (x86-64) or
// -mcpu (arm64) when that is one of codeclass.ISALevels or
// codeclass.ARM64Levels, else its platform's baseline (def); "" when
// neither names a level (a CPU the levels do not know).
func LevelOf(flags []string, def string) string {
	for _, f := range flags {
		for _, p := range [][2]string{{"-march=", "x86_64"}, {"-mcpu=", "arm64"}} {
			if m, ok := strings.CutPrefix(f, p[0]); ok {
				if _, known := codeclass.LevelRankFor(p[1], m); !known {
					return ""
				}
				return m
			}
		}
	}
	return def
}

// isaLimit is the level check's policy holds slice s to: p.ISA when it is
// a level of the slice's architecture; else, with Strict, a macOS arm64
// slice's platform baseline (apple-m1), which every arm64 Mac runs, so
// code above it outside the dispatch list fails on the M1 whatever the
// deployment target. x86_64's baseline (core2) is the oldest Intel Mac,
// which recent macOS releases no longer run: -strict holds no x86_64
// slice to it. "" holds the slice to nothing.
func (p Policy) isaLimit(s inspect.Slice) string {
	arch := sliceArch(s)
	if _, ok := codeclass.LevelRankFor(arch, p.ISA); ok {
		return p.ISA
	}
	if !p.Strict || NormArch(arch) != "arm64" || !macOS(s) {
		return ""
	}
	row, err := platform.Find("macos", "arm64")
	if err != nil {
		return ""
	}
	return row.ISA
}

// macOS reports whether a slice's Mach-O objects are built for macOS (by
// their LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX).
func macOS(s inspect.Slice) bool {
	return slices.ContainsFunc(s.Objects, func(o inspect.Object) bool {
		return o.MachO != nil && len(o.MachO.Versions) > 0 && o.MachO.Versions[0].Platform == inspect.PlatformMacOS
	})
}

// isa applies the instruction-set rule to one slice.
func (c *checker) isa(arch string, s inspect.Slice, want *ISA, r *SliceReport) {
	if want == nil || s.Code == nil || s.Code.ISA == nil {
		return
	}
	// A level of the slice's architecture: check's -isa (x86-64's) says
	// nothing of an arm64 slice.
	limit, ok := codeclass.LevelRankFor(cmp.Or(s.Code.Arch, arch), want.Limit)
	if !ok {
		return
	}
	ev := s.Code.ISA
	v := &ISAVerdict{Limit: want.Limit, List: want.Dispatch.Name}
	if ev.Attribution == "linked" {
		v.Unjudged = "a linked image holds hand-written assembly (which uses higher extensions behind run-time CPU checks: AVX2 and AVX-512 on x86_64, SVE2, SM3 and SM4 on arm64) beside compiled code and nothing tells them apart: uses above the level are reported, not failed"
	}
	for _, u := range ev.Uses {
		if codeclass.UseRank(u) <= limit {
			continue
		}
		if f, ok := want.Dispatch.Find(u.Function); ok {
			// A compiler's clones (".isra.0") are one function of the list.
			if !slices.ContainsFunc(v.Dispatched, func(d dispatch.Func) bool { return d.Name == f.Name }) {
				v.Dispatched = append(v.Dispatched, f)
			}
			continue
		}
		v.Above = append(v.Above, u)
		if v.Unjudged == "" {
			c.add(arch, u.Member, RuleISA, "at most "+want.Limit, u.Extension,
				"%s uses %s (%s), above %s, and is not in the dispatch list (%s): %s", u.Function, u.Extension, u.Level, want.Limit, want.Dispatch.Name, u.Instruction)
		}
	}
	if ev.UsesDropped > 0 && v.Unjudged == "" {
		c.add(arch, "", RuleISA, "every function above the baseline listed", fmt.Sprintf("%d more", ev.UsesDropped),
			"%d more functions use extensions above the baseline than the evidence lists: not all could be held to %s", ev.UsesDropped, want.Limit)
	}
	r.ISA = v
}
