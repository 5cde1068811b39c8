package inspect

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
)

// A Mach-O code signature (LC_CODE_SIGNATURE) is a SuperBlob of big-endian
// blobs, the one that matters here being the CodeDirectory: one hash per
// page of the file up to codeLimit (where the signature starts), plus
// hashes of the other blobs in "special" slots before them. macOS refuses
// to map arm64 code whose page hashes do not match: an image changed after
// it was signed (an install-name rewrite, a stray byte) must be signed
// again. Only the hashes are checked here; a certificate's CMS signature
// (Developer ID) is not (no key of Apple's is pinned here).
const (
	csMagicSuperBlob     = 0xfade0cc0
	csMagicCodeDirectory = 0xfade0c02
	csSlotCodeDirectory  = 0
	csSlotRequirements   = 2
	csSlotEntitlements   = 5
	csSlotDEREntitlement = 7
	csSlotCMS            = 0x10000

	csHashSHA1   = 1
	csHashSHA256 = 2

	// CSAdhoc and CSLinkerSigned are CodeDirectory flags: signed without
	// an identity, and signed by the linker (ld64.lld, ld64).
	CSAdhoc        = 0x2
	CSLinkerSigned = 0x20000
)

// ErrSignature marks a code signature that does not hold: missing where
// one is required, malformed, or with hashes the image does not match.
var ErrSignature = errors.New("code signature")

// CodeSignature is what an image's code signature says, and whether the
// image still matches it.
type CodeSignature struct {
	Identifier string
	Flags      uint32 // CSAdhoc, CSLinkerSigned, ...
	HashType   string // "sha256", "sha1"
	PageSize   int
	Pages      int
	// Stale lists the pages whose hash no longer matches; StaleSpecial
	// the special slots (-2 requirements, -5 entitlements) likewise.
	Stale        []int
	StaleSpecial []int
	// Certificate reports a CMS signature blob (an identity's, not ad
	// hoc); its certificate chain is not verified here.
	Certificate bool
}

// Valid reports whether every hash matches.
func (c *CodeSignature) Valid() bool { return len(c.Stale) == 0 && len(c.StaleSpecial) == 0 }

// Kind is "ad hoc", "ad hoc (linker-signed)" or "certificate".
func (c *CodeSignature) Kind() string {
	switch {
	case c.Certificate:
		return "certificate"
	case c.Flags&CSLinkerSigned != 0:
		return "ad hoc (linker-signed)"
	}
	return "ad hoc"
}

// codeDirectory is a parsed CodeDirectory and where it lies.
type codeDirectory struct {
	at                     int64 // offset of the blob in the slice
	length                 int64
	hashOffset, identOff   int64
	nSpecial, nCode        int
	codeLimit              int64
	hashSize               int
	hashType, pageSizeLog2 uint8
	flags                  uint32
	ident                  string           // the identifier, NUL-terminated inside the directory
	blobs                  map[uint32]int64 // the SuperBlob's index: each blob's offset by its type
}

// Blob magics by the SuperBlob index type that holds them: a blob of
// another kind in a slot (a second code directory where the requirements
// belong) is malformed, whatever its special slot's hash says.
var csSlotMagic = map[uint32]uint32{
	csSlotCodeDirectory:  csMagicCodeDirectory,
	csSlotRequirements:   0xfade0c01, // CSMAGIC_REQUIREMENTS
	csSlotEntitlements:   0xfade7171, // CSMAGIC_EMBEDDED_ENTITLEMENTS
	csSlotDEREntitlement: 0xfade7172, // CSMAGIC_EMBEDDED_DER_ENTITLEMENTS
	csSlotCMS:            0xfade0b01, // CSMAGIC_BLOBWRAPPER
}

// csSlotAlternateCD are the slots of alternate code directories (another
// hash type beside the first), which are code directories too.
const csSlotAlternateCD, csSlotAlternateCDEnd = 0x1000, 0x1005

// csCodeDirectoryHeader is the size of the CodeDirectory fields read here
// (magic to pageSize and spare2); an identifier starts after them.
const csCodeDirectoryHeader = 44

// readCodeSignature reads and checks the code signature of the thin
// Mach-O image m, which lies at off in r (0 for a thin file, the slice's
// offset in a fat one). It returns nil and no error for an image without
// LC_CODE_SIGNATURE; a malformed signature is an error wrapping
// ErrSignature, naming what is wrong. data is the image's bytes when they
// are in memory (from off): its pages are hashed where they lie, not
// copied (a tenth of check's time on a 300 MB image).
func readCodeSignature(r io.ReaderAt, off int64, m *MachO, data []byte) (*CodeSignature, error) {
	if !m.CodeSignature.Present {
		return nil, nil
	}
	blob, cd, err := readCodeDirectory(r, off, m)
	if err != nil {
		return nil, err
	}
	newHash, name := hasher(cd.hashType)
	cs := &CodeSignature{Identifier: cd.ident, Flags: cd.flags, HashType: name, PageSize: 1 << cd.pageSizeLog2, Pages: cd.nCode}
	// The pages in runs, on every CPU: hashing them was a sixth of
	// check's time on a 300 MB image. The runs' stale pages join in order.
	runs := (cd.nCode + pagesPerRun - 1) / pagesPerRun
	stale := make([][]int, runs)
	errs := make([]error, runs)
	type pageHasher struct {
		page []byte
		h    hash.Hash
	}
	OnCPUs(runs, func() pageHasher { return pageHasher{make([]byte, cs.PageSize), newHash()} }, func(ph pageHasher, k int) {
		page, h := ph.page, ph.h
		for i := k * pagesPerRun; i < min((k+1)*pagesPerRun, cd.nCode); i++ {
			start := int64(i) * int64(cs.PageSize)
			n := min(int64(cs.PageSize), cd.codeLimit-start)
			p := page[:n]
			if off+start+n <= int64(len(data)) {
				p = data[off+start : off+start+n]
			} else if _, err := r.ReadAt(p, off+start); err != nil {
				errs[k] = fmt.Errorf("%w: read page %d: %v", ErrSignature, i, err)
				return
			}
			h.Reset()
			h.Write(p)
			slot := blob[cd.at+cd.hashOffset+int64(i*cd.hashSize) : cd.at+cd.hashOffset+int64((i+1)*cd.hashSize)]
			if string(h.Sum(nil)[:cd.hashSize]) != string(slot) {
				stale[k] = append(stale[k], i)
			}
		}
	})
	for k := range runs {
		if errs[k] != nil {
			return nil, errs[k]
		}
		cs.Stale = append(cs.Stale, stale[k]...)
	}
	// The special slots of the blobs the SuperBlob holds (their bounds
	// and kinds checked by readCodeDirectory).
	count := int(binary.BigEndian.Uint32(blob[8:]))
	for i := 0; i < count; i++ {
		typ := binary.BigEndian.Uint32(blob[12+8*i:])
		at := int64(binary.BigEndian.Uint32(blob[16+8*i:]))
		switch typ {
		case csSlotCMS:
			cs.Certificate = true
		case csSlotRequirements, csSlotEntitlements, csSlotDEREntitlement:
			if int(typ) > cd.nSpecial {
				return nil, fmt.Errorf("%w: blob type %d has no special slot (the code directory has %d)", ErrSignature, typ, cd.nSpecial)
			}
			l := int64(binary.BigEndian.Uint32(blob[at+4:]))
			h := newHash()
			h.Write(blob[at : at+l])
			slot := cd.at + cd.hashOffset - int64(int(typ)*cd.hashSize)
			if string(h.Sum(nil)[:cd.hashSize]) != string(blob[slot:slot+int64(cd.hashSize)]) {
				cs.StaleSpecial = append(cs.StaleSpecial, -int(typ))
			}
		}
	}
	return cs, nil
}

// pagesPerRun is how many pages a worker hashes at a time.
const pagesPerRun = 256

func hasher(t uint8) (func() hash.Hash, string) {
	if t == csHashSHA1 {
		return sha1.New, "sha1"
	}
	return sha256.New, "sha256"
}

// readCodeDirectory reads the signature blob of m and locates and checks
// the shape of its CodeDirectory.
func readCodeDirectory(r io.ReaderAt, off int64, m *MachO) ([]byte, *codeDirectory, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrSignature, fmt.Sprintf(format, args...))
	}
	size := int64(m.CodeSignature.Count)
	if size < 12 || size > 64<<20 {
		return nil, nil, bad("LC_CODE_SIGNATURE datasize %d: expected 12 bytes to 64 MiB", size)
	}
	blob := make([]byte, size)
	if _, err := r.ReadAt(blob, off+int64(m.CodeSignature.Offset)); err != nil {
		return nil, nil, bad("read %d bytes at %d: %v", size, m.CodeSignature.Offset, err)
	}
	be := binary.BigEndian
	if be.Uint32(blob) != csMagicSuperBlob {
		return nil, nil, bad("magic %#x, expected the SuperBlob's %#x", be.Uint32(blob), csMagicSuperBlob)
	}
	if l := int64(be.Uint32(blob[4:])); l > size || l < 12 {
		return nil, nil, bad("SuperBlob length %d, the command gives %d bytes", l, size)
	}
	count := int64(be.Uint32(blob[8:]))
	if 12+8*count > size {
		return nil, nil, bad("%d blob index entries do not fit in %d bytes", count, size)
	}
	// Every blob the index names lies inside the signature, once per
	// type, and is of the kind its type holds.
	blobs := map[uint32]int64{}
	for i := int64(0); i < count; i++ {
		typ, at := be.Uint32(blob[12+8*i:]), int64(be.Uint32(blob[16+8*i:]))
		if _, seen := blobs[typ]; seen {
			return nil, nil, bad("blob index entry %d: a second blob of type %#x", i, typ)
		}
		blobs[typ] = at
		if at < 12+8*count || at+8 > size {
			return nil, nil, bad("blob type %#x at %d outside the %d-byte signature (after its %d-entry index)", typ, at, size, count)
		}
		if l := int64(be.Uint32(blob[at+4:])); l < 8 || l > size-at {
			return nil, nil, bad("blob type %#x: length %d at %d runs past the %d-byte signature", typ, l, at, size)
		}
		magic := be.Uint32(blob[at:])
		want, known := csSlotMagic[typ]
		if typ >= csSlotAlternateCD && typ < csSlotAlternateCDEnd {
			want, known = csMagicCodeDirectory, true
		}
		switch {
		case known && magic != want:
			return nil, nil, bad("blob type %#x: magic %#x, expected %#x", typ, magic, want)
		case !known && magic == csMagicCodeDirectory:
			return nil, nil, bad("blob type %#x: a code directory in a slot that holds none", typ)
		}
	}
	cdAt, ok := blobs[csSlotCodeDirectory] // one at most: types are not repeated
	if !ok {
		return nil, nil, bad("no code directory among %d blobs", count)
	}
	if cdAt+csCodeDirectoryHeader > size {
		return nil, nil, bad("code directory at %d outside the %d-byte signature", cdAt, size)
	}
	b := blob[cdAt:]
	cd := &codeDirectory{
		at: cdAt, length: int64(be.Uint32(b[4:])), flags: be.Uint32(b[12:]),
		hashOffset: int64(be.Uint32(b[16:])), identOff: int64(be.Uint32(b[20:])),
		nSpecial: int(be.Uint32(b[24:])), nCode: int(be.Uint32(b[28:])), codeLimit: int64(be.Uint32(b[32:])),
		hashSize: int(b[36]), hashType: b[37], pageSizeLog2: b[39], blobs: blobs,
	}
	switch {
	case cd.at+cd.length > size:
		return nil, nil, bad("code directory length %d runs past the signature", cd.length)
	case cd.hashType != csHashSHA256 && cd.hashType != csHashSHA1:
		return nil, nil, bad("hash type %d: expected SHA-256 (2) or SHA-1 (1)", cd.hashType)
	case (cd.hashType == csHashSHA256 && cd.hashSize != 32) || (cd.hashType == csHashSHA1 && cd.hashSize != 20):
		return nil, nil, bad("hash size %d for hash type %d", cd.hashSize, cd.hashType)
	case cd.pageSizeLog2 < 9 || cd.pageSizeLog2 > 16:
		return nil, nil, bad("page size 2^%d: expected 2^9 to 2^16", cd.pageSizeLog2)
	case cd.codeLimit != int64(m.CodeSignature.Offset):
		return nil, nil, bad("the hashes cover %d bytes, but the signature starts at %d: the image was changed around it", cd.codeLimit, m.CodeSignature.Offset)
	case int64(cd.nCode) != (cd.codeLimit+(1<<cd.pageSizeLog2)-1)>>cd.pageSizeLog2:
		return nil, nil, bad("%d page hashes for %d bytes in pages of %d", cd.nCode, cd.codeLimit, 1<<cd.pageSizeLog2)
	case cd.hashOffset < int64(cd.nSpecial*cd.hashSize) || cd.hashOffset+int64(cd.nCode*cd.hashSize) > cd.length:
		return nil, nil, bad("hash slots at %d (%d special, %d code) outside the %d-byte code directory", cd.hashOffset, cd.nSpecial, cd.nCode, cd.length)
	case cd.identOff < csCodeDirectoryHeader || cd.identOff >= cd.length:
		// macOS requires the identifier, a NUL-terminated string inside
		// the directory, and refuses the image otherwise.
		return nil, nil, bad("identifier offset %d outside the %d-byte code directory (expected %d or more, before its end)", cd.identOff, cd.length, csCodeDirectoryHeader)
	}
	id, _, ok := bytes.Cut(blob[cd.at+cd.identOff:cd.at+cd.length], []byte{0})
	if !ok {
		return nil, nil, bad("identifier at %d not NUL-terminated inside the %d-byte code directory", cd.identOff, cd.length)
	}
	cd.ident = string(id)
	return blob, cd, nil
}

// Resign recomputes the page hashes of the ad-hoc code signature of the
// thin image m at off in data, in place: what an install-name rewrite
// needs afterwards. The signature's size and layout stay (a rewrite that
// moves the signature is refused, as is one whose signature is an
// identity's: re-hashing would break its CMS signature). An image the hashes
// already match is left byte-identical.
func Resign(data []byte, off int64, m *MachO) error {
	if !m.CodeSignature.Present {
		return fmt.Errorf("%w: the image has no LC_CODE_SIGNATURE to update", ErrSignature)
	}
	blob, cd, err := readCodeDirectory(bytes.NewReader(data), off, m)
	if err != nil {
		return err
	}
	if cd.flags&CSAdhoc == 0 {
		return fmt.Errorf("%w: signed with an identity (flags %#x), not ad hoc: sign it again with its identity", ErrSignature, cd.flags)
	}
	// An empty CMS wrapper (codesign -s - writes one) carries nothing the
	// page hashes depend on; a filled one does.
	if at, ok := cd.blobs[csSlotCMS]; ok && binary.BigEndian.Uint32(blob[at+4:]) > 8 {
		return fmt.Errorf("%w: the signature holds a CMS blob: sign it again with its identity", ErrSignature)
	}
	newHash, _ := hasher(cd.hashType)
	ps := int64(1) << cd.pageSizeLog2
	sig := off + int64(m.CodeSignature.Offset)
	for i := 0; i < cd.nCode; i++ {
		start := int64(i) * ps
		end := min(start+ps, cd.codeLimit)
		h := newHash()
		h.Write(data[off+start : off+end])
		slot := sig + cd.at + cd.hashOffset + int64(i*cd.hashSize)
		copy(data[slot:slot+int64(cd.hashSize)], h.Sum(nil)[:cd.hashSize])
	}
	return nil
}
