package artifact

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// Library is what a library file holds, read once: its size, and per
// architecture its objects and the external symbols they define.
type Library struct {
	Size    int64          `json:"size"`
	Members map[string]int `json:"members"` // objects per architecture
	// Symbols are the defined external symbols of each architecture's
	// slice: a universal library's slices are compared one by one, so that
	// one losing a symbol another still defines is seen.
	Symbols   map[string][]string `json:"-"`
	Universal bool                `json:"-"` // a fat file of several slices
}

// ReadLibrary reads the library at p (a regular file of at most
// MaxTarStream bytes) through inspect: size, objects per architecture and
// the external symbols each object defines.
func ReadLibrary(ctx context.Context, p string) (Library, error) {
	b, err := ctxio.ReadFile(ctx, p, false, MaxTarStream)
	if err != nil {
		return Library{}, err
	}
	f, err := inspect.InspectBytes(filepath.Base(p), b)
	if err != nil {
		return Library{}, err
	}
	l := Library{Size: int64(len(b)), Members: map[string]int{}, Symbols: map[string][]string{}, Universal: f.Format == inspect.FormatFat}
	for _, s := range f.Slices {
		l.Members[s.Arch] += len(s.Objects)
		for _, o := range s.Objects {
			if o.Offset < 0 || o.Offset+o.Size > int64(len(b)) {
				return Library{}, fmt.Errorf("%s member %s: outside the file", s.Arch, o.Member)
			}
			syms, err := inspect.DefinedExternals(b[o.Offset : o.Offset+o.Size])
			if err != nil {
				return Library{}, fmt.Errorf("%s member %s: %w", s.Arch, o.Member, err)
			}
			l.Symbols[s.Arch] = append(l.Symbols[s.Arch], syms...)
		}
	}
	return l, nil
}
