package check

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// The real-world shapes check met in binaries other projects ship, rebuilt
// small with clang-14: each states its verdict. This file uses only the
// check API that predates those fixes (Check, Options.Path/MinOpt/Archs,
// Result.OK and the slices' Opt and Compiler), so it can be run against
// the code before them to show that each wrong-verdict shape failed there.

const (
	// Real-world shape 1: OpenSSL 3.5 build information of a program.
	line35O3 = "gcc -fPIC -arch arm64 -Wa,--noexecstack -O3 -Wall -DL_ENDIAN -DOPENSSL_PIC -DOPENSSL_BUILDING_OPENSSL -DNDEBUG"
	line35X  = "gcc -fPIC -arch x86_64 -Wa,--noexecstack -O3 -Wall -DL_ENDIAN -DOPENSSL_PIC -DOPENSSL_BUILDING_OPENSSL -DNDEBUG"
	// Real-world shape 3: the pyca bug in another project, no -O at all.
	lineNoO = "cc -fPIC -arch arm64 -isysroot /Library/Developer/CommandLineTools/SDKs/MacOSX.sdk -mmacosx-version-min=13 -DL_ENDIAN -DOPENSSL_PIC -DOPENSSL_BUILDING_OPENSSL -DNDEBUG"
	ver357  = "OpenSSL 3.5.7 9 Jun 2026"
)

// program is the C source of a linked program's OpenSSL build
// information as OpenSSL lays it out: cversion.c's literals (version,
// built on, platform, OPENSSLDIR) in __cstring and buildinf.h's
// compiler_flags array in __const. far puts 16 KiB of other constants on
// both sides of the array, as a linked Mach-O image does (the rest of the
// library's __const), so nothing lies beside it (used: clang emits the
// arrays in this order); decoy, when not "-", is a "compiler: " string of the
// program's own in its writable data, 16 KiB further on.
func program(version, platform, line string, far bool, decoy string) string {
	var b strings.Builder
	if far {
		b.WriteString("__attribute__((used)) static const char tables1[16384] = {1};\n")
	}
	if line != "-" {
		b.WriteString("__attribute__((used)) static const char compiler_flags[] = {")
		for _, c := range []byte("compiler: " + line) {
			fmt.Fprintf(&b, "%d,", c)
		}
		b.WriteString("0};\n")
	} else {
		b.WriteString("static const char compiler_flags[] = \"\";\n")
	}
	if far {
		b.WriteString("__attribute__((used)) static const char tables2[16384] = {1};\n")
	}
	fmt.Fprintf(&b, `const char *OpenSSL_version(int t) {
	switch (t) {
	case 0: return %q;
	case 2: return compiler_flags;
	case 3: return "built on: Thu Jan  1 00:00:00 1970 UTC";
	case 4: return "platform: %s";
	case 5: return "OPENSSLDIR: \"/usr/local/etc/openssl@3\"";
	}
	return "not available";
}
`, version, platform)
	if decoy != "-" {
		fmt.Fprintf(&b, "char program_data[16384] = {1};\nchar program_note[] = %q;\n", "compiler: "+decoy)
	}
	return b.String()
}

// fork is a fork's OpenSSL_version (BoringSSL's and AWS-LC's
// crypto/crypto.c, LibreSSL's crypto/cversion.c), and version text the
// module itself compiles in from the headers.
func fork(own, headerText, placeholder string) string {
	return fmt.Sprintf(`const char *OpenSSL_version(int which) {
	switch (which) {
	case 0: return %q;
	case 1: return "compiler: %s";
	case 2: return "built on: %s";
	case 3: return "platform: %s";
	case 4: return "OPENSSLDIR: n/a";
	}
	return "not available";
}
__attribute__((used)) static const char tables[16384] = {1};
const char *module_version(void) { return %q; }
`, own, placeholder, placeholder, placeholder, headerText)
}

// shape is one fixture and its verdict.
type shape struct {
	name     string
	path     string
	opts     Options
	ok       bool   // the verdict
	opt      string // every judged slice's Opt ("" when unknown or none)
	compiler string // every judged slice's chosen compiler line
}

// shapes builds the fixtures.
func shapes(t *testing.T) []shape {
	k := newKit(t)
	const execute, bundle = 2, 8
	arm, x86 := "arm64-apple-macos11", "x86_64-apple-macos10.12"

	// Shape 1: the -O3 build line plus an empty "compiler: " elsewhere,
	// thin and universal.
	p1a := k.retype("prog-arm64", k.macho("p1a.o", arm, program(ver357, "darwin64-arm64-cc", line35O3, true, "")), execute)
	p1x := k.retype("prog-x86_64", k.macho("p1x.o", x86, program(ver357, "darwin64-x86_64-cc", line35X, true, "")), execute)
	p1 := k.lipo("prog-universal", p1a, p1x)
	// The same in a compact layout (a static library member, an ELF
	// library): the line sits with the rest.
	p1c := k.retype("prog-compact", k.macho("p1c.o", arm, program(ver357, "darwin64-arm64-cc", line35O3, false, "")), execute)
	// A real -O3 line and a decoy without optimisation elsewhere.
	p1d := k.retype("prog-decoy-o0", k.macho("p1d.o", arm, program(ver357, "darwin64-arm64-cc", line35O3, true, "cc -O0 -g")), execute)

	// Shape 2: BoringSSL in a Node-API module; LibreSSL and AWS-LC alike.
	boring := k.retype("boring.node", k.macho("b.o", arm, fork("BoringSSL", "OpenSSL 1.1.1 (compatible; BoringSSL)", "n/a")), bundle)
	libre := k.retype("libressl.dylib", k.macho("l.o", arm, fork("LibreSSL 3.8.2", "LibreSSL 3.8.2", "information not available")), 6)
	awslc := k.retype("awslc.node", k.macho("a.o", arm, fork("AWS-LC 1.29.0", "OpenSSL 1.1.1 (compatible; AWS-LC 1.29.0)", "n/a")), bundle)

	// Shape 3: a universal dylib whose line has no -O, alone and with a
	// decoy -O3 string elsewhere: both fail.
	p3a := k.macho("p3a.o", arm, program(ver357, "darwin64-arm64-cc", lineNoO, true, "-"))
	p3x := k.macho("p3x.o", x86, program(ver357, "darwin64-x86_64-cc", strings.Replace(lineNoO, "arm64", "x86_64", 1), true, "-"))
	p3 := k.retype("libcrypto-noO.dylib", k.lipo("p3.o", p3a, p3x), 0)
	p3d := k.retype("libcrypto-decoy.dylib", k.macho("p3d.o", arm, program(ver357, "darwin64-arm64-cc", lineNoO, true, "cc -O3 -Wall")), 6)

	// -Os is optimised: it meets the default minimum.
	os := k.retype("libcrypto-os.dylib", k.macho("os.o", arm, program(ver357, "darwin64-arm64-cc", strings.Replace(line35O3, "-O3", "-Os", 1), false, "-")), 6)

	// Two slices of one fat file built from different releases.
	v2 := k.macho("v2.o", arm, program("OpenSSL 4.0.2 25 Aug 2026", "darwin64-arm64-cc", line35O3, false, "-"))
	v3 := k.macho("v3.o", x86, program("OpenSSL 4.0.3 1 Oct 2026", "darwin64-x86_64-cc", line35X, false, "-"))
	mixed := k.lipo("libcrypto-mixed.a.o", v2, v3)

	return []shape{
		{"1: -O3 line and an empty compiler string elsewhere (arm64 program)", p1a, Options{}, true, "-O3", line35O3},
		{"1: the same, x86_64", p1x, Options{}, true, "-O3", line35X},
		{"1: the same, universal", p1, Options{Archs: []string{"arm64", "x86_64"}}, true, "-O3", ""},
		{"1: the same, compact layout", p1c, Options{MinOpt: "3"}, true, "-O3", line35O3},
		{"1: -O3 line and a decoy -O0 string elsewhere", p1d, Options{MinOpt: "3"}, true, "-O3", line35O3},
		{"2: BoringSSL compiler: n/a is unknown, reported, not failed", boring, Options{}, true, "", "n/a"},
		{"2: LibreSSL information not available is unknown", libre, Options{}, true, "", "information not available"},
		{"2: AWS-LC n/a is unknown", awslc, Options{}, true, "", "n/a"},
		{"3: universal dylib without -O fails", p3, Options{}, false, "-O0", ""},
		{"3: a decoy -O3 elsewhere does not rescue it", p3d, Options{}, false, "-O0", lineNoO},
		{"-Os meets the default -minopt=2", os, Options{}, true, "-Os", ""},
		{"two slices of two releases fail", mixed, Options{}, false, "-O3", ""},
	}
}

func TestShapes(t *testing.T) {
	for _, s := range shapes(t) {
		t.Run(s.name, func(t *testing.T) {
			o := s.opts
			o.Path = s.path
			res, err := Check(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.OK != s.ok {
				t.Errorf("OK = %v, want %v; failures %q", res.OK, s.ok, res.Failures)
			}
			if len(res.Binaries) != 1 || len(res.Binaries[0].Slices) == 0 {
				t.Fatalf("binaries %+v", res.Binaries)
			}
			for _, sl := range res.Binaries[0].Slices {
				if sl.Opt != s.opt || s.compiler != "" && sl.Compiler != s.compiler {
					t.Errorf("%s: opt %q compiler %q; want %q %q", sl.Arch, sl.Opt, sl.Compiler, s.opt, s.compiler)
				}
			}
		})
	}
}
