// Package repro compares two builds that should be byte-identical and, when
// they are not, says where they differ: the file, for a static library the
// archive member (per architecture slice), and for an object its first
// differing section and string. It also searches outputs for strings that
// must not be in them, such as a build directory's path.
package repro

import (
	"bytes"
	"debug/macho"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/inspect"
)

// Difference is one place where two trees differ.
type Difference struct {
	Path   string // relative path in the tree
	Member string // archive member (with "arch:" prefix in a universal file), if any
	Detail string
}

func (d Difference) String() string {
	loc := d.Path
	if d.Member != "" {
		loc += "(" + d.Member + ")"
	}
	return loc + ": " + d.Detail
}

// CompareTrees compares every file under a and b.
func CompareTrees(a, b string) ([]Difference, error) {
	ha, err := artifact.HashTree(a)
	if err != nil {
		return nil, err
	}
	hb, err := artifact.HashTree(b)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for n := range ha {
		names[n] = true
	}
	for n := range hb {
		names[n] = true
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var diffs []Difference
	for _, n := range sorted {
		switch {
		case ha[n] == "":
			diffs = append(diffs, Difference{Path: n, Detail: "only in the second build"})
		case hb[n] == "":
			diffs = append(diffs, Difference{Path: n, Detail: "only in the first build"})
		case ha[n] != hb[n]:
			d, err := CompareFiles(filepath.Join(a, n), filepath.Join(b, n))
			if err != nil {
				return nil, err
			}
			for i := range d {
				d[i].Path = n
			}
			diffs = append(diffs, d...)
		}
	}
	return diffs, nil
}

// CompareFiles explains how two differing files differ.
func CompareFiles(a, b string) ([]Difference, error) {
	ba, err := os.ReadFile(a)
	if err != nil {
		return nil, err
	}
	bb, err := os.ReadFile(b)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(ba, bb) {
		return nil, nil
	}
	fa, errA := inspect.InspectReader(a, bytes.NewReader(ba), int64(len(ba)))
	fb, errB := inspect.InspectReader(b, bytes.NewReader(bb), int64(len(bb)))
	if errA == nil && errB == nil && (fa.Format == inspect.FormatAr || fa.Format == inspect.FormatFat) {
		return compareLibraries(fa, fb, ba, bb), nil
	}
	return []Difference{{Path: a, Detail: firstDifference(ba, bb)}}, nil
}

// compareLibraries compares static libraries slice by slice, member by member.
func compareLibraries(fa, fb *inspect.File, ba, bb []byte) []Difference {
	var diffs []Difference
	if len(fa.Slices) != len(fb.Slices) {
		return []Difference{{Detail: fmt.Sprintf("%d slices vs %d", len(fa.Slices), len(fb.Slices))}}
	}
	for i := range fa.Slices {
		sa, sb := fa.Slices[i], fb.Slices[i]
		prefix := ""
		if fa.Format == inspect.FormatFat {
			prefix = sa.Arch + ":"
		}
		if sa.Arch != sb.Arch {
			diffs = append(diffs, Difference{Member: prefix, Detail: fmt.Sprintf("slice %d is %s vs %s", i, sa.Arch, sb.Arch)})
			continue
		}
		if bytes.Equal(ba[sa.Offset:sa.Offset+sa.Size], bb[sb.Offset:sb.Offset+sb.Size]) {
			continue
		}
		before := len(diffs)
		ma, mb := members(sa, ba), members(sb, bb)
		var names []string
		for n := range ma {
			names = append(names, n)
		}
		for n := range mb {
			if _, ok := ma[n]; !ok {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			x, okx := ma[n]
			y, oky := mb[n]
			switch {
			case !okx:
				diffs = append(diffs, Difference{Member: prefix + n, Detail: "member only in the second build"})
			case !oky:
				diffs = append(diffs, Difference{Member: prefix + n, Detail: "member only in the first build"})
			case !bytes.Equal(x, y):
				diffs = append(diffs, Difference{Member: prefix + n, Detail: objectDifference(x, y)})
			}
		}
		if len(diffs) == before {
			// Same members, different bytes: the archive's own headers or
			// symbol table (dates, uids, member order).
			diffs = append(diffs, Difference{Member: prefix, Detail: "members identical; the archive headers or symbol table differ (timestamps? order?): " +
				firstDifference(ba[sa.Offset:sa.Offset+sa.Size], bb[sb.Offset:sb.Offset+sb.Size])})
		}
	}
	return diffs
}

func members(s inspect.Slice, file []byte) map[string][]byte {
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

// objectDifference names the first differing Mach-O section and string.
func objectDifference(a, b []byte) string {
	oa, errA := macho.NewFile(bytes.NewReader(a))
	ob, errB := macho.NewFile(bytes.NewReader(b))
	if errA != nil || errB != nil {
		return firstDifference(a, b)
	}
	detail := ""
	for _, sa := range oa.Sections {
		sb := ob.Section(sa.Name)
		if sb == nil || sb.Seg != sa.Seg {
			detail = fmt.Sprintf("section %s,%s missing from the second build", sa.Seg, sa.Name)
			break
		}
		da, _ := sa.Data()
		db, _ := sb.Data()
		if !bytes.Equal(da, db) {
			detail = fmt.Sprintf("section %s,%s differs (%d vs %d bytes)", sa.Seg, sa.Name, len(da), len(db))
			if s := stringDifference(da, db); s != "" {
				detail += "; " + s
			}
			break
		}
	}
	if detail == "" {
		detail = "sections identical; headers, symbols or relocations differ: " + firstDifference(a, b)
	}
	return detail
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

func printable(b []byte) []string {
	var out []string
	var cur []byte
	flush := func() {
		if len(cur) >= 4 {
			out = append(out, string(cur))
		}
		cur = cur[:0]
	}
	for _, c := range b {
		if c >= 0x20 && c <= 0x7e {
			cur = append(cur, c)
			continue
		}
		flush()
	}
	flush()
	return out
}

// firstDifference describes the first differing byte, with context.
func firstDifference(a, b []byte) string {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return fmt.Sprintf("one is a prefix of the other (%d vs %d bytes)", len(a), len(b))
	}
	ctx := func(x []byte) string {
		lo, hi := max(0, i-16), min(len(x), i+32)
		return fmt.Sprintf("%q", x[lo:hi])
	}
	return fmt.Sprintf("first difference at byte %d: %s vs %s", i, ctx(a), ctx(b))
}

// FindStrings reports every file under dir that contains any of needles
// (e.g. the build directories, which must not leak into outputs).
func FindStrings(dir string, needles []string) ([]string, error) {
	var hits []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		for _, n := range needles {
			if n != "" && bytes.Contains(b, []byte(n)) {
				hits = append(hits, fmt.Sprintf("%s contains %q", rel, n))
			}
		}
		return nil
	})
	return hits, err
}

// Summary renders differences for people, at most max of them.
func Summary(diffs []Difference, max int) string {
	var b strings.Builder
	for i, d := range diffs {
		if i == max {
			fmt.Fprintf(&b, "\n  ... and %d more", len(diffs)-max)
			break
		}
		b.WriteString("\n  " + d.String())
	}
	return b.String()
}
