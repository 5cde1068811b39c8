package csource

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

func TestTestsForms(t *testing.T) {
	tree := fstest.MapFS{
		"crypto/a.c": {Data: []byte(`#include <x.h>
#ifdef PLAIN
int a;
#endif
  #  ifndef INDENTED /* a comment */
#endif
#if defined(X) && \
    !defined(CONTINUED)
#elif VALUE > 2 || defined ALSO
#endif
/* #ifdef COMMENTED */
#if 0x10UL > 0 // NOTANAME
#endif
int PLAIN_USE = PLAIN;
`)},
		"include/p.h": {Data: []byte(`#ifndef OSSL_P_H
# define OSSL_P_H
int guarded;
#endif
#ifndef LEVEL
# define LEVEL 2 /* the default */
#endif
#if !defined(DEPTH)
#  define DEPTH 30
#endif
#ifndef ROT
# define ROT(a, n) ((a) << (n))
#endif
#ifndef TWICE
# define TWICE 1
#endif
#if TWICE
#endif
`)},
		"include/openssl/t.h.in": {Data: []byte("#ifdef TEMPLATE\n#endif\n")},
		"crypto/x.pl":            {Data: []byte("#!/usr/bin/env perl\n    # if COMMENT is set\n$code.=<<___;\n#ifdef HEREDOC\n___\n")},
		"test/t.c":               {Data: []byte("#ifdef TESTONLY\n#endif\n")},
		"doc/d.c":                {Data: []byte("#ifdef DOCONLY\n#endif\n")},
		"crypto/a.md":            {Data: []byte("#ifdef NOTSOURCE\n")},
	}
	names := []string{"PLAIN", "INDENTED", "X", "CONTINUED", "VALUE", "ALSO", "COMMENTED", "NOTANAME", "x10UL", "UL",
		"OSSL_P_H", "LEVEL", "DEPTH", "ROT", "TWICE", "TEMPLATE", "COMMENT", "HEREDOC", "TESTONLY", "DOCONLY", "NOTSOURCE", "defined"}
	got, err := Tests(tree, names...)
	if err != nil {
		t.Fatal(err)
	}
	type use struct {
		where string
		deflt bool
	}
	want := map[string][]use{
		"PLAIN":     {{"crypto/a.c:2", false}},
		"INDENTED":  {{"crypto/a.c:5", false}},
		"X":         {{"crypto/a.c:7", false}},
		"CONTINUED": {{"crypto/a.c:7", false}},
		"VALUE":     {{"crypto/a.c:9", false}},
		"ALSO":      {{"crypto/a.c:9", false}},
		"OSSL_P_H":  {{"include/p.h:1", false}}, // an include guard switches the header off
		"LEVEL":     {{"include/p.h:5", true}},
		"DEPTH":     {{"include/p.h:8", true}},
		"ROT":       {{"include/p.h:11", false}}, // a function-like macro is code
		"TWICE":     {{"include/p.h:14", true}, {"include/p.h:17", false}},
		"TEMPLATE":  {{"include/openssl/t.h.in:1", false}},
		"HEREDOC":   {{"crypto/x.pl:4", false}},
	}
	for _, n := range names {
		var g []use
		for _, u := range got[n] {
			g = append(g, use{u.Where(), u.Default})
		}
		if !slices.Equal(g, want[n]) {
			t.Errorf("%s: tests %v, want %v", n, g, want[n])
		}
	}
	if tt := got["CONTINUED"]; len(tt) == 1 && tt[0].Text != "#if defined(X) && !defined(CONTINUED)" {
		t.Errorf("continued directive read as %q", tt[0].Text)
	}
}

// TestTestsRelease holds the scan to OpenSSL 4.0.2's own sources: the
// defines that switch its code off are found where they are tested; a
// parameter the release gives a default is only that; a name it never
// tests is not found.
func TestTestsRelease(t *testing.T) {
	tree := os.DirFS(testfixture.UnpackedRelease(t, "4.0.2", "*.c", "*.h", "*.inc", "*.h.in", "*.S", "*.pl"))
	got, err := Tests(tree, "PEDANTIC", "I386_ONLY", "OPENSSL_SMALL_FOOTPRINT", "OPENSSL_NO_ASM", "OPENSSL_TLS_SECURITY_LEVEL", "XTS_CHAIN_TWEAK", "FOO", "_FORTIFY_SOURCE")
	if err != nil {
		t.Fatal(err)
	}
	switches := func(n string) []Test {
		return slices.DeleteFunc(slices.Clone(got[n]), func(t Test) bool { return t.Default })
	}
	for n, where := range map[string]string{
		"I386_ONLY":               "crypto/modes/gcm128.c:341", // AES-NI's and CLMUL's GHASH left out on x86_64
		"PEDANTIC":                "crypto/bn/bn_div.c",
		"OPENSSL_SMALL_FOOTPRINT": "crypto/modes/gcm128.c",
		"OPENSSL_NO_ASM":          "crypto/bn/bn_asm.c",
		"XTS_CHAIN_TWEAK":         "crypto/aes/asm/", // perlasm
	} {
		found := false
		for _, u := range switches(n) {
			found = found || strings.HasPrefix(u.Where(), where)
		}
		if !found {
			t.Errorf("%s: no switching test in %s among %v", n, where, got[n])
		}
	}
	if s := switches("OPENSSL_TLS_SECURITY_LEVEL"); len(got["OPENSSL_TLS_SECURITY_LEVEL"]) == 0 || len(s) > 0 {
		t.Errorf("OPENSSL_TLS_SECURITY_LEVEL: want only its default (include/openssl/tls1.h), got %v", got["OPENSSL_TLS_SECURITY_LEVEL"])
	}
	for _, n := range []string{"FOO", "_FORTIFY_SOURCE"} {
		if len(got[n]) > 0 {
			t.Errorf("%s is not tested by OpenSSL 4.0.2, found %v", n, got[n])
		}
	}
}

func TestWalkSkips(t *testing.T) {
	tree := fstest.MapFS{"a.c": {}, "fuzz/b.c": {}, "demos/c.c": {}, "apps/lib/x.c": {}, "crypto/d.c": {}, "crypto/e.h": {}}
	var seen []string
	err := Walk(tree, []string{".c"}, func(p string, _ io.Reader) error {
		seen = append(seen, p)
		return nil
	})
	if err != nil || !slices.Equal(seen, []string{"a.c", "crypto/d.c"}) {
		t.Errorf("walked %v (%v)", seen, err)
	}
}

// BenchmarkTestsRelease: one recipe's defines held to 4.0.2's sources, as
// the plan does before Configure (go test -bench TestsRelease
// ./internal/csource; the unpack is outside the timing).
func BenchmarkTestsRelease(b *testing.B) {
	tree := os.DirFS(testfixture.UnpackedRelease(b, "4.0.2", "*.c", "*.h", "*.inc", "*.h.in", "*.S", "*.pl"))
	for b.Loop() {
		if _, err := Tests(tree, "PEDANTIC"); err != nil {
			b.Fatal(err)
		}
	}
}
