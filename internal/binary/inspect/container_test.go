package inspect

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"
)

func testZip(t testing.TB, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"a/x.so", "a/", "b.txt"} {
		data, ok := files[name]
		if !ok {
			continue
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, data)
	}
	zw.Close()
	return buf.Bytes()
}

func testTgz(t testing.TB, files map[string]string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Name: "top/", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "top/link", Typeflag: tar.TypeSymlink, Linkname: "x"})
	for _, name := range []string{"top/lib/x.a", "top/manifest.json"} {
		if data, ok := files[name]; ok {
			tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))})
			io.WriteString(tw, data)
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// collect reads up to n bytes of every member, as check reads magic.
func collect(n int) (WalkFunc, *[]string) {
	var got []string
	return func(m Member, r io.Reader) error {
		b := make([]byte, n)
		k, _ := io.ReadFull(r, b)
		if m.Type != "" {
			got = append(got, m.Name+" ("+m.Type+")")
			return nil
		}
		got = append(got, m.Name+"="+string(b[:k]))
		return nil
	}, &got
}

func TestWalkContainers(t *testing.T) {
	z := testZip(t, map[string]string{"a/x.so": "!<arch>\nrest", "a/": "", "b.txt": "hello"})
	fn, got := collect(8)
	if err := WalkZip(context.Background(), "w.whl", bytes.NewReader(z), int64(len(z)), Limits{}, fn); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/x.so=!<arch>\n", "b.txt=hello"}; !equal(*got, want) {
		t.Errorf("zip members %q, want %q", *got, want)
	}
	// A symlink in a zip is offered as such, its target (the data) unread.
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	h := &zip.FileHeader{Name: "a/link"}
	h.SetMode(fs.ModeSymlink | 0o777)
	w, _ := zw.CreateHeader(h)
	io.WriteString(w, "/etc/hostname")
	zw.Close()
	fn, got = collect(8)
	if err := WalkZip(context.Background(), "l.whl", bytes.NewReader(zb.Bytes()), int64(zb.Len()), Limits{}, fn); err != nil || !equal(*got, []string{"a/link (symlink)"}) {
		t.Errorf("zip symlink: %v %q", err, *got)
	}
	g := testTgz(t, map[string]string{"top/lib/x.a": "!<arch>\nmore", "top/manifest.json": "{}"})
	fn, got = collect(100)
	if err := WalkTarGz(context.Background(), "a.tar.gz", bytes.NewReader(g), Limits{}, fn); err != nil {
		t.Fatal(err)
	}
	if want := []string{"top/link (symlink to x)", "top/lib/x.a=!<arch>\nmore", "top/manifest.json={}"}; !equal(*got, want) {
		t.Errorf("tar members %q, want %q", *got, want)
	}

	// Identify knows the containers, and Inspect refuses them as such.
	for _, tc := range []struct {
		data []byte
		f    Format
	}{{z, FormatZip}, {g, FormatGzip}, {[]byte("PK\x05\x06"), FormatZip}} {
		if f := Identify(tc.data[:min(8, len(tc.data))]); f != tc.f {
			t.Errorf("Identify = %s, want %s", f, tc.f)
		}
		_, err := InspectReader("c", bytes.NewReader(tc.data), int64(len(tc.data)))
		if !errors.Is(err, ErrContainer) || !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("InspectReader(%s) = %v, want ErrContainer", tc.f, err)
		}
	}

	// The callback's error stops the walk and comes back as is.
	stop := errors.New("stop")
	if err := WalkZip(context.Background(), "w", bytes.NewReader(z), int64(len(z)), Limits{}, func(Member, io.Reader) error { return stop }); err != stop {
		t.Errorf("zip: %v", err)
	}
	if err := WalkTarGz(context.Background(), "w", bytes.NewReader(g), Limits{}, func(Member, io.Reader) error { return stop }); err != stop {
		t.Errorf("tar: %v", err)
	}
	// Entry-count limits.
	if err := WalkZip(context.Background(), "w", bytes.NewReader(z), int64(len(z)), Limits{MaxMembers: 1}, fn); !errors.Is(err, ErrLimit) {
		t.Errorf("zip members limit: %v", err)
	}
	if err := WalkTarGz(context.Background(), "w", bytes.NewReader(g), Limits{MaxMembers: 2}, fn); !errors.Is(err, ErrLimit) {
		t.Errorf("tar members limit: %v", err)
	}
	// Cancellation.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WalkZip(ctx, "w", bytes.NewReader(z), int64(len(z)), Limits{}, fn); !errors.Is(err, context.Canceled) {
		t.Errorf("zip cancel: %v", err)
	}
	if err := WalkTarGz(ctx, "w", bytes.NewReader(g), Limits{}, fn); !errors.Is(err, context.Canceled) {
		t.Errorf("tar cancel: %v", err)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// withinLimits runs walk with a visitor that reads every member and fails
// t when a member, or all of them, gave more than lim allows (give or take
// the last 32 KiB read).
func withinLimits(t *testing.T, lim Limits, walk func(WalkFunc)) {
	t.Helper()
	var total int64
	walk(func(m Member, r io.Reader) error {
		n, err := io.Copy(io.Discard, r)
		total += n
		if n > lim.MaxMemberBytes+32<<10 {
			t.Fatalf("member %q gave %d bytes past the %d limit", m.Name, n, lim.MaxMemberBytes)
		}
		return err
	})
	if total > lim.MaxTotalBytes+32<<10 {
		t.Fatalf("%d bytes past the total limit", total)
	}
}

// Run with: go test ./internal/binary/inspect -run '^$' -fuzz '^FuzzWalkZip$' -fuzztime 60s
func FuzzWalkZip(f *testing.F) {
	f.Add(testZip(f, map[string]string{"a/x.so": "\xcf\xfa\xed\xfe rest", "b.txt": "hello"}))
	f.Add(testZip(f, map[string]string{"a/": ""}))
	f.Add([]byte("PK\x05\x06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	lim := Limits{MaxMemberBytes: 1 << 20, MaxTotalBytes: 4 << 20, MaxMembers: 1000}
	f.Fuzz(func(t *testing.T, data []byte) {
		withinLimits(t, lim, func(fn WalkFunc) {
			_ = WalkZip(context.Background(), "f.zip", bytes.NewReader(data), int64(len(data)), lim, fn)
		})
	})
}

// Run with: go test ./internal/binary/inspect -run '^$' -fuzz '^FuzzWalkTarGz$' -fuzztime 60s
func FuzzWalkTarGz(f *testing.F) {
	f.Add(testTgz(f, map[string]string{"top/lib/x.a": "!<arch>\nmore", "top/manifest.json": "{}"}))
	f.Add(testTgz(f, nil))
	lim := Limits{MaxMemberBytes: 1 << 20, MaxTotalBytes: 4 << 20, MaxMembers: 1000}
	f.Fuzz(func(t *testing.T, data []byte) {
		withinLimits(t, lim, func(fn WalkFunc) { _ = WalkTarGz(context.Background(), "f.tar.gz", bytes.NewReader(data), lim, fn) })
	})
}
