package artifact

import (
	"github.com/osslbuild/osslbuild/internal/binary/validate"

	"fmt"
	"path/filepath"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// Dylib is one dylib of an artifact, per architecture, as its load
// commands and code signature say: what a consumer's program will record
// and the loader will check.
type Dylib struct {
	Library       string   `json:"library"` // libcrypto.3.dylib
	Arch          string   `json:"arch"`
	InstallName   string   `json:"install_name"`
	Current       string   `json:"current_version"`
	Compatibility string   `json:"compatibility_version"`
	Loads         []string `json:"loads"`
	// Signature is the code signature's kind ("ad hoc (linker-signed)")
	// and that its hashes matched when recorded, or "none" (x86_64 needs
	// none).
	Signature string `json:"signature"`
}

// DylibsOf reads the dylibs among libs under dir/lib, every slice of each.
func DylibsOf(dir string, libs []string) ([]Dylib, error) {
	var out []Dylib
	for _, lib := range libs {
		if !strings.HasSuffix(lib, ".dylib") {
			continue
		}
		p := filepath.Join(dir, "lib", lib)
		f, err := inspect.Inspect(p)
		if err != nil {
			return nil, fmt.Errorf("dylib %s: %w", lib, err)
		}
		for _, s := range f.Slices {
			for _, o := range s.Objects {
				m := o.MachO
				if m == nil || m.ID == nil {
					return nil, fmt.Errorf("dylib %s %s: no install name", lib, s.Arch)
				}
				d := Dylib{Library: lib, Arch: s.Arch, InstallName: m.ID.Name, Current: m.ID.Current.String(), Compatibility: m.ID.Compatibility.String(), Loads: []string{}, Signature: "none"}
				for _, l := range m.Loads {
					d.Loads = append(d.Loads, l.Name)
				}
				switch cs := o.Signature; {
				case o.SignatureErr != nil:
					return nil, fmt.Errorf("dylib %s %s: %w", lib, s.Arch, o.SignatureErr)
				case cs != nil && !cs.Valid():
					return nil, fmt.Errorf("dylib %s %s: stale code signature", lib, s.Arch)
				case cs != nil:
					d.Signature = cs.Kind() + ", valid"
				}
				out = append(out, d)
			}
		}
	}
	return out, nil
}

// DylibExpectOf is what a slice's dylib lib must say of itself, as its
// manifest records it (the build held it to the recipe's install names):
// its install name, and libSystem and the sibling as its only loads.
func DylibExpectOf(m *Manifest, lib string) validate.DylibExpect {
	d := validate.DylibExpect{Loads: []string{"/usr/lib/libSystem.B.dylib"}}
	crypto := "libcrypto." + m.Target.Shared.Version + ".dylib"
	name := func(l string) string {
		for _, r := range m.Dylibs {
			if r.Library == l {
				return r.InstallName
			}
		}
		// An @rpath name needs no record; a prefix one needs the prefix
		// the record holds, and without it nothing matches.
		if m.Target.Shared.InstallName == "@rpath" {
			return "@rpath/" + l
		}
		return "(no record of " + l + "'s install name in the manifest)"
	}
	d.InstallName = name(lib)
	if lib != crypto {
		d.Loads = append(d.Loads, name(crypto))
	}
	return d
}
