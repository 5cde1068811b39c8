package osslver

import (
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in     string
		ok     bool
		series string
	}{
		{"3.0.5", true, "3.0"},
		{"4.0.2", true, "4.0"},
		{"1.1.1w", true, "1.1.1"},
		{"0.9.8zh", true, "0.9.8"},
		{"3.0.0-alpha1", true, "3.0"},
		{"3.6.0-beta2", true, "3.6"},
		{"1.0.2k-fips", true, "1.0.2"},
		{"3.0.5+quic", true, "3.0"},
		{"0.0.0", true, "0.0.0"},
		{"1.1.1zzz", false, ""}, // no release has three letters
		{"01.1.1", false, ""},   // leading zero
		{"3.00.1", false, ""},
		{"3.0", false, ""},
		{"3.0.5.1", false, ""},
		{"v3.0.5", false, ""},
		{"3.0.5A", false, ""},
		{"3.0.5-", false, ""},
		{"3.0.5 ", false, ""},
		{"1234567.0.0", false, ""},
		{"", false, ""},
	} {
		v, err := Parse(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("Parse(%q): err %v, want ok %v", tc.in, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		if v.String() != tc.in || v.Series() != tc.series {
			t.Errorf("Parse(%q): String %q Series %q, want %q %q", tc.in, v, v.Series(), tc.in, tc.series)
		}
	}
}

func TestParseRelease(t *testing.T) {
	for in, ok := range map[string]bool{"3.0.5": true, "0.9.8zh": true, "3.0.0-alpha1": false, "3.0.5+quic": false, "1.0.2k-fips": false} {
		if _, err := ParseRelease(in); (err == nil) != ok {
			t.Errorf("ParseRelease(%q): err %v, want ok %v", in, err, ok)
		}
	}
}

func TestCompare(t *testing.T) {
	// Each is later than the one before it.
	order := []string{
		"0.9.7-beta3", "0.9.7", "0.9.8", "0.9.8a", "0.9.8z", "0.9.8za", "0.9.8zh",
		"1.1.1", "1.1.1t", "1.1.1w",
		"3.0.0-alpha1", "3.0.0-alpha2", "3.0.0-alpha10", "3.0.0-beta1", "3.0.0-beta2", "3.0.0",
		"3.0.5", "3.0.10", "3.10.0", "10.0.0",
	}
	for i, a := range order {
		for j, b := range order {
			va, vb := must(t, a), must(t, b)
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := Compare(va, vb); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
	}
	if Compare(must(t, "3.0.5+quic"), must(t, "3.0.5")) != 0 {
		t.Error("a build suffix ordered the version")
	}
}

// Pairs the advisory table relies on, kept from advisory's own test.
func TestComparePairs(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.1.1t", "1.1.1zj", -1}, // letters by length first: z, then za ... zj
		{"1.1.1y", "1.1.1za", -1},
		{"1.1.1z", "1.1.1za", -1},
		{"1.1.1zb", "1.1.1za", 1},
		{"1.1.1", "1.1.1a", -1},
		{"1.0.2zs", "1.1.1", -1},
		{"0.9.7-beta3", "0.9.7", -1}, // a pre-release before its release
		{"0.9.7", "0.9.7a", -1},
		{"3.0.9", "3.0.10", -1}, // numbers as numbers
		{"9.0.0", "10.0.0", -1},
		{"3.0.5+quic", "3.0.5", 0}, // the build suffix does not order
		{"3.6.0-alpha1", "3.6.0-beta1", -1},
		{"4.0.3", "4.0.3", 0},
	} {
		if got := Compare(must(t, tc.a), must(t, tc.b)); got != tc.want {
			t.Errorf("Compare(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"3.0.5", "1.1.1w", "0.9.8zh", "3.0.0-alpha1", "1.0.2k-fips+x.1", "3.0.0-beta01", "01.0.0"} {
		f.Add(s, "3.0.0-beta2")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		va, err := Parse(a)
		if err != nil {
			return
		}
		if va.String() != a {
			t.Fatalf("Parse(%q).String() = %q", a, va)
		}
		if again, err := Parse(va.String()); err != nil || again != va {
			t.Fatalf("Parse(%q) round trip: %+v, %v; want %+v", a, again, err, va)
		}
		vb, err := Parse(b)
		if err != nil {
			return
		}
		if x, y := Compare(va, vb), Compare(vb, va); x != -y {
			t.Fatalf("Compare(%q, %q) = %d, reversed %d", a, b, x, y)
		}
		if Compare(va, va) != 0 {
			t.Fatalf("Compare(%q, itself) != 0", a)
		}
	})
}

func must(t *testing.T, s string) Version {
	t.Helper()
	v, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
