package validate

import (
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/platform"
)

// TestHeaderRules pins the words of the object header rules, which the
// Mach-O and ELF object rules share (checker.header): each format's
// violation for a wrong format, architecture and file type, in a static
// library and in a shared one.
func TestHeaderRules(t *testing.T) {
	exp := Expect{Slice: platform.Slice{Arch: "arm64"}}
	obj := inspect.Object{Member: "m.o", Format: inspect.FormatUnknown, Magic: []byte("abcd")}
	for _, tt := range []struct {
		name   string
		dylib  bool
		rules  headerRules
		h      objectHeader
		rule   Rule
		want   string // Expected
		detail string
	}{
		{"macho wrong format", false, machoHeader, objectHeader{}, RuleFormat, "Mach-O object",
			"expected a Mach-O object, found an unrecognised file (first bytes 61626364)"},
		{"elf wrong format", false, elfHeader, objectHeader{}, RuleFormat, "ELF object",
			"expected an ELF object, found an unrecognised file (first bytes 61626364)"},
		{"macho cpu", false, machoHeader, objectHeader{"x86_64", "object", false, true, true}, RuleCPU, "arm64",
			"CPU type is x86_64, expected arm64"},
		{"elf cpu", false, elfHeader, objectHeader{"x86_64", "relocatable", false, true, true}, RuleCPU, "arm64",
			"ELF machine is x86_64, expected arm64"},
		{"macho member", false, machoHeader, objectHeader{"arm64", "dylib", true, false, true}, RuleFileType, "object",
			"Mach-O file type is dylib, expected object (MH_OBJECT)"},
		{"macho shared", true, machoHeader, objectHeader{"arm64", "object", false, true, true}, RuleFileType, "dylib",
			"Mach-O file type is object, expected dylib (MH_DYLIB)"},
		{"elf member", false, elfHeader, objectHeader{"arm64", "shared object", true, false, true}, RuleFileType, "relocatable",
			"ELF file type is shared object, expected relocatable (ET_REL)"},
		{"elf shared", true, elfHeader, objectHeader{"arm64", "relocatable", false, true, true}, RuleFileType, "shared object",
			"ELF file type is relocatable, expected shared object (ET_DYN)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &checker{lib: "libcrypto.a", static: !tt.dylib, dylib: tt.dylib}
			c.header("arm64", obj, exp, tt.rules, tt.h)
			if len(c.out) != 1 {
				t.Fatalf("%d violations, want 1: %+v", len(c.out), c.out)
			}
			if v := c.out[0]; v.Rule != tt.rule || v.Expected != tt.want || v.Detail != tt.detail || v.Member != "m.o" {
				t.Errorf("got %s %q %q, want %s %q %q", v.Rule, v.Expected, v.Detail, tt.rule, tt.want, tt.detail)
			}
		})
	}
	// An object of the expected format, architecture and type is silent.
	c := &checker{lib: "libcrypto.a", static: true}
	c.header("arm64", obj, exp, elfHeader, objectHeader{"aarch64", "relocatable", false, true, true})
	if len(c.out) != 0 {
		t.Errorf("a good header: %+v", c.out)
	}
}
