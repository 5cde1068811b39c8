package inspect_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// signedDylib links a small arm64 dylib with ld64.lld-14, which signs
// arm64 output ad hoc as Apple's linker does, and returns its bytes;
// extra is more C for it.
func signedDylib(t *testing.T, arch, minOS string, extra ...string) []byte {
	t.Helper()
	testfixture.Tools(t, "clang-14", "ld64.lld-14")
	stubs, _ := filepath.Glob(filepath.Join(toolchain.HeadersDir(), "darwin", "libSystem.11.tbd"))
	if len(stubs) == 0 {
		testfixture.Missing(t, "no libSystem.11.tbd under %s (scripts/setup-cross.sh)", toolchain.HeadersDir())
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "a.c")
	// Several pages of code, so a flip lands in a page of its own.
	code := "int foo(int x){return x*3;}\nint bar(void){return foo(2);}\n"
	for i := 0; i < 400; i++ {
		code += "int f" + strconv.Itoa(i) + "(int x){return x*" + strconv.Itoa(i+7) + "+foo(x);}\n"
	}
	code += strings.Join(extra, "")
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	obj, out := filepath.Join(dir, "a.o"), filepath.Join(dir, "liba.1.dylib")
	for _, argv := range [][]string{
		{"clang-14", "-target", arch + "-apple-macos" + minOS, "-O2", "-c", src, "-o", obj},
		{"ld64.lld-14", "-arch", arch, "-platform_version", "macos", minOS, "11.0", "-dylib", "-install_name", "/opt/x/lib/liba.1.dylib", "-o", out, obj, stubs[0]},
	} {
		if b, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, b)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func signature(t *testing.T, b []byte) (*inspect.MachO, *inspect.CodeSignature, error) {
	t.Helper()
	f, err := inspect.InspectBytes("signature", b)
	if err != nil {
		t.Fatal(err)
	}
	o := f.Slices[0].Objects[0]
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	return o.MachO, o.Signature, o.SignatureErr
}

// TestCodeSignature: ld64.lld's ad-hoc signature of a real arm64 dylib
// verifies; a byte flipped in __TEXT, or in the code directory's hashes,
// makes it stale (naming the page); Resign makes it hold again, and on an
// image it already holds for changes no byte (the hashes are the
// linker's); an x86_64 dylib carries none.
func TestCodeSignature(t *testing.T) {
	orig := signedDylib(t, "arm64", "11.0")
	m, cs, err := signature(t, orig)
	if err != nil || cs == nil {
		t.Fatalf("signature %+v, %v", cs, err)
	}
	if !cs.Valid() || cs.Kind() != "ad hoc (linker-signed)" || cs.HashType != "sha256" || cs.PageSize != 4096 || cs.Identifier != "liba.1.dylib" {
		t.Errorf("ld64.lld's signature: %+v (%s)", cs, cs.Kind())
	}
	if m.ID == nil || m.ID.Name != "/opt/x/lib/liba.1.dylib" || !slices.ContainsFunc(m.Loads, func(d inspect.Dylib) bool { return d.Name == "/usr/lib/libSystem.B.dylib" }) {
		t.Errorf("install name %+v, loads %+v", m.ID, m.Loads)
	}

	var text inspect.Section
	for _, s := range m.Sections {
		if s.Name == "__text" {
			text = s
		}
	}
	tampered := bytes.Clone(orig)
	at := int(text.Offset) + int(text.Size)/2
	tampered[at] ^= 0x01
	if _, cs, err := signature(t, tampered); err != nil || cs.Valid() || !slices.Contains(cs.Stale, at/4096) {
		t.Errorf("a byte flipped in __TEXT at %d: %+v, %v", at, cs, err)
	}
	again := bytes.Clone(tampered)
	if err := inspect.Resign(again, 0, m); err != nil {
		t.Fatal(err)
	}
	if _, cs, err := signature(t, again); err != nil || !cs.Valid() {
		t.Errorf("after Resign: %+v, %v", cs, err)
	}
	same := bytes.Clone(orig)
	if err := inspect.Resign(same, 0, m); err != nil || !bytes.Equal(same, orig) {
		t.Errorf("Resign of a valid image changed it (%v)", err)
	}

	// A flip inside the code directory's first page hash.
	cd := bytes.Clone(orig)
	slot := bytes.Index(cd[m.CodeSignature.Offset:], []byte{0xfa, 0xde, 0x0c, 0x02})
	hashOffset := int(cd[int(m.CodeSignature.Offset)+slot+16])<<24 | int(cd[int(m.CodeSignature.Offset)+slot+17])<<16 | int(cd[int(m.CodeSignature.Offset)+slot+18])<<8 | int(cd[int(m.CodeSignature.Offset)+slot+19])
	cd[int(m.CodeSignature.Offset)+slot+hashOffset] ^= 0x80
	if _, cs, err := signature(t, cd); err != nil || cs.Valid() || !slices.Contains(cs.Stale, 0) {
		t.Errorf("a byte flipped in the code directory's hashes: %+v, %v", cs, err)
	}
	// A flip in its magic: malformed.
	mag := bytes.Clone(orig)
	mag[int(m.CodeSignature.Offset)+slot] ^= 0xff
	if _, _, err := signature(t, mag); !errors.Is(err, inspect.ErrSignature) {
		t.Errorf("a broken code directory magic: %v", err)
	}

	// llvm-install-name-tool-14 re-signs what it rewrites.
	if _, err := exec.LookPath("llvm-install-name-tool-14"); err == nil {
		p := filepath.Join(t.TempDir(), "liba.1.dylib")
		os.WriteFile(p, orig, 0o755)
		if b, err := exec.Command("llvm-install-name-tool-14", "-id", "@rpath/liba.1.dylib", p).CombinedOutput(); err != nil {
			t.Fatalf("llvm-install-name-tool-14: %v\n%s", err, b)
		}
		b, _ := os.ReadFile(p)
		m2, cs, err := signature(t, b)
		if err != nil || !cs.Valid() || m2.ID.Name != "@rpath/liba.1.dylib" {
			t.Errorf("after llvm-install-name-tool-14 -id: %+v %+v, %v", m2.ID, cs, err)
		}
	}

	x86 := signedDylib(t, "x86_64", "10.12")
	if _, cs, err := signature(t, x86); cs != nil || err != nil {
		t.Errorf("x86_64 dylib signature %+v, %v: ld64.lld signs only arm64", cs, err)
	}
}

// TestCodeSignatureManyPages: an image of 3 MB (768 pages, hashed in
// runs on every CPU) reports each page flipped, in order, however the
// runs fell.
func TestCodeSignatureManyPages(t *testing.T) {
	orig := signedDylib(t, "arm64", "11.0", "const unsigned char big[3<<20] = {1, 2, 3};\nconst unsigned char *get(void){return big;}\n")
	_, cs, err := signature(t, orig)
	if err != nil || !cs.Valid() || cs.Pages < 768 {
		t.Fatalf("signature of %d bytes: %+v, %v", len(orig), cs, err)
	}
	tampered := bytes.Clone(orig)
	want := []int{1, 300, 301, cs.Pages - 2}
	for _, p := range slices.Backward(want) {
		tampered[p*4096+7] ^= 0x40
	}
	if _, cs, err := signature(t, tampered); err != nil || !slices.Equal(cs.Stale, want) {
		t.Errorf("pages %v flipped: stale %v, %v", want, cs.Stale, err)
	}
}

// withSignature replaces the code signature of the thin image b (whose
// LC_CODE_SIGNATURE is m's) by sig, as a forger re-signing ad hoc would:
// the image is cut where its signature started, sig appended, the
// command's datasize set to sig's, and the page hashes of the code
// directory the index's first entry names computed again (datasize lies
// in page 0).
func withSignature(t *testing.T, b []byte, m *inspect.MachO, sig []byte) []byte {
	t.Helper()
	start := int(m.CodeSignature.Offset)
	out := append(bytes.Clone(b[:start]), sig...)
	ncmds := binary.LittleEndian.Uint32(out[16:])
	found := false
	for i, off := uint32(0), 32; i < ncmds && !found; i++ {
		cmd, size := binary.LittleEndian.Uint32(out[off:]), binary.LittleEndian.Uint32(out[off+4:])
		if cmd == 0x1d { // LC_CODE_SIGNATURE
			binary.LittleEndian.PutUint32(out[off+12:], uint32(len(sig)))
			found = true
		}
		off += int(size)
	}
	if !found {
		t.Fatal("no LC_CODE_SIGNATURE")
	}
	be := binary.BigEndian
	cd := start + int(be.Uint32(sig[16:]))
	hashes := cd + int(be.Uint32(out[cd+16:]))
	for i := 0; i*4096 < start; i++ {
		h := sha256.Sum256(out[i*4096 : min((i+1)*4096, start)])
		copy(out[hashes+32*i:], h[:])
	}
	return out
}

// superBlob lays out blobs (index type, blob) as a SuperBlob.
func superBlob(blobs ...[2][]byte) []byte {
	be := binary.BigEndian
	head := 12 + 8*len(blobs)
	sb := make([]byte, head)
	be.PutUint32(sb[0:], 0xfade0cc0)
	be.PutUint32(sb[8:], uint32(len(blobs)))
	for i, bl := range blobs {
		be.PutUint32(sb[12+8*i:], be.Uint32(bl[0]))
		be.PutUint32(sb[16+8*i:], uint32(len(sb)))
		sb = append(sb, bl[1]...)
	}
	be.PutUint32(sb[4:], uint32(len(sb)))
	return sb
}

func typ(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }

// TestCodeSignatureForged: signatures that keep every page hash valid but
// are not what macOS accepts are malformed: a code directory whose
// identifier offset lies outside it, or whose identifier is not
// NUL-terminated inside it; a SuperBlob with a second code directory
// where the requirements belong (its special-slot hash made to match);
// two code directories; a blob outside the signature. Each is ld64.lld's
// real signature of a real dylib, rewritten.
func TestCodeSignatureForged(t *testing.T) {
	orig := signedDylib(t, "arm64", "11.0")
	m, cs, err := signature(t, orig)
	if err != nil || !cs.Valid() {
		t.Fatalf("%+v, %v", cs, err)
	}
	be := binary.BigEndian
	sig := orig[m.CodeSignature.Offset : m.CodeSignature.Offset+m.CodeSignature.Count]
	cdAt := be.Uint32(sig[16:])
	cd := bytes.Clone(sig[cdAt : cdAt+be.Uint32(sig[cdAt+4:])])
	if be.Uint32(sig[8:]) != 1 || be.Uint32(cd) != 0xfade0c02 {
		t.Fatalf("ld64.lld's signature: %d blobs, magic %#x", be.Uint32(sig[8:]), be.Uint32(cd))
	}
	withIdent := func(off uint32) []byte {
		c := bytes.Clone(cd)
		be.PutUint32(c[20:], off)
		return c
	}
	// The identifier reaches the end of the directory: after the last
	// NUL in it, nothing is terminated.
	unterminated := uint32(bytes.LastIndexByte(cd, 0) + 1)

	// The code directory given two special slots, the requirements'
	// (-2) holding the hash of a second code directory, the original.
	twoSlots := func() []byte {
		hashOffset, nSpecial := be.Uint32(cd[16:]), be.Uint32(cd[24:])
		if nSpecial != 0 {
			t.Fatalf("ld64.lld wrote %d special slots", nSpecial)
		}
		h := sha256.Sum256(cd)
		special := append(bytes.Clone(h[:]), make([]byte, 32)...) // slot -2, slot -1
		c := append(append(bytes.Clone(cd[:hashOffset]), special...), cd[hashOffset:]...)
		be.PutUint32(c[4:], uint32(len(c)))
		be.PutUint32(c[16:], hashOffset+64)
		be.PutUint32(c[24:], 2)
		return c
	}()
	for _, tc := range []struct {
		name string
		sig  []byte
		want string // in the error; "" for a valid signature
	}{
		{"ld64.lld's, laid out again", superBlob([2][]byte{typ(0), cd}), ""},
		{"identifier offset past the directory", superBlob([2][]byte{typ(0), withIdent(uint32(len(cd)) + 100)}), "identifier offset"},
		{"identifier offset at the directory's end", superBlob([2][]byte{typ(0), withIdent(uint32(len(cd)))}), "identifier offset"},
		{"identifier offset inside the header", superBlob([2][]byte{typ(0), withIdent(8)}), "identifier offset 8"},
		{"identifier not terminated", superBlob([2][]byte{typ(0), withIdent(unterminated)}), "not NUL-terminated"},
		{"a second code directory where the requirements belong", superBlob([2][]byte{typ(0), twoSlots}, [2][]byte{typ(2), cd}),
			"blob type 0x2: magic 0xfade0c02, expected 0xfade0c01"},
		{"two code directories", superBlob([2][]byte{typ(0), cd}, [2][]byte{typ(0), cd}), "a second blob of type 0x0"},
		{"a code directory in an unknown slot", superBlob([2][]byte{typ(0), cd}, [2][]byte{typ(0x2000), cd}), "a code directory in a slot that holds none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := withSignature(t, orig, m, tc.sig)
			_, cs, err := signature(t, b)
			if tc.want == "" {
				if err != nil || !cs.Valid() || cs.Identifier != "liba.1.dylib" {
					t.Errorf("%+v, %v", cs, err)
				}
				return
			}
			if !errors.Is(err, inspect.ErrSignature) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("signature %+v, error %v: want ErrSignature with %q", cs, err, tc.want)
			}
		})
	}
	// A blob whose offset lies past the signature.
	b := withSignature(t, orig, m, superBlob([2][]byte{typ(0), cd}))
	be.PutUint32(b[m.CodeSignature.Offset+16:], 1<<20)
	if _, _, err := signature(t, b); !errors.Is(err, inspect.ErrSignature) || !strings.Contains(err.Error(), "outside the") {
		t.Errorf("a blob past the signature: %v", err)
	}
}
