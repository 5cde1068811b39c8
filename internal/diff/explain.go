package diff

// The explainer: where two files, trees or tarballs that should be
// byte-identical differ (the tarball entry and header field, the file,
// for a static library the archive member per architecture slice, and
// for an object its first differing section and string). diff,
// verify:reproducible and verify:rebuild all explain through it; it
// needs nothing of the build.

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// Difference is one place where two trees differ.
type Difference struct {
	Path   string // relative path in the tree
	Member string // archive member (with "arch:" prefix in a universal file), if any
	Detail string
	// Offset is the first differing byte of Member (of the file when
	// Member is ""), when both builds hold it; else -1.
	Offset int64
}

// entry is one file of a tree or one tarball entry.
type entry struct {
	hdr  *tar.Header // nil for a file on disk
	data []byte
}

// CompareTrees compares every regular file under a and b; files are the
// paths of both trees, sorted, for callers that report each file's verdict.
func CompareTrees(ctx context.Context, a, b string) (files []string, diffs []Difference, err error) {
	ea, err := readTree(ctx, a)
	if err != nil {
		return nil, nil, err
	}
	eb, err := readTree(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	return Keys(ea, eb), compareEntries(ea, eb, nil), nil
}

// CompareTarballs compares two .tar.gz files entry by entry: the order of
// the entries, every header field that a tar writer sets, and the bytes,
// which for libraries and objects are explained down to the member and
// section. It reads the archives through inspect's walker and limits;
// files are the entries of both, sorted, as CompareTrees returns them.
func CompareTarballs(ctx context.Context, a, b string) (files []string, diffs []Difference, err error) {
	ea, oa, err := readTarball(ctx, a)
	if err != nil {
		return nil, nil, err
	}
	eb, ob, err := readTarball(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	for i := 0; len(oa) == len(ob) && i < len(oa); i++ {
		if oa[i] != ob[i] {
			diffs = append(diffs, Difference{Path: oa[i], Detail: fmt.Sprintf("entry %d: %s vs %s: the entries are in another order", i, oa[i], ob[i]), Offset: -1})
			break
		}
	}
	return Keys(ea, eb), compareEntries(ea, eb, diffs), nil
}

func readTree(ctx context.Context, dir string) (map[string]entry, error) {
	out := map[string]entry{}
	regular := func(d fs.DirEntry) bool { return d.Type().IsRegular() }
	err := readFiles(ctx, dir, regular, func(rel string, b []byte) {
		out[filepath.ToSlash(rel)] = entry{data: b}
	})
	if err != nil {
		return nil, fmt.Errorf("compare %s: %w", dir, err)
	}
	return out, nil
}

func readTarball(ctx context.Context, path string) (map[string]entry, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("compare: %w", err)
	}
	defer f.Close()
	out := map[string]entry{}
	var order []string
	err = inspect.WalkTarGzEntries(ctx, filepath.Base(path), f, inspect.Limits{}, func(m inspect.Member, r io.Reader) error {
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		name := m.Name
		if _, dup := out[name]; dup {
			name = fmt.Sprintf("%s#%d", name, len(order))
		}
		out[name] = entry{hdr: m.Tar, data: b}
		order = append(order, name)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("compare %s: %w", path, err)
	}
	return out, order, nil
}

func compareEntries(ea, eb map[string]entry, diffs []Difference) []Difference {
	for _, n := range Keys(ea, eb) {
		x, okx := ea[n]
		y, oky := eb[n]
		switch {
		case !okx:
			diffs = append(diffs, Difference{Path: n, Detail: "only in the second build", Offset: -1})
			continue
		case !oky:
			diffs = append(diffs, Difference{Path: n, Detail: "only in the first build", Offset: -1})
			continue
		}
		if x.hdr != nil && y.hdr != nil {
			for _, h := range headerDifferences(x.hdr, y.hdr) {
				diffs = append(diffs, Difference{Path: n, Detail: h, Offset: -1})
			}
		}
		if !bytes.Equal(x.data, y.data) {
			for _, d := range Explain(n, x.data, y.data) {
				d.Path = n
				diffs = append(diffs, d)
			}
		}
	}
	return diffs
}

// Keys is the sorted names that are keys of a or b.
func Keys[V any](a, b map[string]V) []string {
	names := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
	slices.Sort(names)
	return slices.Compact(names)
}

// headerDifferences names each tar header field that differs.
func headerDifferences(a, b *tar.Header) []string {
	var out []string
	field := func(name string, x, y any) {
		if x != y {
			out = append(out, fmt.Sprintf("tar header %s: %v vs %v", name, x, y))
		}
	}
	field("type", string(a.Typeflag), string(b.Typeflag))
	field("mode", fmt.Sprintf("%#o", a.Mode), fmt.Sprintf("%#o", b.Mode))
	field("size", a.Size, b.Size)
	field("mtime", a.ModTime.UTC().Format(time.RFC3339Nano), b.ModTime.UTC().Format(time.RFC3339Nano))
	field("uid", a.Uid, b.Uid)
	field("gid", a.Gid, b.Gid)
	field("uname", a.Uname, b.Uname)
	field("gname", a.Gname, b.Gname)
	field("linkname", a.Linkname, b.Linkname)
	field("format", a.Format.String(), b.Format.String())
	field("pax records", fmt.Sprint(a.PAXRecords), fmt.Sprint(b.PAXRecords))
	return out
}

// Explain says how two differing files differ: member by member (per
// architecture slice) for static libraries, section by section for
// objects, else the first differing byte.
func Explain(name string, ba, bb []byte) []Difference {
	if bytes.Equal(ba, bb) {
		return nil
	}
	fa, errA := inspect.InspectReader(name, bytes.NewReader(ba), int64(len(ba)))
	fb, errB := inspect.InspectReader(name, bytes.NewReader(bb), int64(len(bb)))
	if errA == nil && errB == nil && (fa.Format == inspect.FormatAr || fa.Format == inspect.FormatFat) {
		return compareLibraries(fa, fb, ba, bb)
	}
	return []Difference{{Path: name, Detail: objectDifference(ba, bb), Offset: int64(firstByte(ba, bb))}}
}

// compareLibraries compares static libraries slice by slice, member by member.
func compareLibraries(fa, fb *inspect.File, ba, bb []byte) []Difference {
	var diffs []Difference
	if len(fa.Slices) != len(fb.Slices) {
		return []Difference{{Detail: fmt.Sprintf("%d slices vs %d", len(fa.Slices), len(fb.Slices)), Offset: -1}}
	}
	for i := range fa.Slices {
		sa, sb := fa.Slices[i], fb.Slices[i]
		prefix := ""
		if fa.Format == inspect.FormatFat {
			prefix = sa.Arch + ":"
		}
		if sa.Arch != sb.Arch {
			diffs = append(diffs, Difference{Member: prefix, Detail: fmt.Sprintf("slice %d is %s vs %s", i, sa.Arch, sb.Arch), Offset: -1})
			continue
		}
		if bytes.Equal(ba[sa.Offset:sa.Offset+sa.Size], bb[sb.Offset:sb.Offset+sb.Size]) {
			continue
		}
		before := len(diffs)
		ma, mb := memberBytes(sa, ba), memberBytes(sb, bb)
		for _, n := range Keys(ma, mb) {
			x, okx := ma[n]
			y, oky := mb[n]
			switch {
			case !okx:
				diffs = append(diffs, Difference{Member: prefix + n, Detail: "member only in the second build", Offset: -1})
			case !oky:
				diffs = append(diffs, Difference{Member: prefix + n, Detail: "member only in the first build", Offset: -1})
			case !bytes.Equal(x, y):
				diffs = append(diffs, Difference{Member: prefix + n, Detail: objectDifference(x, y), Offset: int64(firstByte(x, y))})
			}
		}
		if len(diffs) == before {
			// Same members, different bytes: the archive's own headers or
			// symbol table (dates, uids, member order).
			diffs = append(diffs, Difference{Offset: -1, Member: prefix, Detail: "members identical; the archive headers or symbol table differ (timestamps? order?): " +
				firstDifference(ba[sa.Offset:sa.Offset+sa.Size], bb[sb.Offset:sb.Offset+sb.Size])})
		}
	}
	return diffs
}

func memberBytes(s inspect.Slice, file []byte) map[string][]byte {
	out := map[string][]byte{}
	for _, o := range s.Objects {
		name := o.Member
		if _, dup := out[name]; dup {
			name = fmt.Sprintf("%s#%d", name, o.Offset)
		}
		out[name] = file[o.Offset : o.Offset+o.Size]
	}
	return out
}

// objectDifference names the first differing Mach-O section and string,
// reading the sections through inspect.
func objectDifference(a, b []byte) string {
	oa, errA := inspect.ParseMachO(bytes.NewReader(a), int64(len(a)))
	ob, errB := inspect.ParseMachO(bytes.NewReader(b), int64(len(b)))
	if errA != nil || errB != nil {
		return firstDifference(a, b)
	}
	data := func(f []byte, s inspect.Section) []byte {
		if s.Offset == 0 || uint64(s.Offset)+s.Size > uint64(len(f)) {
			return nil
		}
		return f[s.Offset : uint64(s.Offset)+s.Size]
	}
	for _, sa := range oa.Sections {
		i := slices.IndexFunc(ob.Sections, func(s inspect.Section) bool { return s.Segment == sa.Segment && s.Name == sa.Name })
		if i < 0 {
			return fmt.Sprintf("section %s,%s missing from the second build", sa.Segment, sa.Name)
		}
		da, db := data(a, sa), data(b, ob.Sections[i])
		if !bytes.Equal(da, db) {
			detail := fmt.Sprintf("section %s,%s differs (%d vs %d bytes)", sa.Segment, sa.Name, len(da), len(db))
			if s := stringDifference(da, db); s != "" {
				detail += "; " + s
			}
			return detail
		}
	}
	return "sections identical; headers, symbols or relocations differ: " + firstDifference(a, b)
}

// stringDifference names the first printable string that differs.
func stringDifference(a, b []byte) string {
	sa, sb := printable(a), printable(b)
	for i := 0; i < len(sa) || i < len(sb); i++ {
		var x, y string
		if i < len(sa) {
			x = sa[i]
		}
		if i < len(sb) {
			y = sb[i]
		}
		if x != y {
			return fmt.Sprintf("first differing string: %q vs %q", x, y)
		}
	}
	return ""
}

// printable is b's runs of at least 4 printable ASCII bytes.
func printable(b []byte) []string {
	var out []string
	for _, f := range bytes.FieldsFunc(b, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
		if len(f) >= 4 {
			out = append(out, string(f))
		}
	}
	return out
}

// firstDifference describes the first differing byte, with context.
func firstDifference(a, b []byte) string {
	i := firstByte(a, b)
	if i == min(len(a), len(b)) {
		return fmt.Sprintf("one is a prefix of the other (%d vs %d bytes)", len(a), len(b))
	}
	ctx := func(x []byte) string {
		lo, hi := max(0, i-16), min(len(x), i+32)
		return fmt.Sprintf("%q", x[lo:hi])
	}
	return fmt.Sprintf("first difference at byte %d: %s vs %s", i, ctx(a), ctx(b))
}

// firstByte is the offset of the first byte where a and b differ, or the
// shorter one's length.
func firstByte(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// FindStrings reports, as a FAIL line, every file under dir that
// contains any of needles (e.g. the build directories, which must not
// leak into outputs).
func FindStrings(ctx context.Context, dir string, needles []string) ([]Line, error) {
	var hits []Line
	notDir := func(d fs.DirEntry) bool { return !d.IsDir() }
	err := readFiles(ctx, dir, notDir, func(rel string, b []byte) {
		for _, n := range needles {
			if n != "" && bytes.Contains(b, []byte(n)) {
				hits = append(hits, Line{Status: "FAIL", File: filepath.ToSlash(rel), Detail: fmt.Sprintf("contains %q", n)})
			}
		}
	})
	return hits, err
}

// readFiles walks dir and calls fn with the path (relative to dir) and
// contents of each entry that want accepts, stopping when ctx is done.
func readFiles(ctx context.Context, dir string, want func(fs.DirEntry) bool, fn func(rel string, b []byte)) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !want(d) {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fn(rel, b)
		return nil
	})
}
