package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestELFDynamicUnreadable: a real shared library whose DT_RPATH string
// is longer than the reader takes of one name (4096 bytes, PATH_MAX: gcc
// and ld link it, and the loader, splitting it at ':', would accept it)
// keeps its place in -json: the slice's dylib says
// the section could not be read and why, and a note says so, instead of
// the section vanishing. A readable one shows its SONAME and run path.
func TestELFDynamicUnreadable(t *testing.T) {
	k := newKit(t)
	var dirs []string
	for i := range 4100 {
		dirs = append(dirs, fmt.Sprintf("/r%d", i))
	}
	src := cversion(lineGccO2, "linux-x86_64") + manyFuncs(40)
	for _, tc := range []struct {
		name, rpath, unreadable, soname string
	}{
		{"a run path string of 4100 directories", strings.Join(dirs, ":"), "ELF dynamic entry DT_RPATH: string not terminated within 4096 bytes", ""},
		{"one run path", "/opt/x/lib", "", "libx.so.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lib := k.elf(strings.ReplaceAll(tc.name, " ", "-")+".so", src, "-shared", "-fPIC", "-O2", "-Wl,-soname,libx.so.3", "-Wl,--disable-new-dtags,-rpath,"+tc.rpath)
			var out bytes.Buffer
			err := Run(context.Background(), Options{Path: lib, Format: "json", Stdout: &out, Env: func(string) string { return "" }})
			if err != nil {
				t.Fatalf("%v\n%s", err, out.Bytes())
			}
			var doc struct {
				Notes    []string `json:"notes"`
				Binaries []struct {
					Slices []struct {
						Dylib map[string]any `json:"dylib"`
					} `json:"slices"`
				} `json:"binaries"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			d := doc.Binaries[0].Slices[0].Dylib
			notes := strings.Join(doc.Notes, "\n")
			if tc.unreadable == "" {
				if d["install_name"] != tc.soname || d["unreadable"] != nil || strings.Contains(notes, "dynamic section") {
					t.Errorf("dylib %v, notes %q", d, doc.Notes)
				}
				return
			}
			if u, _ := d["unreadable"].(string); !strings.Contains(u, tc.unreadable) {
				t.Errorf("dylib %v: want unreadable %q", d, tc.unreadable)
			}
			if !strings.Contains(notes, "x86_64: the dynamic section could not be read (") || !strings.Contains(notes, tc.unreadable+"): its SONAME, DT_NEEDED and run paths are not shown") {
				t.Errorf("notes %q", doc.Notes)
			}
		})
	}
}
