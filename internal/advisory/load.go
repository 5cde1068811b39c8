package advisory

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// ErrOlder is matched (errors.Is) by Load's refusal of a table that would
// know less than the embedded one: an earlier as-of date, or CVEs of the
// embedded table missing from it.
var ErrOlder = errors.New("advisory table older than the embedded one")

// maxTable bounds a table file: today's is under 100 KB.
const maxTable = 16 << 20

// Load reads a table file (-advisories=FILE), holds it to the table's
// form (Parse) and to the embedded table: a file as of an earlier day
// than the embedded table, or one that drops any of its CVEs, is refused
// with ErrOlder unless older says the caller asked for it (a downgrade is
// never silent). Only a regular file is read: a FIFO or device is
// refused by name without blocking.
func Load(path string, older bool) (*Table, error) {
	// A FIFO in place of the file is refused without blocking (ctxio).
	b, err := ctxio.ReadFile(context.Background(), path, true, maxTable)
	if err != nil {
		return nil, fmt.Errorf("advisory table: %w", err)
	}
	t, err := Parse(path, b)
	if err != nil {
		return nil, err
	}
	t.Origin = path
	base, err := Default()
	if err != nil {
		return nil, err
	}
	if older {
		return t, nil
	}
	if t.AsOf < base.AsOf {
		return nil, fmt.Errorf("%s: %w: as of %s, the embedded table as of %s (-advisories-older, in go tool mage check -advisoriesOlder, takes it anyway)", path, ErrOlder, t.AsOf, base.AsOf)
	}
	var dropped []string
	for _, a := range base.Advisories {
		if !slices.ContainsFunc(t.Advisories, func(b Advisory) bool { return b.CVE == a.CVE }) {
			dropped = append(dropped, a.CVE)
		}
	}
	if len(dropped) > 0 {
		shown := dropped
		if len(shown) > 5 {
			shown = append(slices.Clone(shown[:5]), fmt.Sprintf("and %d more", len(dropped)-5))
		}
		return nil, fmt.Errorf("%s: %w: it lacks %d CVEs the embedded table has (%v) (-advisories-older, in go tool mage check -advisoriesOlder, takes it anyway)", path, ErrOlder, len(dropped), shown)
	}
	return t, nil
}
