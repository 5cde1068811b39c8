package bump

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines shown around each change.
const diffContext = 3

// UnifiedDiff returns a unified diff (as diff -u and git print it) turning a
// into b, with fromName and toName in the --- and +++ lines; "" when the two
// are equal. Lines are matched by a longest common subsequence: quadratic,
// which is nothing for a recipe of a few hundred lines.
func UnifiedDiff(fromName, toName, a, b string) string {
	if a == b {
		return ""
	}
	ops := lineOps(splitLines(a), splitLines(b))
	slide(ops)
	number(ops)

	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from diffContext lines before this change to diffContext
		// lines after the last change that is within 2*diffContext of the
		// one before it.
		startOp := max(0, i-diffContext)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*diffContext {
				break
			}
		}
		endOp := min(len(ops), end+diffContext+1)
		hunk := ops[startOp:endOp]
		aStart, bStart := hunk[0].ai, hunk[0].bi
		aLen, bLen := 0, 0
		for _, o := range hunk {
			if o.kind != '+' {
				aLen++
			}
			if o.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, o := range hunk {
			out.WriteByte(o.kind)
			out.WriteString(o.line)
			if !strings.HasSuffix(o.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = endOp
	}
	return out.String()
}

// hunkRange formats a hunk's start (0-based index of its first line) and
// length the way diff does: 1-based, ",len" omitted for one line, and for
// an empty range the line before it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines splits s after each newline; the last line may lack one.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// op is one line of the edit script: kept (' '), removed ('-') or added
// ('+'), with its index in a and in b (for '+' the a index is where the
// insertion happens, and likewise for '-'), filled in by number.
type op struct {
	kind   byte
	line   string
	ai, bi int
}

// lineOps is the edit script from a to b, from a longest common subsequence
// of lines (after stripping the common prefix and suffix, which keeps the
// table small for the usual few-line change).
func lineOps(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]

	// lcs[i][j] is the LCS length of am[i:] and bm[j:].
	lcs := make([][]int, len(am)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(bm)+1)
	}
	for i := len(am) - 1; i >= 0; i-- {
		for j := len(bm) - 1; j >= 0; j-- {
			if am[i] == bm[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}

	var ops []op
	for k := 0; k < pre; k++ {
		ops = append(ops, op{kind: ' ', line: a[k]})
	}
	i, j := 0, 0
	for i < len(am) || j < len(bm) {
		switch {
		case i < len(am) && j < len(bm) && am[i] == bm[j]:
			ops = append(ops, op{kind: ' ', line: am[i]})
			i++
			j++
		case j < len(bm) && (i == len(am) || lcs[i][j+1] > lcs[i+1][j]):
			ops = append(ops, op{kind: '+', line: bm[j]})
			j++
		default:
			// Removals come before additions at the same place, as diff prints them.
			ops = append(ops, op{kind: '-', line: am[i]})
			i++
		}
	}
	for k := 0; k < suf; k++ {
		ops = append(ops, op{kind: ' ', line: a[len(a)-suf+k]})
	}
	return ops
}

// slide moves each run of only additions (or only removals) that could
// equally sit a few lines higher or lower (because the lines around it
// repeat) to where it reads best: ending with a blank line if some position
// allows it, as git's heuristics do, else as low as it goes. An inserted
// TOML block then shows as "+[[release]] ... +signers = [...] +(blank)"
// rather than starting with the blank line of the block above it.
func slide(ops []op) {
	for s := 0; s < len(ops); {
		k := ops[s].kind
		if k == ' ' {
			s++
			continue
		}
		e := s
		for e < len(ops) && ops[e].kind == k {
			e++
		}
		if (s > 0 && ops[s-1].kind != ' ') || (e < len(ops) && ops[e].kind != ' ') {
			s = e // part of a mixed change: leave it where it is
			continue
		}
		// Up as far as it goes, then down one line at a time, remembering
		// the lowest position that ends on a blank line.
		for s > 0 && ops[s-1].kind == ' ' && ops[s-1].line == ops[e-1].line && (s < 2 || ops[s-2].kind == ' ') {
			ops[s-1].kind, ops[e-1].kind = k, ' '
			s, e = s-1, e-1
		}
		best := -1
		for {
			if isBlank(ops[e-1].line) {
				best = s
			}
			if e >= len(ops) || ops[e].kind != ' ' || ops[e].line != ops[s].line || (e+1 < len(ops) && ops[e+1].kind != ' ') {
				break
			}
			ops[s].kind, ops[e].kind = ' ', k
			s, e = s+1, e+1
		}
		for best >= 0 && s > best {
			ops[s-1].kind, ops[e-1].kind = k, ' '
			s, e = s-1, e-1
		}
		s = e
	}
}

func isBlank(line string) bool { return strings.TrimRight(line, "\r\n") == "" }

// number fills in each op's line indices in a and b.
func number(ops []op) {
	ai, bi := 0, 0
	for i := range ops {
		ops[i].ai, ops[i].bi = ai, bi
		switch ops[i].kind {
		case ' ':
			ai++
			bi++
		case '-':
			ai++
		case '+':
			bi++
		}
	}
}
