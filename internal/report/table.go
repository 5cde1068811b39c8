package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// CompilerWidth is the most of a compiler line the text table shows:
// enough for "cc -fPIC -arch arm64 -O3 -Wall -mmacosx-version-min=11.0".
const CompilerWidth = 64

// A column of the text table. A cell wider than the column is cut to it:
// a path in the middle (its file name kept), other words at the end. A
// column is cut no narrower than floor (0: never cut), and left out when
// cutting cannot make the table fit, lowest drop first (0: never).
type column struct {
	head     string
	cells    []string
	floor    int
	drop     int
	path     bool
	nat, cur int
	gone     bool
}

// minCompiler is the narrowest the compiler column is shown.
const minCompiler = 16

// Table writes rows as a text table aligned with spaces, at most width
// runes a line (0: no limit): paths cut in the middle, long words at the
// end, and columns left out (ADVISORIES, ISA, MINOS, CODE, in that order)
// while it does not fit, which a line under the table names. The compiler
// line takes what is left, up to CompilerWidth runes, or is left out (the
// OPT column says what matters; Markdown and JSON have it in full, and the
// digest). Rows of a Group are indented under a heading naming it once.
func Table(w io.Writer, rows []Row, width int) error {
	art := column{head: "ARTIFACT", floor: 24, path: true}
	arch, ver := column{head: "ARCH"}, column{head: "VERSION", floor: 12}
	minos, opt := column{head: "MINOS", floor: 8, drop: 3}, column{head: "OPT"}
	code, isa := column{head: "CODE", drop: 4}, column{head: "ISA", drop: 2}
	status, adv := column{head: "STATUS", floor: 14}, column{head: "ADVISORIES", floor: 14, drop: 1}
	comp := column{head: "COMPILER"}
	heads := headings(rows)
	for i, r := range rows {
		name := cell(r.Artifact)
		if r.Group != "" {
			name = "  " + strings.TrimPrefix(name, heads[i].inside)
		}
		art.cells = append(art.cells, name)
		for _, cv := range []struct {
			c *column
			v string
		}{{&arch, r.Arch}, {&ver, r.Version}, {&minos, r.MinOS}, {&opt, r.Opt}, {&code, r.Code}, {&isa, r.ISA},
			{&status, r.Status}, {&adv, r.Advisories}, {&comp, Truncate(Printable(r.Compiler), CompilerWidth)}} {
			cv.c.cells = append(cv.c.cells, cell(cv.v))
		}
	}
	cols := []*column{&art, &arch, &ver, &minos, &opt, &code, &isa, &status}
	if anyAdvisories(rows) {
		cols = append(cols, &adv)
	}
	for _, c := range append(cols, &comp) {
		c.nat = utf8.RuneCountInString(c.head)
		for _, v := range c.cells {
			c.nat = max(c.nat, utf8.RuneCountInString(v))
		}
		c.cur = c.nat
	}
	var dropped []string
	if width > 0 {
		dropped = fit(cols, width)
		if left := width - lineWidth(cols) - 2; left >= minCompiler {
			comp.cur = min(comp.nat, left)
		} else {
			comp.gone = true
		}
	}
	cols = append(cols, &comp)
	var b strings.Builder
	line := func(cells func(c *column) string) {
		var l strings.Builder
		for _, c := range cols {
			if c.gone {
				continue
			}
			if l.Len() > 0 {
				l.WriteString("  ")
			}
			v := cells(c)
			l.WriteString(v)
			l.WriteString(strings.Repeat(" ", max(0, c.cur-utf8.RuneCountInString(v))))
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	line(func(c *column) string { return c.head })
	for i := range rows {
		if h := heads[i]; h.group != "" {
			b.WriteString(h.line(width))
			b.WriteByte('\n')
		}
		line(func(c *column) string {
			v := c.cells[i]
			switch {
			case c.path && strings.HasPrefix(v, "  "):
				return "  " + cutPath(v[2:], c.cur-2)
			case c.path:
				return cutPath(v, c.cur)
			}
			return Truncate(v, c.cur)
		})
	}
	if len(dropped) > 0 {
		fmt.Fprintf(&b, "(not shown in %d columns: %s; -json has every column)\n", width, strings.Join(dropped, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// heading is what the table says above a row: the Group of the heading
// that starts a run of rows of it ("" for none), and the folder every
// Artifact of the run is in, which the heading names and the rows leave
// out.
type heading struct{ group, inside string }

// line is the heading cut to width runes (0: no limit): the folder of the
// archive first, then the folder inside it, the archive's name last.
func (h heading) line(width int) string {
	in := ""
	if h.inside != "" {
		in = "(" + h.inside + ")"
	}
	n := utf8.RuneCountInString
	base := h.group[strings.LastIndexByte(h.group, '/')+1:]
	switch {
	case width <= 0 || n(h.group+in) <= width:
		return h.group + in
	case n(base+in) < width:
		return cutPath(h.group, width-n(in)) + in
	case in != "" && n(base)+4 <= width:
		return base + "(" + cutPath(h.inside, width-n(base)-2) + ")"
	}
	return Truncate(base+in, width)
}

// headings names each run of rows of one Group once: the archive, and the
// folder inside it all its rows share, in the archive(member) notation
// check's messages use: "x.tgz(package/native/)" above "lib/libssl.3.dylib".
func headings(rows []Row) []heading {
	out := make([]heading, len(rows))
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j].Group == rows[i].Group {
			j++
		}
		if rows[i].Group != "" {
			in := cell(rows[i].Artifact)
			for _, r := range rows[i+1 : j] {
				for !strings.HasPrefix(cell(r.Artifact), in) {
					in = in[:len(in)-1]
				}
			}
			in = in[:strings.LastIndexByte(in, '/')+1]
			out[i].group = cell(rows[i].Group)
			for k := i; k < j; k++ {
				out[k].inside = in
			}
		}
		i = j
	}
	return out
}

// lineWidth is how wide a line of the columns shown is.
func lineWidth(cols []*column) int {
	n := 0
	for _, c := range cols {
		if !c.gone {
			n += c.cur + 2
		}
	}
	return n - 2
}

// fit makes the columns fit width: the path column is cut first, down to
// its floor; when that is not enough, the next column to drop is left out
// and the others start again from their natural widths; with nothing left
// to drop, the other columns are cut, the widest first, down to their
// floors. A column left out early that fits again once a wider one is out
// comes back. It returns the columns left out; the table is wider than
// width only when nothing more can be cut or dropped.
func fit(cols []*column, width int) (dropped []string) {
	var out []*column
	fits := func() bool {
		for _, c := range cols {
			c.cur = c.nat
		}
		return layout(cols, width)
	}
	for !fits() {
		var next *column
		for _, c := range cols {
			if !c.gone && c.drop > 0 && (next == nil || c.drop < next.drop) {
				next = c
			}
		}
		if next == nil {
			break
		}
		next.gone = true
		out = append(out, next)
	}
	for i := len(out) - 2; i >= 0; i-- { // the last one out made it fit
		if out[i].gone = false; !fits() {
			out[i].gone = true
		}
	}
	fits()
	for _, c := range out {
		if c.gone {
			dropped = append(dropped, c.head)
		}
	}
	return dropped
}

// layout cuts the path column, down to its floor, until the columns shown
// fit width, and reports whether they do; with nothing left to drop
// (drop 0 or gone), the other columns are cut too, the widest first.
func layout(cols []*column, width int) bool {
	cut := func(paths bool) {
		for lineWidth(cols) > width {
			var widest *column
			for _, c := range cols {
				if !c.gone && c.path == paths && c.floor > 0 && c.cur > c.floor && (widest == nil || c.cur > widest.cur) {
					widest = c
				}
			}
			if widest == nil {
				return
			}
			widest.cur--
		}
	}
	cut(true)
	if lineWidth(cols) > width && !slices.ContainsFunc(cols, func(c *column) bool { return !c.gone && c.drop > 0 }) {
		cut(false)
	}
	return lineWidth(cols) <= width
}

// cutPath cuts a path to n runes (0: no limit) in the middle, keeping its
// file name ("cryptography/haz…/_rust.abi3.so"), or at the end, keeping
// where it starts, when the name alone is too long.
func cutPath(s string, n int) string {
	r := []rune(s)
	if n <= 0 || len(r) <= n {
		return s
	}
	if n < 2 {
		return string(r[:n])
	}
	if i := strings.LastIndexAny(s, "/("); i >= 0 {
		tail := []rune(s[i:])
		if keep := n - 1 - len(tail); keep > 0 {
			return string(r[:keep]) + "…" + string(tail)
		}
	}
	return Truncate(s, n)
}
