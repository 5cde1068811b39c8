package configure

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestGate(t *testing.T) {
	good, err := os.ReadFile("testdata/Makefile.good")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, old, new string
		wantErr        string // "" = passes
	}{
		{name: "good"},
		{name: "pyca CFLAGS in environment", old: "CFLAGS=-O3 -Wall -mmacosx-version-min=10.12 -march=core2", new: "CFLAGS=-mmacosx-version-min=10.12 -march=core2", wantErr: "no -O flag"},
		{name: "last -O wins", old: "-march=core2\nCNF", new: "-march=core2 -O0\nCNF", wantErr: "effective optimisation is -O0"},
		{name: "O2", old: "CFLAGS=-O3", new: "CFLAGS=-O2", wantErr: "effective optimisation is -O2"},
		{name: "missing flag", old: " -march=core2\n", new: "\n", wantErr: "recipe flag -march=core2 missing"},
		{name: "wrong platform", old: "PLATFORM=darwin64-x86_64-cc", new: "PLATFORM=darwin64-arm64-cc", wantErr: `PLATFORM is "darwin64-arm64-cc"`},
		{name: "no library objects", old: "LIBS=libcrypto.a libssl.a \\\n     providers/libdefault.a", new: "LIBS=libnone.a", wantErr: "no library objects"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mk := strings.Replace(string(good), tt.old, tt.new, 1)
			os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644)
			m, res, err := Gate(dir, plan(t, "4.0.2", "x86_64"))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				want := []string{"crypto/libcrypto-lib-a.o", "crypto/libcrypto-lib-b.o", "ssl/libssl-lib-s.o", "providers/libdefault-lib-d.o"}
				if !slices.Equal(m.Objects, want) {
					t.Errorf("objects = %v, want %v", m.Objects, want)
				}
				if res.EffectiveOpt != "-O3" || res.CompileFlags != "-arch x86_64 -O3 -Wall -mmacosx-version-min=10.12 -march=core2" {
					t.Errorf("result = %+v", res)
				}
				return
			}
			if !errors.Is(err, ErrGate) || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "Makefile") {
				t.Errorf("want ErrGate with %q naming the Makefile, got %v", tt.wantErr, err)
			}
		})
	}
}

func TestGateNoMakefile(t *testing.T) {
	if _, _, err := Gate(t.TempDir(), plan(t, "4.0.2", "arm64")); err == nil {
		t.Error("gate passed without a Makefile")
	}
}
