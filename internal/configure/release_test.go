package configure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// releaseLists holds what osslbuild reads of a real release tarball
// (4.0.2, 3.5.7, 3.0.20), as a stream, to what the release's own tools
// make of the recipe's darwin64-arm64-cc plan p once its Configure has run
// in dir (TestRealConfigureGate's run, shared rather than a Configure of
// its own: seconds of Perl, which a cache hit cannot spend): every object
// the configured Makefile puts into libcrypto.a and libssl.a is one
// Release.Object accepts, zlib's are not, and every symbol Release.Exports
// requires is one util/mkdef.pl, over the configdata.pm Configure wrote,
// exports for this configuration; leaving out the symbols of features
// Configure may disable costs few of them.
func releaseLists(t *testing.T, version, dir string, p *recipe.Plan) {
	t.Helper()
	fx := testfixture.Get(t, version)
	rel := p.Release
	files, names, err := source.Files(context.Background(), rel, fx.Tarball, ReleaseWants)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := ReadRelease(rel.FileName(), files, names)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lists.Encode())
	if got := hex.EncodeToString(sum[:]); Pinned[rel.SHA256] != got {
		t.Errorf("Pinned[%q] = %q, want %q (the lists read from the tarball)", rel.SHA256, Pinned[rel.SHA256], got)
	}
	if again, err := DecodeRelease(rel.FileName(), lists.Encode()); err != nil || !slices.Equal(again.Exports("libcrypto", nil), lists.Exports("libcrypto", nil)) {
		t.Errorf("the lists decoded again differ: %v", err)
	}

	mk, err := ReadMakefile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(mk.Objects) < 1000 {
		t.Fatalf("the configured Makefile lists %d objects of libcrypto.a and libssl.a", len(mk.Objects))
	}
	for _, o := range mk.Objects {
		if !lists.Object(path.Base(o)) {
			t.Errorf("the configured Makefile makes %s, which Release.Object refuses", o)
		}
	}
	for _, o := range []string{"zutil.o", "libcrypto-lib-zutil.o", "libcrypto-lib-deflate.o", "libcrypto-lib-aes_core.c", "aes_core.o"} {
		if lists.Object(o) {
			t.Errorf("Release.Object accepts %s", o)
		}
	}

	for _, lib := range []string{"libcrypto", "libssl"} {
		cmd := exec.Command("perl", "util/mkdef.pl", "--ordinals", "util/"+lib+".num", "--name", lib, "--OS", "linux")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("mkdef.pl %s: %v", lib, err)
		}
		var exported []string
		for _, l := range strings.Split(string(out), "\n") {
			if s, ok := strings.CutSuffix(strings.TrimSpace(l), ";"); ok && !strings.Contains(s, " ") {
				exported = append(exported, s)
			}
		}
		ours := lists.Exports(lib, p.Slice.Options)
		for _, s := range ours {
			if !slices.Contains(exported, s) {
				t.Errorf("%s: Release.Exports requires %s, which mkdef.pl does not export for this configuration", lib, s)
			}
		}
		t.Logf("%s: %d of the %d symbols mkdef.pl exports for this configuration required", lib, len(ours), len(exported))
		if len(ours) < len(exported)*9/10 {
			t.Errorf("%s: %d of %d symbols required: the features left out cost more than a tenth", lib, len(ours), len(exported))
		}
	}

	// An option turns its features' symbols off, and those of what it
	// cascades to (no-ec: ec2m, ecx, sm2, ...).
	for _, c := range []struct {
		option, gone, kept string
	}{
		{"no-deprecated", "AES_encrypt", "EVP_EncryptInit_ex"},
		{"no-ec", "BN_GF2m_add", "EVP_EncryptInit_ex"}, // EC2M, by the cascade from ec
		{"no-ocsp", "OCSP_REQUEST_new", "EVP_EncryptInit_ex"},
	} {
		with := lists.Exports("libcrypto", append(slices.Clone(p.Slice.Options), c.option))
		if slices.Contains(with, c.gone) || !slices.Contains(with, c.kept) {
			t.Errorf("with %s: %s required %v, %s required %v", c.option, c.gone, slices.Contains(with, c.gone), c.kept, slices.Contains(with, c.kept))
		}
	}
	// 3.x's Configure computes the engines "engine" disables (grep(/eng$/,
	// @disablables)): without it, only symbols no feature conditions.
	if version != "4.0.2" {
		with := lists.Exports("libcrypto", append(slices.Clone(p.Slice.Options), "no-engine"))
		if slices.Contains(with, "AES_encrypt") || !slices.Contains(with, "EVP_EncryptInit_ex") {
			t.Error("with no-engine: AES_encrypt required, or EVP_EncryptInit_ex not")
		}
	}
	if base := lists.Exports("libcrypto", p.Slice.Options); !slices.Contains(base, "AES_encrypt") || !slices.Contains(base, "BN_GF2m_add") || slices.Contains(base, "COMP_zlib") {
		t.Error("the recipe's own options: AES_encrypt or BN_GF2m_add left out, or COMP_zlib (no-comp) required")
	}
}

// TestReleaseExportsFollowConfigure: the features a configuration may
// lose, as a Configure laid out like OpenSSL's says (defaults, options
// under their new names, cascades, cascades its code decides), and a
// Configure laid out otherwise, of which nothing is known: only the
// symbols no feature conditions are required then.
func TestReleaseExportsFollowConfigure(t *testing.T) {
	num := []byte(strings.Join([]string{
		"PLAIN 1 4_0_0 EXIST::FUNCTION:",
		"RC5_x 2 4_0_0 EXIST::FUNCTION:RC5",
		"EC_x 3 4_0_0 EXIST::FUNCTION:EC",
		"GF2m_x 4 4_0_0 EXIST::FUNCTION:EC2M",
		"UI_x 5 4_0_0 EXIST::FUNCTION:UI_CONSOLE",
		"OLD_x 6 4_0_0 EXIST::FUNCTION:DEPRECATEDIN_3_0",
		"VMS_x 7 4_0_0 EXIST:VMS:FUNCTION:",
		"NOTVMS_x 8 4_0_0 EXIST:!VMS:FUNCTION:",
		"GONE_x 9 4_0_0 NOEXIST::FUNCTION:",
		"SSE_x 10 4_0_0 EXIST::FUNCTION:SSE2",
	}, "\n"))
	conf := []byte(`
my %deprecated_disablables = (
    "ui" => "ui-console",
    "ssl2" => undef,
    );
our %disabled = ( # "what"         => "comment"
                  "rc5"                 => "default",
                );
my @disable_cascades = (
    "ec"                => [ qw(ec2m ecx) ],
    sub { $config{processor} eq "386" }
                        => [ "sse2" ],
    );
`)
	read := func(conf []byte) *Release {
		r, err := ReadRelease("openssl-test.tar.gz", map[string][]byte{"util/libcrypto.num": num, "util/libssl.num": nil, "Configure": conf}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := read(conf)
	for _, c := range []struct {
		options []string
		want    string
	}{
		{nil, "PLAIN EC_x GF2m_x UI_x OLD_x NOTVMS_x"},
		{[]string{"no-ec"}, "PLAIN UI_x OLD_x NOTVMS_x"},
		{[]string{"disable-ui"}, "PLAIN EC_x GF2m_x OLD_x NOTVMS_x"},
		{[]string{"no-deprecated"}, "PLAIN EC_x GF2m_x UI_x NOTVMS_x"},
		{[]string{"enable-rc5"}, "PLAIN EC_x GF2m_x UI_x OLD_x NOTVMS_x"},
	} {
		if got := strings.Join(r.Exports("libcrypto", c.options), " "); got != c.want {
			t.Errorf("options %q: exports %s, want %s", c.options, got, c.want)
		}
	}
	if got := strings.Join(read([]byte("#! perl\n")).Exports("libcrypto", nil), " "); got != "PLAIN NOTVMS_x" {
		t.Errorf("a Configure without OpenSSL's tables: exports %s, want only the unconditioned PLAIN NOTVMS_x", got)
	}
}
