package bump

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

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

// rewrite inserts rel as a new [[release]] block before the first existing
// one (and before any comment lines attached directly above it), formatted
// as the existing blocks are, and when setDefault sets the top-level
// default to rel.Version, keeping any comment after the value.
func rewrite(orig []byte, rel recipe.Release, setDefault bool) ([]byte, error) {
	nl := "\n"
	if bytes.Contains(orig, []byte("\r\n")) {
		nl = "\r\n"
	}
	lines := strings.SplitAfter(string(orig), "\n")
	body := func(l string) string { return strings.TrimRight(l, "\r\n") }

	firstHeader, firstRelease := -1, -1
	for i, l := range lines {
		if firstHeader < 0 && tableHeaderRe.MatchString(body(l)) {
			firstHeader = i
		}
		if releaseHeaderRe.MatchString(body(l)) {
			firstRelease = i
			break
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

	at := firstRelease
	for at > 0 && commentRe.MatchString(lines[at-1]) {
		at--
	}
	block := formatRelease(rel, nl) + nl
	out := make([]string, 0, len(lines)+1)
	out = append(out, lines[:at]...)
	out = append(out, block)
	out = append(out, lines[at:]...)
	return []byte(strings.Join(out, "")), nil
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
// as its first release and (when setDefault) the new default, and nothing
// else changed.
func checkRewrite(path string, orig, updated []byte, rel recipe.Release, setDefault bool) error {
	if _, err := recipe.Parse(path, updated); err != nil {
		return fmt.Errorf("the rewritten recipe does not validate: %w", err)
	}
	var before, after map[string]any
	if _, err := toml.Decode(string(orig), &before); err != nil {
		return fmt.Errorf("decode the original: %w", err)
	}
	if _, err := toml.Decode(string(updated), &after); err != nil {
		return fmt.Errorf("decode the rewritten recipe: %w", err)
	}
	rels, ok := before["release"].([]map[string]any)
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
	before["release"] = append([]map[string]any{entry}, rels...)
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
// the download ran, and overwriting would lose that edit.
func writeAtomic(path string, orig, data []byte) (err error) {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err = tmp.Chmod(st.Mode().Perm()); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
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
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
