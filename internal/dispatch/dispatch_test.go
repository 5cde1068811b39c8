package dispatch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/osslbuild/osslbuild/internal/osslver"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestKnownMatchesSources scans the real release tarballs and holds the
// committed lists to what their sources say.
func TestKnownMatchesSources(t *testing.T) {
	for _, v := range []string{"4.0.2", "3.5.7", "3.0.20"} {
		t.Run(v, func(t *testing.T) {
			tree := testfixture.UnpackedRelease(t, v, "*.c") // all Scan reads
			got, err := Scan(os.DirFS(tree))
			if err != nil {
				t.Fatal(err)
			}
			series, _ := osslver.SeriesOf(v)
			if want := known[series]; !slices.Equal(got, want) {
				t.Errorf("OpenSSL %s: Scan gives\n%v\nthe committed list is\n%v", v, got, want)
			}
		})
	}
}

func TestScanForms(t *testing.T) {
	tree := fstest.MapFS{
		"crypto/a.c": {Data: []byte(`#define OPENSSL_TARGET_AVX2 OPENSSL_TARGET_REGION("avx2")
static int plain(int x)
{
    return x;
}
OPENSSL_TARGET_AVX2
static inline int in_region(int x)
{
    if (x)
        return 1;
    return 0;
}
OPENSSL_UNTARGET_AVX2
int after(void);
__attribute__((target("sse4.2"))) int attributed(const char *s)
{
    return s[0];
}
#pragma GCC push_options
#pragma GCC target("bmi2")
unsigned long
pragma_fn(unsigned long a, unsigned long b)
{
    return a;
}
#pragma GCC pop_options
int outside(void)
{
    return 0;
}
`)},
		"test/skip.c": {Data: []byte("OPENSSL_TARGET_AVX2\nint test_only(void)\n{\n}\n")},
	}
	got, err := Scan(tree)
	if err != nil {
		t.Fatal(err)
	}
	want := []Func{
		{Name: "in_region", File: "crypto/a.c", Line: 7, Target: "avx2"},
		{Name: "attributed", File: "crypto/a.c", Line: 15, Target: "sse4.2"},
		{Name: "pragma_fn", File: "crypto/a.c", Line: 22, Target: "bmi2"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Scan = %+v\nwant %+v", got, want)
	}
}

func TestKnown(t *testing.T) {
	for _, tc := range []struct {
		version, name string
		has           bool
	}{
		{"4.0.2", "OpenSSL 4.0 (known)", true},
		{"3.5.7", "OpenSSL 3.5 (known)", false},
		{"3.7.0", "every known release (no list for 3.7.0)", true},
		{"", "every known release (no version string)", true},
	} {
		l := Known(tc.version)
		_, has := l.Find("_encode_base64_avx2")
		_, clone := l.Find("insert_nl_gt16.isra.0")
		if l.Name != tc.name || has != tc.has || clone != tc.has {
			t.Errorf("Known(%q) = %q, has %v; want %q, %v", tc.version, l.Name, has, tc.name, tc.has)
		}
	}
	_ = filepath.Join
}
