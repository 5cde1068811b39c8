package inspect

import (
	"bytes"
	"debug/macho"
	"fmt"
	"sort"
)

// DefinedExternals lists the external symbols a thin Mach-O image or
// object defines (N_EXT, in a section): what a dylib exports, or what an
// object gives the libraries it goes into. Sorted.
func DefinedExternals(data []byte) ([]string, error) {
	f, err := macho.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("symbols: %w", err)
	}
	defer f.Close()
	if f.Symtab == nil {
		return nil, nil
	}
	var out []string
	for _, s := range f.Symtab.Syms {
		const nExt, nType, nSect = 0x01, 0x0e, 0x0e
		if s.Type&0xe0 == 0 && s.Type&nExt != 0 && s.Type&nType == nSect && s.Sect != 0 {
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}
