package diff

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// maxList bounds a set's lines in text and Markdown (JSON has them all):
// a new release adds hundreds of symbols, and a pull request body has a
// size limit.
const maxList = 40

// Formats are the values of -format.
var Formats = []string{"text", "markdown", "json"}

// Run compares a and b and writes the report to w in format ("" = text;
// md = markdown).
func Run(ctx context.Context, a, b, format string, w io.Writer) error {
	render := map[string]func(*Report) string{
		"": Text, "text": Text, "markdown": Markdown, "md": Markdown, "json": JSON,
	}[format]
	if render == nil {
		return fmt.Errorf("diff: -format=%s: want one of %s", format, strings.Join(Formats, ", "))
	}
	r, err := Compare(ctx, a, b)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, render(r))
	return err
}

// JSON is the report for tools, indented, with every entry.
func JSON(r *Report) string {
	out := *r
	if out.Sections == nil {
		out.Sections = []Section{}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	return string(b) + "\n"
}

func orNone(s string) string { return cmp.Or(s, "(none)") }

func headline(r *Report) string {
	if r.Identical {
		return fmt.Sprintf("%s and %s are identical (%s)", r.A, r.B, r.NameA)
	}
	n := 0
	for _, s := range r.Sections {
		n += len(s.Changed) + len(s.Added) + len(s.Removed)
	}
	return fmt.Sprintf("%s (%s) and %s (%s) differ: %d changes in %d sections", r.A, r.NameA, r.B, r.NameB, n, len(r.Sections))
}

// Text is the report for a terminal.
func Text(r *Report) string {
	var b strings.Builder
	b.WriteString("diff: " + headline(r) + "\n")
	for _, n := range r.Notes {
		b.WriteString("note: " + n + "\n")
	}
	for _, s := range r.Sections {
		b.WriteString("\n" + s.Title + ":\n")
		for _, c := range s.Changed {
			fmt.Fprintf(&b, "  %s: %s -> %s\n", c.Key, orNone(c.A), orNone(c.B))
			for _, d := range c.Detail {
				b.WriteString("      " + d + "\n")
			}
		}
		list(&b, "  - ", s.Removed, "")
		list(&b, "  + ", s.Added, "")
	}
	return b.String()
}

func list(b *strings.Builder, prefix string, items []string, suffix string) {
	for i, x := range items {
		if i == maxList {
			fmt.Fprintf(b, "%s... and %d more%s\n", prefix, len(items)-maxList, suffix)
			return
		}
		b.WriteString(prefix + x + suffix + "\n")
	}
}

// Markdown is the report for a pull request's body (GitHub Markdown).
func Markdown(r *Report) string {
	if r.Identical {
		return fmt.Sprintf("`%s` and `%s` are **identical** (%s).\n", mdCode(r.A), mdCode(r.B), mdCell(r.NameA))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "What changes from `%s` (%s) to `%s` (%s), each verified against its manifest:\n", mdCode(r.A), mdCell(r.NameA), mdCode(r.B), mdCell(r.NameB))
	for _, n := range r.Notes {
		b.WriteString("\n> " + mdCell(n) + "\n")
	}
	for _, s := range r.Sections {
		b.WriteString("\n#### " + mdCell(s.Title) + "\n\n")
		if len(s.Changed) > 0 {
			b.WriteString("| | before | after |\n|---|---|---|\n")
			for _, c := range s.Changed {
				after := mdCell(orNone(c.B))
				for _, d := range c.Detail {
					after += "<br>" + mdCell(d)
				}
				fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCell(c.Key), mdCell(orNone(c.A)), after)
			}
		}
		if len(s.Removed)+len(s.Added) > 0 {
			if len(s.Changed) > 0 {
				b.WriteString("\n")
			}
			// A diff block: GitHub colours it, and nothing in it is markup.
			fence := "```"
			for strings.Contains(strings.Join(append(append([]string{}, s.Removed...), s.Added...), "\n"), fence) {
				fence += "`"
			}
			b.WriteString(fence + "diff\n")
			list(&b, "- ", s.Removed, "")
			list(&b, "+ ", s.Added, "")
			b.WriteString(fence + "\n")
		}
	}
	return b.String()
}

// mdCell keeps a value from breaking a table or being read as HTML.
func mdCell(s string) string {
	return strings.NewReplacer("|", "\\|", "<", "&lt;", ">", "&gt;", "\n", " ").Replace(s)
}

// mdCode keeps a path inside its backticks.
func mdCode(s string) string { return strings.ReplaceAll(s, "`", "'") }
