package check

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

// universal2Wheel is a wheel shaped like cryptography's for macOS: two
// extension modules deep in the package, each a universal2 file whose
// slices carry OpenSSL's build information.
func universal2Wheel(t *testing.T) string {
	k := newKit(t)
	fat := k.lipo("fat.o", k.macho("arm.o", "arm64-apple-macos11", cversion(lineArmO3, "darwin64-arm64-cc")),
		k.macho("x86.o", "x86_64-apple-macos10.12", cversion(lineX86O3, "darwin64-x86_64-cc")))
	return writeWheel(t, k.path("cryptography-46.0.0-cp311-abi3-macosx_10_9_universal2.whl"),
		wheelMember{name: "cryptography/hazmat/bindings/_rust.abi3.so", file: fat},
		wheelMember{name: "cryptography/hazmat/bindings/_openssl.abi3.so", file: fat})
}

// tableLines are the text output's table: its lines up to the first
// empty one.
func tableLines(out string) []string {
	table, _, _ := strings.Cut(out, "\n\n")
	return strings.Split(table, "\n")
}

// TestTextFitsWidth: a universal2 wheel's table fits 100 columns when
// stdout is not a terminal, and the width asked for otherwise: the wheel
// is named once, in a heading, and each row names its member; the
// compiler line, which does not fit in 100, is left to -json. The JSON
// does not change.
func TestTextFitsWidth(t *testing.T) {
	whl := universal2Wheel(t)
	for _, tc := range []struct {
		name     string
		width    int
		compiler bool // the COMPILER column shown
	}{
		{"not a terminal: 100 columns", 0, false},
		{"a wide terminal", 200, true},
		{"a narrow terminal", 80, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Run(context.Background(), Options{Path: whl, Width: tc.width, Stdout: &out, Env: noEnv, Advisories: testAdvisories(t), Now: dec1})
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			max := tc.width
			if max == 0 {
				max = 100
			}
			lines := tableLines(out.String())
			for _, l := range lines {
				if n := utf8.RuneCountInString(l); n > max {
					t.Errorf("a table line of %d runes, more than %d:\n%s", n, max, l)
				}
			}
			table := strings.Join(lines, "\n")
			if n := strings.Count(table, "cryptography-46.0.0-cp311-abi3-macosx_10_9_universal2.whl"); n != 1 {
				t.Errorf("the wheel named %d times in the table, want once (a heading):\n%s", n, table)
			}
			for _, w := range []string{"_rust.abi3.so", "_openssl.abi3.so", "x86_64", "arm64", "-O3"} {
				if !strings.Contains(table, w) {
					t.Errorf("the table lacks %q:\n%s", w, table)
				}
			}
			if got := strings.Contains(lines[0], "COMPILER"); got != tc.compiler {
				t.Errorf("COMPILER column shown %v, want %v:\n%s", got, tc.compiler, table)
			}
			if tc.width == 200 && !strings.Contains(table, whl+"(cryptography/hazmat/bindings/)\n  _rust.abi3.so ") {
				t.Errorf("at 200 columns the heading does not name the wheel and the folder in it in full:\n%s", table)
			}
		})
	}
	// -json holds every detail the table leaves out, as before.
	var js bytes.Buffer
	if err := Run(context.Background(), Options{Path: whl, JSON: true, Stdout: &js, Env: noEnv, Advisories: testAdvisories(t), Now: dec1}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"path": "` + whl + `"`, `"member": "cryptography/hazmat/bindings/_rust.abi3.so"`, `"compiler": "` + lineArmO3 + `"`} {
		if !strings.Contains(js.String(), w) {
			t.Errorf("-json lacks %s", w)
		}
	}
}
