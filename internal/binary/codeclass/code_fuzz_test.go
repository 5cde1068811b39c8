package codeclass

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// FuzzCodeEvidence runs the code classifier on mutated objects, archives
// and universal files: it must return a verdict or an error, never panic,
// read out of bounds or produce an impossible verdict.
//
//	go test ./internal/binary/codeclass -run '^$' -fuzz '^FuzzCodeEvidence$' -fuzztime 60s -fuzzminimizetime 2s
func FuzzCodeEvidence(f *testing.F) {
	objs, archives, fats := testfixture.RealSeeds(f)
	seeds := append(append(append(objs, archives...), fats...), testfixture.SynthArchives(f)...)
	seeds = append(seeds, testfixture.MachOObject(f, inspect.LCBuildVersion, uint32(inspect.PlatformMacOS), 0x000b0000), testfixture.BigEndian32())
	// funcs.c compiled for each target, when the compiler is here.
	for _, tgt := range [][]string{
		{"clang-14", "-target", "arm64-apple-macos11", "-nostdinc", "-O0"},
		{"clang-14", "-target", "x86_64-apple-macos10.12", "-nostdinc", "-O2"},
		{"gcc", "-nostdinc", "-fPIC", "-O0"},
	} {
		if _, err := exec.LookPath(tgt[0]); err != nil {
			continue
		}
		out := f.TempDir() + "/funcs.o"
		if err := exec.Command(tgt[0], append(tgt[1:], "-c", "-o", out, "testdata/code/funcs.c")...).Run(); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		vs, err := codeEvidence(context.Background(), "fuzz", bytes.NewReader(data), int64(len(data)), defaultCodeOptions)
		if err != nil {
			return
		}
		for _, v := range vs {
			if v.Score < 0 || v.Score > 1 || v.Functions < 0 || v.Instructions < v.Functions ||
				(v.Class != inspect.CodeTooLittle) != (v.Functions >= MinFunctions) ||
				v.Class == inspect.CodeO0 && v.Score < O0Threshold {
				t.Fatalf("impossible verdict %+v", v)
			}
		}
	})
}
