package check

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// libcryptoMarkers are the build-info strings only libcrypto itself
// compiles in (crypto/cversion.c, crypto/info.c), beside its compiler line.
var libcryptoMarkers = map[inspect.BuildInfoKind]bool{
	inspect.InfoPlatform: true, inspect.InfoBuiltOn: true,
	inspect.InfoOpenSSLDir: true, inspect.InfoModulesDir: true, inspect.InfoEnginesDir: true,
}

// facts turns inspect's findings for one slice into a report Slice.
func facts(s inspect.Slice) Slice {
	out := Slice{Arch: s.Arch, Format: string(s.Format), Objects: len(s.Objects), OK: true}
	if out.Arch == "" {
		out.Arch = "unknown"
	}
	seen := map[string]bool{}
	for _, bi := range s.BuildInfo {
		switch bi.Kind {
		case inspect.InfoVersion:
			out.Version = first(out.Version, bi.Value)
		case inspect.InfoPlatform:
			out.Platform = first(out.Platform, bi.Value)
		case inspect.InfoBuiltOn:
			out.BuiltOn = first(out.BuiltOn, bi.Value)
		case inspect.InfoCompiler:
			if !seen[bi.Value] {
				seen[bi.Value] = true
				out.Compilers = append(out.Compilers, bi.Value)
			}
		}
		if libcryptoMarkers[bi.Kind] {
			out.Libcrypto = true
		}
	}
	// The least optimised line decides; ties keep the first found.
	for i, l := range out.Compilers {
		cl := inspect.ParseCompilerLine(l)
		if i == 0 || cl.Opt < inspect.ParseCompilerLine(out.Compiler).Opt {
			out.Compiler, out.Opt, out.OptFlag = l, cl.Opt.String(), cl.OptFlag
		}
	}
	counts := map[string]int{}
	for _, o := range s.Objects {
		if o.MachO == nil {
			continue
		}
		counts[minosKey(o.MachO)]++
	}
	if len(counts) > 0 {
		out.MinOSCounts = counts
		keys := make([]string, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { // by version: 10.12 before 9.0 as text, not as numbers
			a, aerr := inspect.ParseVersion(keys[i])
			b, berr := inspect.ParseVersion(keys[j])
			if aerr == nil && berr == nil {
				return a < b
			}
			return keys[i] < keys[j]
		})
		out.MinOS = keys[0]
		if len(keys) > 1 {
			out.MinOSMixed = true
			parts := make([]string, len(keys))
			for i, k := range keys {
				parts[i] = fmt.Sprintf("%s (%d objects)", k, counts[k])
			}
			out.MinOS = "mixed: " + strings.Join(parts, ", ")
		}
	}
	for _, o := range s.Objects {
		if o.Err != nil {
			out.Problems = append(out.Problems, Problem{RuleInspect, o.Err.Error()})
		}
	}
	return out
}

func first(have, v string) string {
	if have != "" {
		return have
	}
	return v
}

// minosKey is "11.0" for macOS, "iOS 14.0" for other platforms, "none"
// when the object names no deployment target.
func minosKey(m *inspect.MachO) string {
	if len(m.Versions) == 0 {
		return "none"
	}
	v := m.Versions[0]
	if v.Platform == inspect.PlatformMacOS {
		return v.MinOS.String()
	}
	return v.Platform.String() + " " + v.MinOS.String()
}

// normArch folds the names ELF tools and Apple's tools give one CPU.
func normArch(a string) string {
	switch a {
	case "aarch64":
		return "arm64"
	case "amd64", "x86-64":
		return "x86_64"
	}
	return a
}

// evaluate applies the rules (see the package comment) to every binary and
// slice, filling Problems, OK flags, Notes and Failures.
func evaluate(res *Result, min inspect.OptLevel) {
	compilers := 0
	for i := range res.Binaries {
		b := &res.Binaries[i]
		name := b.Name()
		if b.Error != "" {
			res.Failures = append(res.Failures, b.Error)
			continue
		}
		want := res.Archs
		if len(want) == 0 && b.expect != nil {
			want = b.expect.archs
		}
		var have []string
		for _, s := range b.Slices {
			have = append(have, normArch(s.Arch))
		}
		for _, a := range want {
			if !slices.Contains(have, normArch(a)) {
				b.Problems = append(b.Problems, Problem{RuleArch,
					fmt.Sprintf("no %s slice: expected %s, found %s", a, strings.Join(want, ", "), strings.Join(have, ", "))})
			}
		}
		for _, p := range b.Problems {
			res.Failures = append(res.Failures, name+": "+p.Message)
		}
		for j := range b.Slices {
			s := &b.Slices[j]
			compilers += len(s.Compilers)
			judgeSlice(s, b.expect, min)
			if s.Version != "" && !s.Libcrypto && len(s.Compilers) == 0 {
				res.Notes = append(res.Notes, fmt.Sprintf("%s %s: %q but no libcrypto build info: built against OpenSSL, loads it at run time; check that library", name, s.Arch, s.Version))
			}
			s.OK = len(s.Problems) == 0
			for _, p := range s.Problems {
				res.Failures = append(res.Failures, fmt.Sprintf("%s %s: %s", name, s.Arch, p.Message))
			}
		}
	}
	if compilers == 0 {
		res.nothing = fmt.Sprintf("%s: no OpenSSL \"compiler: \" line found in %d binaries: nothing shows how OpenSSL was built", res.Path, len(res.Binaries))
		res.Failures = append(res.Failures, res.nothing)
	}
	res.OK = len(res.Failures) == 0
}

func judgeSlice(s *Slice, exp *expect, min inspect.OptLevel) {
	for _, l := range s.Compilers {
		cl := inspect.ParseCompilerLine(l)
		if cl.Opt.AtLeast(min) {
			continue
		}
		if cl.OptFlag == "" {
			s.Problems = append(s.Problems, Problem{RuleOptimisation,
				fmt.Sprintf("built without optimisation (-O0): the compiler line has no -O flag, expected at least %s: %q", min, l)})
		} else {
			s.Problems = append(s.Problems, Problem{RuleOptimisation,
				fmt.Sprintf("optimised at %s (last -O flag %q), expected at least %s: %q", cl.Opt, cl.OptFlag, min, l)})
		}
	}
	if s.Libcrypto && len(s.Compilers) == 0 {
		s.Problems = append(s.Problems, Problem{RuleCompilerLine,
			fmt.Sprintf("holds libcrypto's build info (platform %q) but no \"compiler: \" line: how it was optimised cannot be shown", s.Platform)})
	}
	if exp != nil && len(s.MinOSCounts) > 0 {
		if want := exp.minos[normArch(s.Arch)]; want != "" {
			if wv, err := inspect.ParseVersion(want); err == nil && (len(s.MinOSCounts) != 1 || s.MinOSCounts[wv.String()] == 0) {
				s.Problems = append(s.Problems, Problem{RuleMinOS,
					fmt.Sprintf("deployment target %s, expected %s (artifact %s manifest)", s.MinOS, wv, exp.name)})
			}
		}
	}
}
