package diff_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/diff"
)

func TestBadInput(t *testing.T) {
	for _, tt := range []struct{ name, a, format, want string }{
		{"format", t.TempDir(), "html", "-format=html: want one of text, markdown, json"},
		{"missing", filepath.Join(t.TempDir(), "nope"), "", "nope: no such file"},
		{"no manifest", t.TempDir(), "", "manifest.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			err := diff.Run(context.Background(), tt.a, tt.a, tt.format, &b)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%v, want an error containing %q", err, tt.want)
			}
			if b.Len() != 0 {
				t.Errorf("wrote %q on an error", b.String())
			}
		})
	}
}

// TestMarkdownCannotBreakOut: a value with a pipe, HTML or a fence stays
// inside its table cell or code block.
func TestMarkdownCannotBreakOut(t *testing.T) {
	r := &diff.Report{A: "a", B: "b", NameA: "x", NameB: "y", Sections: []diff.Section{
		{Title: "release", Changed: []diff.Change{{Key: "k|<b>", A: "1|2", B: "<script>"}}},
		{Title: "options", Added: []string{"```", "enable-x"}},
	}}
	md := diff.Markdown(r)
	for _, bad := range []string{"<b>", "<script>", "| 1|2 |"} {
		if strings.Contains(md, bad) {
			t.Errorf("markdown holds %q:\n%s", bad, md)
		}
	}
	if !strings.Contains(md, "````diff\n+ ```\n+ enable-x\n````\n") {
		t.Errorf("the fence is not longer than its content:\n%s", md)
	}
}
