package validate

import (
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/platform"
)

// TestIdenticalCopies: a build that expects no -O flag (the pyca way)
// counts identical copies of its compiler line as one (crypto/info.o keeps
// one at -O0), and nothing else: osslbuild's own build, different lines and
// another slice's lines are not forgiven.
func TestIdenticalCopies(t *testing.T) {
	line := func(member, value string) inspect.Candidate {
		return inspect.Candidate{BuildInfo: inspect.BuildInfo{Kind: inspect.InfoCompiler, Text: "compiler: " + value, Value: value, Member: member}}
	}
	same := []inspect.Candidate{line("libcrypto-lib-cversion.o", "gcc -m64"), line("libcrypto-lib-info.o", "gcc -m64")}
	for _, tt := range []struct {
		name      string
		lines     []inspect.Candidate
		noOptFlag bool
		want      int // violations of "one compiler line"
	}{
		{"identical copies, the pyca way", same, true, 0},
		{"identical copies, osslbuild's build", same, false, 1},
		{"different lines", []inspect.Candidate{line("a.o", "gcc -m64"), line("b.o", "gcc -O3")}, true, 1},
		{"one line", []inspect.Candidate{line("a.o", "gcc -m64")}, true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &checker{lib: "libcrypto.a", static: true}
			s := inspect.Slice{Arch: "x86_64", Record: inspect.Record{Candidates: tt.lines}}
			c.compilerLine("x86_64", s, Expect{Slice: platform.Slice{OS: "linux", Arch: "x86_64"}, NoOptFlag: tt.noOptFlag})
			n := 0
			for _, v := range c.out {
				if v.Rule == RuleCompilerLine && v.Member == "" {
					n++
				}
			}
			if n != tt.want {
				t.Errorf("%d violations of one compiler line, want %d: %v", n, tt.want, c.out)
			}
		})
	}
}
