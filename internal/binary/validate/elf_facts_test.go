package validate

import (
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// TestELFDynamicFacts holds an ELF library's dynamic section to its
// expectation: SONAME, DT_NEEDED, run paths, and one that could not be
// read at all.
func TestELFDynamicFacts(t *testing.T) {
	d := DylibExpect{InstallName: "libssl.so.3", Loads: []string{"libc.so.6", "libcrypto.so.3"}}
	for _, tt := range []struct {
		name string
		elf  inspect.ELF
		want []string // rules, in order
	}{
		{"as expected", inspect.ELF{Dynamic: &inspect.ELFDynamic{Soname: "libssl.so.3", Needed: []string{"libcrypto.so.3", "libc.so.6"}}}, nil},
		{"no SONAME", inspect.ELF{Dynamic: &inspect.ELFDynamic{Needed: []string{"libc.so.6"}}}, []string{"install-name"}},
		{"another SONAME, an extra library, a run path", inspect.ELF{Dynamic: &inspect.ELFDynamic{Soname: "libssl.so", Needed: []string{"libm.so.6"}, Runpath: []string{"$ORIGIN"}}}, []string{"install-name", "dependency", "dependency"}},
		{"no dynamic section", inspect.ELF{}, []string{"install-name"}},
		{"an unreadable one", inspect.ELF{DynamicErr: inspect.Malformed(64, "ELF dynamic entry DT_NEEDED: string not terminated")}, []string{"format"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &checker{lib: "libssl.so.3", dylib: true}
			c.elfFacts("x86_64", &tt.elf, d)
			var got []string
			for _, v := range c.out {
				got = append(got, string(v.Rule))
				if !strings.HasPrefix(v.Library, "libssl.so.3") || v.Arch != "x86_64" {
					t.Errorf("violation does not name the library and architecture: %+v", v)
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("rules %v, want %v (%+v)", got, tt.want, c.out)
			}
		})
	}
}
