package source

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/source/unpack"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// versionDatFor is VERSION.dat as 3.0 and later ship it.
func versionDatFor(major, minor, patch, pre string) string {
	return "MAJOR=" + major + "\nMINOR=" + minor + "\nPATCH=" + patch + "\nPRE_RELEASE_TAG=" + pre +
		"\nBUILD_METADATA=\nRELEASE_DATE=\"25 Aug 2026\"\nSHLIB_VERSION=" + major + "\n"
}

// opensslvFor is the part of a 1.1.1-style opensslv.h that states the
// version.
func opensslvFor(v string) string {
	return "#ifndef HEADER_OPENSSLV_H\n# define HEADER_OPENSSLV_H\n\n" +
		"# define OPENSSL_VERSION_NUMBER  0x1010117fL\n" +
		"# define OPENSSL_VERSION_TEXT    \"OpenSSL " + v + "  11 Sep 2023\"\n\n#endif\n"
}

func TestCheckIdentitySynthetic(t *testing.T) {
	good := versionDatFor("4", "0", "3", "")
	for _, tc := range []struct {
		name    string
		version string
		ms      []member
		// files are the version files a good tarball states; want are the
		// substrings a refusal must hold (with ErrIdentity unless notIdent).
		files    []string
		want     []string
		notIdent bool
	}{
		{name: "VERSION.dat", version: "4.0.3",
			ms:    []member{d("openssl-4.0.3/"), f("openssl-4.0.3/VERSION.dat", good), f("openssl-4.0.3/Configure", "#!perl\n")},
			files: []string{"openssl-4.0.3/VERSION.dat"}},
		{name: "git archive global header first", version: "4.0.3",
			ms:    []member{globalHeader(), d("openssl-4.0.3/"), f("openssl-4.0.3/VERSION.dat", good)},
			files: []string{"openssl-4.0.3/VERSION.dat"}},
		{name: "no directory members, ./ prefix", version: "4.0.3",
			ms:    []member{f("./openssl-4.0.3/VERSION.dat", good)},
			files: []string{"openssl-4.0.3/VERSION.dat"}},
		{name: "opensslv.h only", version: "1.1.1w",
			ms:    []member{d("openssl-1.1.1w/"), f("openssl-1.1.1w/include/openssl/opensslv.h", opensslvFor("1.1.1w"))},
			files: []string{"openssl-1.1.1w/include/openssl/opensslv.h"}},
		{name: "1.0.2 opensslv.h with its fips twin", version: "1.0.2u",
			ms: []member{d("openssl-1.0.2u/"), f("openssl-1.0.2u/include/openssl/opensslv.h",
				"# ifdef OPENSSL_FIPS\n#  define OPENSSL_VERSION_TEXT    \"OpenSSL 1.0.2u-fips  20 Dec 2019\"\n# else\n#  define OPENSSL_VERSION_TEXT    \"OpenSSL 1.0.2u  20 Dec 2019\"\n# endif\n")},
			files: []string{"openssl-1.0.2u/include/openssl/opensslv.h"}},
		{name: "both files agree", version: "3.0.21",
			ms: []member{d("openssl-3.0.21/"), f("openssl-3.0.21/VERSION.dat", versionDatFor("3", "0", "21", "")),
				f("openssl-3.0.21/include/openssl/opensslv.h", "# define OPENSSL_VERSION_STR \"3.0.21\"\n# define OPENSSL_VERSION_TEXT \"OpenSSL 3.0.21 1 Sep 2026\"\n")},
			files: []string{"openssl-3.0.21/VERSION.dat", "openssl-3.0.21/include/openssl/opensslv.h"}},

		{name: "relabelled top directory", version: "4.0.3",
			ms:   []member{d("openssl-4.0.2/"), f("openssl-4.0.2/VERSION.dat", versionDatFor("4", "0", "2", ""))},
			want: []string{`member "openssl-4.0.2/"`, `top-level directory "openssl-4.0.2/", want "openssl-4.0.3/"`}},
		{name: "renamed directory, old VERSION.dat", version: "4.0.3",
			ms:   []member{d("openssl-4.0.3/"), f("openssl-4.0.3/VERSION.dat", versionDatFor("4", "0", "2", ""))},
			want: []string{`member "openssl-4.0.3/VERSION.dat"`, "states version 4.0.2 (MAJOR=4 MINOR=0 PATCH=2), want 4.0.3"}},
		{name: "pre-release", version: "4.0.3",
			ms:   []member{d("openssl-4.0.3/"), f("openssl-4.0.3/VERSION.dat", versionDatFor("4", "0", "3", "alpha1"))},
			want: []string{"states version 4.0.3-alpha1 (MAJOR=4 MINOR=0 PATCH=3 PRE_RELEASE_TAG=alpha1), want 4.0.3"}},
		{name: "second top directory later", version: "4.0.3",
			ms:   []member{d("openssl-4.0.3/"), f("openssl-4.0.3/VERSION.dat", good), f("openssl-4.0.2/VERSION.dat", versionDatFor("4", "0", "2", ""))},
			want: []string{`member "openssl-4.0.2/VERSION.dat"`, `want "openssl-4.0.3/"`}},
		{name: "no version file", version: "4.0.3",
			ms:   []member{d("openssl-4.0.3/"), f("openssl-4.0.3/Configure", "#!perl\n"), f("openssl-4.0.3/include/openssl/opensslv.h.in", "{- $config{full_version} -}")},
			want: []string{"no version file: want openssl-4.0.3/VERSION.dat or openssl-4.0.3/include/openssl/opensslv.h stating 4.0.3"}},
		{name: "empty archive", version: "4.0.3", ms: nil, want: []string{"no members, want openssl-4.0.3/"}},
		{name: "VERSION.dat without PATCH", version: "4.0.3",
			ms:   []member{d("openssl-4.0.3/"), f("openssl-4.0.3/VERSION.dat", "MAJOR=4\nMINOR=0\n")},
			want: []string{`member "openssl-4.0.3/VERSION.dat"`, "no PATCH= line"}},
		{name: "VERSION.dat with two PATCH lines", version: "4.0.3",
			ms:   []member{d("openssl-4.0.3/"), f("openssl-4.0.3/VERSION.dat", good+"PATCH=2\n")},
			want: []string{"PATCH= appears twice"}},
		{name: "VERSION.dat twice", version: "4.0.3",
			ms:   []member{d("openssl-4.0.3/"), f("openssl-4.0.3/VERSION.dat", good), f("openssl-4.0.3/VERSION.dat", versionDatFor("4", "0", "2", ""))},
			want: []string{"appears twice"}},
		{name: "VERSION.dat a symlink", version: "4.0.3",
			ms:   []member{d("openssl-4.0.3/"), symlinkMember("openssl-4.0.3/VERSION.dat", "other")},
			want: []string{`member "openssl-4.0.3/VERSION.dat"`, "not a regular file"}},
		{name: "VERSION.dat too big", version: "4.0.3",
			ms:   []member{d("openssl-4.0.3/"), f("openssl-4.0.3/VERSION.dat", good+strings.Repeat("#\n", 40<<10))},
			want: []string{"more than the 65536 a version file may have"}},
		{name: "opensslv.h of another release", version: "1.1.1w",
			ms:   []member{d("openssl-1.1.1w/"), f("openssl-1.1.1w/include/openssl/opensslv.h", opensslvFor("1.1.1v"))},
			want: []string{`member "openssl-1.1.1w/include/openssl/opensslv.h"`, `states version 1.1.1v (OPENSSL_VERSION_TEXT "OpenSSL 1.1.1v  11 Sep 2023"), want 1.1.1w`}},
		{name: "opensslv.h without a version", version: "1.1.1w",
			ms:   []member{d("openssl-1.1.1w/"), f("openssl-1.1.1w/include/openssl/opensslv.h", "/* nothing */\n")},
			want: []string{"no #define OPENSSL_VERSION_TEXT or OPENSSL_VERSION_STR"}},
		{name: "files disagree", version: "3.0.21",
			ms: []member{d("openssl-3.0.21/"), f("openssl-3.0.21/VERSION.dat", versionDatFor("3", "0", "21", "")),
				f("openssl-3.0.21/include/openssl/opensslv.h", "# define OPENSSL_VERSION_STR \"3.0.20\"\n")},
			want: []string{`member "openssl-3.0.21/include/openssl/opensslv.h"`, `states version 3.0.20 (OPENSSL_VERSION_STR "3.0.20"), want 3.0.21`}},
		{name: "traversal", version: "4.0.3",
			ms:   []member{d("openssl-4.0.3/"), f("openssl-4.0.3/../VERSION.dat", good)},
			want: []string{`member "openssl-4.0.3/../VERSION.dat"`, "unsafe path"}, notIdent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := checkIdentity(context.Background(), bytes.NewReader(tarGz(t, tc.ms...)), "x.tar.gz", tc.version, identityLimits)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if id.TopDir != "openssl-"+tc.version || id.Version != tc.version || !slices.Equal(id.VersionFiles, tc.files) {
					t.Errorf("identity %+v, want top openssl-%s, files %v", id, tc.version, tc.files)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted as %s: %+v", tc.version, id)
			}
			if errors.Is(err, ErrIdentity) == tc.notIdent {
				t.Errorf("errors.Is(err, ErrIdentity) = %v: %v", !tc.notIdent, err)
			}
			for _, w := range append([]string{"x.tar.gz: "}, tc.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
}

// TestCheckIdentityBounds: the reader is bounded in members and in
// decompressed bytes, refuses what is not a whole gzip stream, and stops when
// its context ends.
func TestCheckIdentityBounds(t *testing.T) {
	good := tarGz(t, d("openssl-4.0.3/"), f("openssl-4.0.3/VERSION.dat", versionDatFor("4", "0", "3", "")),
		f("openssl-4.0.3/big", strings.Repeat("x", 100<<10)))
	check := func(ctx context.Context, data []byte, lim inspect.Limits) error {
		_, err := checkIdentity(ctx, bytes.NewReader(data), "x.tar.gz", "4.0.3", lim)
		return err
	}
	if err := check(context.Background(), good, identityLimits); err != nil {
		t.Fatalf("good tarball: %v", err)
	}
	lim := identityLimits
	lim.MaxMembers = 2
	if err := check(context.Background(), good, lim); !errors.Is(err, unpack.ErrTooLarge) || !strings.Contains(err.Error(), "x.tar.gz(openssl-4.0.3/big): archive exceeds a safety limit: more than 2 entries") {
		t.Errorf("entries: %v", err)
	}
	// Global headers count: each is up to 1 MiB read for nothing.
	many := tarGz(t, globalHeader(), globalHeader(), globalHeader(), d("openssl-4.0.3/"))
	if err := check(context.Background(), many, lim); !errors.Is(err, unpack.ErrTooLarge) || !strings.Contains(err.Error(), "x.tar.gz(pax_global_header): archive exceeds a safety limit: more than 2 entries") {
		t.Errorf("global headers: %v", err)
	}
	lim = identityLimits
	lim.MaxTotalBytes = 50 << 10
	if err := check(context.Background(), good, lim); !errors.Is(err, unpack.ErrTooLarge) || !strings.Contains(err.Error(), "archive stream is longer than 51200 bytes") {
		t.Errorf("stream: %v", err)
	}
	if err := check(context.Background(), good[:len(good)-4], identityLimits); err == nil {
		t.Error("truncated gzip trailer accepted")
	}
	if err := check(context.Background(), []byte("<html>not found</html>"), identityLimits); err == nil || !strings.Contains(err.Error(), "x.tar.gz: inspect x.tar.gz: at offset 0: gzip: invalid header") {
		t.Errorf("HTML: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := check(ctx, good, identityLimits); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := CheckIdentity(context.Background(), filepath.Join(t.TempDir(), "missing.tar.gz"), "4.0.3"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestCheckIdentityReal checks the real releases, each for its own version
// (accepted: these state it in VERSION.dat; none of them ships opensslv.h,
// which 3.0 and later generate at build time) and for the next patch release
// (refused at the top-level directory, the first member).
func TestCheckIdentityReal(t *testing.T) {
	for v, next := range map[string]string{"4.0.2": "4.0.3", "3.5.7": "3.5.8", "3.0.20": "3.0.21"} {
		t.Run(v, func(t *testing.T) {
			fx := testfixture.Get(t, v)
			id, err := CheckIdentity(context.Background(), fx.Tarball, v)
			if err != nil {
				t.Fatal(err)
			}
			want := Identity{TopDir: "openssl-" + v, VersionFiles: []string{"openssl-" + v + "/VERSION.dat"}, Version: v}
			if id.TopDir != want.TopDir || id.Version != want.Version || !slices.Equal(id.VersionFiles, want.VersionFiles) {
				t.Errorf("identity %+v, want %+v", id, want)
			}
			_, err = CheckIdentity(context.Background(), fx.Tarball, next)
			if !errors.Is(err, ErrIdentity) || !strings.Contains(err.Error(), `openssl-`+v+`.tar.gz: member "openssl-`+v+`/": `) ||
				!strings.Contains(err.Error(), `top-level directory "openssl-`+v+`/", want "openssl-`+next+`/"`) {
				t.Errorf("as %s: %v", next, err)
			}
		})
	}
}

// TestCheckIdentityRenamedReal renames the real 3.0.20 tree to
// openssl-3.0.21/ (the top directory then agrees with the name): its
// VERSION.dat still states 3.0.20, and that is what is refused.
func TestCheckIdentityRenamedReal(t *testing.T) {
	fx := testfixture.Get(t, "3.0.20")
	in, err := os.Open(fx.Tarball)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		h.Name = strings.Replace(h.Name, "openssl-3.0.20", "openssl-3.0.21", 1)
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, tr); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	zw.Close()
	_, err = checkIdentity(context.Background(), &buf, "openssl-3.0.21.tar.gz", "3.0.21", identityLimits)
	want := `openssl-3.0.21.tar.gz: member "openssl-3.0.21/VERSION.dat": not the release it is named as: states version 3.0.20 (MAJOR=3 MINOR=0 PATCH=20), want 3.0.21`
	if !errors.Is(err, ErrIdentity) || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}
