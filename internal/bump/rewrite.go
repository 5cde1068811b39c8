package bump

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/osslbuild/osslbuild/internal/osslver"
	"github.com/osslbuild/osslbuild/internal/recipe"
)

// The recipe is edited as text, not re-encoded: a TOML encoder would drop
// every comment, and the comments are the recipe's documentation. The edit
// is deliberately narrow (one inserted block, one replaced value) and is
// proven afterwards by checkRewrite, so a layout these patterns misread
// cannot slip through as a wrong recipe.
var (
	// releaseHeaderRe is an [[release]] array-of-tables header line.
	releaseHeaderRe = regexp.MustCompile(`^[ \t]*\[\[[ \t]*release[ \t]*\]\][ \t]*(#.*)?$`)
	// tableHeaderRe is any table header line; the top-level keys end at the first.
	tableHeaderRe = regexp.MustCompile(`^[ \t]*\[\[?[ \t]*[A-Za-z0-9_"'-][^\]]*\]\]?[ \t]*(#.*)?$`)
	// defaultRe is the top-level default key; group 2 is its quoted value,
	// group 3 whatever follows (a comment) and is kept.
	defaultRe = regexp.MustCompile(`^([ \t]*default[ \t]*=[ \t]*)("[^"\\\r\n]*"|'[^'\r\n]*')(.*)$`)
	commentRe = regexp.MustCompile(`^[ \t]*#`)
)

// rewrite inserts rel as a new [[release]] block keeping releases newest
// first: before the first older release (and before any comment lines
// attached directly above it), or after the last one; formatted
// as the existing blocks are, and when setDefault sets the top-level
// default to rel.Version, keeping any comment after the value. A mark (an
// end-of-life comment line, recipe.MarkLine) goes directly above the new
// block.
func rewrite(orig []byte, rel recipe.Release, setDefault bool, mark string) ([]byte, error) {
	nl := "\n"
	if bytes.Contains(orig, []byte("\r\n")) {
		nl = "\r\n"
	}
	lines := strings.SplitAfter(string(orig), "\n")
	body := func(l string) string { return strings.TrimRight(l, "\r\n") }

	// Releases stay newest first: the new block goes before the first
	// release older than it, or after the last one.
	firstHeader, firstRelease, before := -1, -1, -1
	newV, err := osslver.ParseRelease(rel.Version)
	if err != nil {
		return nil, err
	}
	for i, l := range lines {
		if firstHeader < 0 && tableHeaderRe.MatchString(body(l)) {
			firstHeader = i
		}
		if !releaseHeaderRe.MatchString(body(l)) {
			continue
		}
		if firstRelease < 0 {
			firstRelease = i
		}
		if before < 0 {
			if v, ok := blockVersion(lines[i+1:], body); ok && osslver.Less(v, newV) {
				before = i
			}
		}
	}
	if firstRelease < 0 {
		return nil, errors.New("no [[release]] header line to insert the new release before")
	}

	if setDefault {
		found := -1
		for i := 0; i < firstHeader; i++ {
			if defaultRe.MatchString(body(lines[i])) {
				if found >= 0 {
					return nil, fmt.Errorf("two top-level default lines (%d and %d)", found+1, i+1)
				}
				found = i
			}
		}
		if found < 0 {
			return nil, errors.New(`no top-level line default = "X.Y.Z" before the first table`)
		}
		l := lines[found]
		ending := l[len(body(l)):]
		lines[found] = defaultRe.ReplaceAllString(body(l), `${1}`+strconv.Quote(rel.Version)+`${3}`) + ending
	}

	block := formatRelease(rel, nl) + nl
	if mark != "" {
		block = mark + nl + block
	}
	at := before
	if at < 0 {
		// Older than every release: append, separated by one blank line.
		at = len(lines)
		if at > 0 && !strings.HasSuffix(lines[at-1], "\n") {
			lines[at-1] += nl
		}
		if at > 0 && strings.TrimSpace(lines[at-1]) != "" {
			block = nl + block
		}
		block = strings.TrimSuffix(block, nl)
	}
	for at > 0 && at < len(lines) && commentRe.MatchString(lines[at-1]) {
		at--
	}
	return []byte(strings.Join(slices.Insert(lines, at, block), "")), nil
}

// dropKnown removes the known-release lines (recipe.KnownReleases) that a
// release of v pins now: v's, and the older ones of its series, which
// the new release supersedes.
func dropKnown(data []byte, v string) []byte {
	series, err := osslver.SeriesOf(v)
	if err != nil {
		return data
	}
	drop := map[int]bool{}
	for _, k := range recipe.KnownReleases(data) {
		if s, _ := osslver.SeriesOf(k.Version); s == series && !newer(k.Version, v) {
			drop[k.Line] = true
		}
	}
	if len(drop) == 0 {
		return data
	}
	lines := strings.SplitAfter(string(data), "\n")
	var out []string
	for i, l := range lines {
		if !drop[i+1] {
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, ""))
}

var versionLineRe = regexp.MustCompile(`^[ \t]*version[ \t]*=[ \t]*"([^"]*)"`)

// blockVersion reads the version = "..." line of the block that starts
// after a [[release]] header, up to the next table header.
func blockVersion(lines []string, body func(string) string) (osslver.Version, bool) {
	for _, l := range lines {
		if tableHeaderRe.MatchString(body(l)) {
			return osslver.Version{}, false
		}
		if m := versionLineRe.FindStringSubmatch(body(l)); m != nil {
			v, err := osslver.Parse(m[1])
			return v, err == nil
		}
	}
	return osslver.Version{}, false
}

// formatRelease writes a [[release]] block in the layout of
// recipes/openssl.toml.
func formatRelease(rel recipe.Release, nl string) string {
	var b strings.Builder
	w := func(s string) { b.WriteString(s + nl) }
	w("[[release]]")
	w("version = " + strconv.Quote(rel.Version))
	w("sha256 = " + strconv.Quote(rel.SHA256))
	w("size = " + strconv.FormatInt(rel.Size, 10))
	w("urls = [")
	for _, u := range rel.URLs {
		w("  " + strconv.Quote(u) + ",")
	}
	w("]")
	q := make([]string, len(rel.Signers))
	for i, s := range rel.Signers {
		q[i] = strconv.Quote(s)
	}
	w("signers = [" + strings.Join(q, ", ") + "]")
	return b.String()
}

// checkRewrite proves the textual edit did exactly what was meant: the new
// text is a valid recipe, and it decodes to the old recipe's data with rel
// in version order and (when setDefault) the new default, and nothing
// else changed.
func checkRewrite(path string, orig, updated []byte, rel recipe.Release, setDefault bool) error {
	if _, err := recipe.Parse(path, updated); err != nil {
		return fmt.Errorf("the rewritten recipe does not validate: %w", err)
	}
	var before, after map[string]any
	if err := toml.Unmarshal(orig, &before); err != nil {
		return fmt.Errorf("decode the original: %w", err)
	}
	if err := toml.Unmarshal(updated, &after); err != nil {
		return fmt.Errorf("decode the rewritten recipe: %w", err)
	}
	rels, ok := before["release"].([]any)
	if !ok {
		return fmt.Errorf("the original's release key is a %T, not an array of tables", before["release"])
	}
	strs := func(ss []string) []any {
		out := make([]any, len(ss))
		for i, s := range ss {
			out[i] = s
		}
		return out
	}
	entry := map[string]any{
		"version": rel.Version,
		"sha256":  rel.SHA256,
		"size":    rel.Size,
		"urls":    strs(rel.URLs),
		"signers": strs(rel.Signers),
	}
	// Where rewrite put it: before the first older release, else last.
	newV, err := osslver.ParseRelease(rel.Version)
	if err != nil {
		return err
	}
	at := len(rels)
	for i, r := range rels {
		if m, ok := r.(map[string]any); !ok {
			return fmt.Errorf("the original's release[%d] is a %T, not a table", i, r)
		} else if s, ok := m["version"].(string); ok {
			if v, err := osslver.Parse(s); err == nil && osslver.Less(v, newV) {
				at = i
				break
			}
		}
	}
	before["release"] = slices.Insert(rels, at, any(entry))
	if setDefault {
		before["default"] = rel.Version
	}
	if !reflect.DeepEqual(before, after) {
		return errors.New("the edited text does not decode to the old recipe plus the new release; the file's layout is beyond this textual edit, add the block by hand")
	}
	return nil
}

// writeAtomic replaces path with data via a temporary file in the same
// directory and a rename, so a reader sees the old or the new recipe, never a
// mix. It refuses if the file no longer holds orig: someone edited it while
// the download ran, and overwriting would lose that edit. Errors name the
// recipe, never the hidden temporary file, which is gone when they are read.
func writeAtomic(path string, orig, data []byte) (err error) {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, cause(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	for _, step := range []func() error{
		func() error { _, err := tmp.Write(data); return err },
		func() error { return tmp.Chmod(st.Mode().Perm()) },
		func() error { return syncFile(tmp) },
		tmp.Close,
	} {
		if err = step(); err != nil {
			return fmt.Errorf("write %s (through a temporary file beside it, removed): %w", path, cause(err))
		}
	}
	now, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if !bytes.Equal(now, orig) {
		err = fmt.Errorf("write %s: the file changed while the bump ran; not overwriting it", path)
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, cause(err))
	}
	return nil
}

// syncFile is (*os.File).Sync; tests make it fail.
var syncFile = (*os.File).Sync

// cause is what went wrong without the URL a *url.Error names (the line
// names it already) or the path a *PathError or *LinkError names (the
// temporary file's).
func cause(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	if le, ok := errors.AsType[*os.LinkError](err); ok {
		return le.Err
	}
	return err
}
