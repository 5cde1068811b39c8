package inspect

import (
	"bytes"
	"debug/macho"
	"os"
	"slices"
	"sort"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestDefinedExternalsMatchesDebugMachO holds the direct reader of a
// Mach-O symbol table to what debug/macho reads from the same objects:
// globals and private externs defined in a section, not statics, common
// or undefined symbols, for arm64 and x86_64.
func TestDefinedExternalsMatchesDebugMachO(t *testing.T) {
	tc := testfixture.NeedToolchain(t)
	src := `int g = 1; static int s; int common_c; extern int u(void);
int f(void) { return s + g; } int h(void) { return u(); }
__attribute__((visibility("hidden"))) int hid(void) { return 2; }
static int st(void) { return 3; } int (*p)(void) = st;
`
	for _, target := range []string{"arm64-apple-macos11", "x86_64-apple-macos10.12"} {
		data, err := os.ReadFile(tc.Compile(t, t.TempDir(), target, "syms", src))
		if err != nil {
			t.Fatal(err)
		}
		got, err := DefinedExternals(data)
		if err != nil {
			t.Fatal(err)
		}
		f, err := macho.NewFile(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, s := range f.Symtab.Syms {
			if s.Type&0xe0 == 0 && s.Type&0x01 != 0 && s.Type&0x0e == 0x0e && s.Sect != 0 {
				want = append(want, s.Name)
			}
		}
		sort.Strings(want)
		// Every entry, not only the defined externals: what check names
		// functions by.
		var all []macho.Symbol
		if err := MachOSymbols(data, func(s MachOSymbol) error {
			all = append(all, macho.Symbol{Name: string(s.Name), Type: s.Type, Sect: s.Sect, Value: s.Value})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(all) != len(f.Symtab.Syms) {
			t.Errorf("%s: MachOSymbols read %d symbols, debug/macho %d", target, len(all), len(f.Symtab.Syms))
		}
		for i := range min(len(all), len(f.Symtab.Syms)) {
			if d := f.Symtab.Syms[i]; all[i] != (macho.Symbol{Name: d.Name, Type: d.Type, Sect: d.Sect, Value: d.Value}) {
				t.Errorf("%s: symbol %d: MachOSymbols %+v, debug/macho %+v", target, i, all[i], d)
			}
		}
		if !slices.Equal(got, want) || !slices.Contains(got, "_hid") || slices.Contains(got, "_u") {
			t.Errorf("%s: DefinedExternals %v, debug/macho %v", target, got, want)
		}
		for _, cut := range []int{0, 10, 40, len(data) / 2} {
			if _, err := DefinedExternals(data[:cut]); err == nil && cut < len(data)/2 {
				t.Errorf("%s: %d bytes of the object read without an error", target, cut)
			}
		}
	}
}
