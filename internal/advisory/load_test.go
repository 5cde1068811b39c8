package advisory

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// writeTable writes t (Encode) to a file and returns its path.
func writeTable(t *testing.T, tab *Table) string {
	t.Helper()
	b, err := Encode(tab)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "advisories.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// -advisories=FILE: a newer table with one CVE more is used, named by its
// path; a malformed, wrong-schema, older or shrunken one is refused with a
// named error, an older or shrunken one taken only when asked for; a FIFO
// is refused without blocking.
func TestLoad(t *testing.T) {
	base, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	next := *base
	next.Advisories = append([]Advisory{{CVE: "CVE-2026-99999", Date: base.AsOf, Severity: High, Source: base.Sources[0].Name,
		Affected: []Range{{Series: "4.0", Introduced: "4.0.0", Fixed: "4.0.9", Public: true}}}}, base.Advisories...)
	newer := writeTable(t, &next)
	got, err := Load(newer, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.Origin != newer || !strings.Contains(got.Describe(), "("+newer+" table, ") {
		t.Errorf("origin %q, describe %q", got.Origin, got.Describe())
	}
	m, err := got.Affecting("4.0.3")
	if err != nil || len(m.Findings) != 1 || m.Findings[0].CVE != "CVE-2026-99999" {
		t.Errorf("4.0.3 against the file: %+v %v", m, err)
	}

	older := *base
	older.Sources = []Source{base.Sources[0]}
	older.Sources[0].Through = "2026-01-01"
	older.AsOf = "2026-01-01"
	older.Advisories = nil
	for _, a := range base.Advisories {
		if a.Date <= older.AsOf {
			a.Source = older.Sources[0].Name
			older.Advisories = append(older.Advisories, a)
		}
	}
	shrunk := *base
	shrunk.Advisories = base.Advisories[1:]
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	wrongSchema := filepath.Join(dir, "v1.json")
	b, _ := os.ReadFile(newer)
	os.WriteFile(wrongSchema, bytes.Replace(b, []byte("/advisory/v2"), []byte("/advisory/v1"), 1), 0o644)
	malformed := filepath.Join(dir, "bad.json")
	os.WriteFile(malformed, b[:len(b)/2], 0o644)
	for _, tc := range []struct {
		name, path string
		is         error
		want       string
	}{
		{"older", writeTable(t, &older), ErrOlder, "as of 2026-01-01, the embedded table as of " + base.AsOf},
		{"shrunk", writeTable(t, &shrunk), ErrOlder, "it lacks 1 CVEs the embedded table has ([" + base.Advisories[0].CVE + "])"},
		{"wrong schema", wrongSchema, ErrMalformed, `schema "https://github.com/osslbuild/osslbuild/advisory/v1"`},
		{"malformed", malformed, ErrMalformed, "bad.json: malformed advisory table"},
		{"fifo", fifo, nil, "named pipe (FIFO), expected a regular file"},
		{"missing", filepath.Join(dir, "none.json"), os.ErrNotExist, "none.json"},
	} {
		_, err := Load(tc.path, false)
		if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %v saying %q", tc.name, err, tc.is, tc.want)
		}
		if tc.is == ErrOlder {
			if got, err := Load(tc.path, true); err != nil || got.Origin != tc.path {
				t.Errorf("%s, asked for: %v", tc.name, err)
			}
		}
	}
}
