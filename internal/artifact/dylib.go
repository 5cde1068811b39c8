package artifact

import (
	"fmt"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/platform"
)

// Dylib is one shared library of an artifact, per architecture, as the
// file says of itself: what a consumer's program will record and the
// loader will check. For a Mach-O dylib that is its load commands and code
// signature; for an ELF library its dynamic section (InstallName is the
// SONAME, Loads the DT_NEEDED entries, and it has no versions).
type Dylib struct {
	Library       string   `json:"library"` // libcrypto.3.dylib, libcrypto.so.3
	Arch          string   `json:"arch"`
	InstallName   string   `json:"install_name"`
	Current       string   `json:"current_version,omitempty"`
	Compatibility string   `json:"compatibility_version,omitempty"`
	Loads         []string `json:"loads"`
	// Signature is the code signature's kind ("ad hoc (linker-signed)")
	// and that its hashes matched when recorded, or "none" (x86_64 and
	// ELF need none).
	Signature string `json:"signature"`
}

// DylibsOf reads the shared libraries of slice s under dir/lib, every
// architecture of each.
func DylibsOf(dir string, s platform.Slice) ([]Dylib, error) {
	var out []Dylib
	for _, lib := range s.SharedLibraries() {
		p := filepath.Join(dir, "lib", lib)
		f, err := inspect.Inspect(p)
		if err != nil {
			return nil, fmt.Errorf("shared library %s: %w", lib, err)
		}
		for _, sl := range f.Slices {
			for _, o := range sl.Objects {
				d, err := dylibOf(lib, sl.Arch, o)
				if err != nil {
					return nil, err
				}
				out = append(out, d)
			}
		}
	}
	return out, nil
}

func dylibOf(lib, arch string, o inspect.Object) (Dylib, error) {
	d := Dylib{Library: lib, Arch: arch, Loads: []string{}, Signature: "none"}
	if e := o.ELF; e != nil {
		if e.DynamicErr != nil {
			return d, fmt.Errorf("shared library %s %s: %w", lib, arch, e.DynamicErr)
		}
		if e.Dynamic == nil || e.Dynamic.Soname == "" {
			return d, fmt.Errorf("shared library %s %s: no SONAME", lib, arch)
		}
		d.InstallName = e.Dynamic.Soname
		d.Loads = append(d.Loads, e.Dynamic.Needed...)
		return d, nil
	}
	m := o.MachO
	if m == nil || m.ID == nil {
		return d, fmt.Errorf("dylib %s %s: no install name", lib, arch)
	}
	d.InstallName, d.Current, d.Compatibility = m.ID.Name, m.ID.Current.String(), m.ID.Compatibility.String()
	for _, l := range m.Loads {
		d.Loads = append(d.Loads, l.Name)
	}
	switch cs := o.Signature; {
	case o.SignatureErr != nil:
		return d, fmt.Errorf("dylib %s %s: %w", lib, arch, o.SignatureErr)
	case cs != nil && !cs.Valid():
		return d, fmt.Errorf("dylib %s %s: stale code signature", lib, arch)
	case cs != nil:
		d.Signature = cs.Kind() + ", valid"
	}
	return d, nil
}

// DylibExpectOf is what a slice's shared library lib must say of itself,
// as its manifest records it (the build held it to the recipe's install
// names): its install name (SONAME), and the platform's system libraries
// and the sibling as its only loads.
func DylibExpectOf(m *Manifest, lib string) validate.DylibExpect {
	s := m.Target
	return DylibExpectation(s, lib, func(l string) string {
		for _, r := range m.Dylibs {
			if r.Library == l {
				return r.InstallName
			}
		}
		// An @rpath name or a SONAME needs no record; a prefix one needs
		// the prefix the record holds, and without it nothing matches.
		if s.Shared.InstallName == "@rpath" || s.Format() != platform.MachO {
			return s.InstallNameOf(l, "")
		}
		return "(no record of " + l + "'s install name in the manifest)"
	})
}

// DylibExpectation is what slice s's shared library lib must say of
// itself, whether a build's Plan or an artifact's manifest names the
// libraries (name gives a library's install name, or SONAME): that name,
// and the platform's system libraries and (for libssl) libcrypto by its
// name as its only loads.
func DylibExpectation(s platform.Slice, lib string, name func(lib string) string) validate.DylibExpect {
	d := validate.DylibExpect{InstallName: name(lib), Loads: s.SystemLibraries()}
	if crypto := s.SharedLibraries()[0]; lib != crypto {
		d.Loads = append(d.Loads, name(crypto))
	}
	return d
}
