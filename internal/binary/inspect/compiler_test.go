package inspect

import (
	"reflect"
	"testing"
)

func TestParseCompilerLine(t *testing.T) {
	tests := []struct {
		line    string
		opt     OptLevel
		optFlag string
		archs   []string
	}{
		// The line pyca shipped: CFLAGS from the environment dropped -O3.
		{"compiler: cc -fPIC -arch arm64 -mmacosx-version-min=11.0 -DL_ENDIAN -DOPENSSL_PIC", O0, "", []string{"arm64"}},
		{"cc -fPIC -arch arm64 -O3 -Wall -mmacosx-version-min=11.0 -DL_ENDIAN", O3, "-O3", []string{"arm64"}},
		{"cc -O3 -Wall -O0", O0, "-O0", nil}, // the last -O wins
		{"cc -O0 -O2", O2, "-O2", nil},
		{"cc -O", O1, "-O", nil}, // bare -O is -O1
		{"cc -Os", Os, "-Os", nil},
		{"cc -Oz", Oz, "-Oz", nil},
		{"cc -Og", Og, "-Og", nil},
		{"cc -Ofast", Ofast, "-Ofast", nil},
		{"cc -O4", O3, "-O4", nil},             // clamped like gcc and clang
		{"cc -O3 -Oweird", O0, "-Oweird", nil}, // unknown: most conservative
		{"cc -arch x86_64 -arch arm64 -O2", O2, "-O2", []string{"x86_64", "arm64"}},
		{"-O3", O0, "", nil}, // argv[0] is the compiler, not a flag
		{"", O0, "", nil},
		{"cc -arch", O0, "", nil},
		// Windows OpenSSL: MSVC's own flags (Configurations/10-main.conf's
		// VC-WIN64A: /O2 for release, /Od for debug; none at all is /Od).
		{"compiler: cl  /Zi /Fdossl_static.pdb /Gs0 /GF /Gy /MD /W3 /wd4090 /nologo /O2 -DL_ENDIAN -DOPENSSL_PIC", O2, "/O2", nil},
		{"cl /Zi /Fdossl_static.pdb /MDd /Od -DDEBUG -D_DEBUG", O0, "/Od", nil},
		{"cl /nologo /W3 /MD", O0, "", nil},
		{"cl /O1 /Oi", Os, "/O1", nil},
		{"C:\\LLVM\\bin\\clang-cl.exe /Ox", O2, "/Ox", nil},
		{"cc /O2", O0, "", nil}, // not MSVC: "/O2" is a path
	}
	for _, tt := range tests {
		c := ParseCompilerLine(tt.line)
		if c.Opt != tt.opt || c.OptFlag != tt.optFlag || !reflect.DeepEqual(c.Archs, tt.archs) {
			t.Errorf("ParseCompilerLine(%q) = opt %s flag %q archs %q; want %s %q %q", tt.line, c.Opt, c.OptFlag, c.Archs, tt.opt, tt.optFlag, tt.archs)
		}
	}
}

func TestCompilerLineHas(t *testing.T) {
	c := ParseCompilerLine("compiler: cc -fPIC -arch arm64 -O3  -mmacosx-version-min=11.0 -march=core2")
	if c.Raw != "cc -fPIC -arch arm64 -O3  -mmacosx-version-min=11.0 -march=core2" {
		t.Errorf("Raw = %q", c.Raw)
	}
	for flag, want := range map[string]bool{
		"-fPIC": true, "-march=core2": true, "-mmacosx-version-min=11.0": true,
		"-arch arm64": true, "-arch  arm64": true, "-arch x86_64": false, "arm64 -O3": true,
		"-mmacosx-version-min=11": false, "-march": false, "cc": false, "": false, "-O3 -fPIC": false,
	} {
		if got := c.Has(flag); got != want {
			t.Errorf("Has(%q) = %v, want %v", flag, got, want)
		}
	}
}

func TestOptLevelOrder(t *testing.T) {
	order := []OptLevel{O0, Og, O1, Oz, Os, O2, O3, Ofast}
	for i := range order {
		for j := range order {
			if got := order[i].AtLeast(order[j]); got != (i >= j) {
				t.Errorf("%s.AtLeast(%s) = %v", order[i], order[j], got)
			}
		}
		if o := ParseCompilerLine("cc " + order[i].String()).Opt; o != order[i] {
			t.Errorf("ParseCompilerLine(cc %s).Opt = %s", order[i], o)
		}
	}
	if OptLevel(42).String() != "OptLevel(42)" {
		t.Error(OptLevel(42).String())
	}
}

// TestCompilerLineMinOS: the deployment target a line compiles for is its
// last -mmacosx-version-min (or clang's -mmacos-version-min), as clang
// takes it; "" when it names none.
func TestCompilerLineMinOS(t *testing.T) {
	for _, tt := range []struct{ line, want string }{
		{"cc -fPIC -arch arm64 -O3 -mmacosx-version-min=14.5 -DL_ENDIAN", "14.5"},
		{"cc -arch x86_64 -mmacosx-version-min=13 -DL_ENDIAN -mmacosx-version-min=13", "13"},
		{"cc -mmacosx-version-min=10.12 -mmacos-version-min=11.0", "11.0"},
		{"cc -mmacosx-version-min=", ""},
		{"gcc -fPIC -O2", ""},
		{"-mmacosx-version-min=11.0", ""}, // argv[0] is the compiler
	} {
		if got := ParseCompilerLine(tt.line).MinOS; got != tt.want {
			t.Errorf("ParseCompilerLine(%q).MinOS = %q, want %q", tt.line, got, tt.want)
		}
	}
}
