package recipe

import (
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// lines maps the key paths a recipe's validation names
// ("targets.arm64.flags[1]", "release[2].sha256", "options[3].name") to the
// line where the file writes them, so every refusal can say file:line. The
// decoder that fills fileSchema keeps no positions; go-toml's parser does.
type lines map[string]int

// locate parses data with go-toml's parser and records the line of every
// key, array element and inline-table key. It is called only on data the
// decoder accepted, so a parse error just ends the walk early.
func locate(data []byte) lines {
	l := lines{}
	var p unstable.Parser
	p.Reset(data)
	count := map[string]int{} // array-of-tables name -> entries so far
	prefix := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts := keyParts(e.Key())
			var path string
			if e.Kind == unstable.ArrayTable && len(parts) > 0 {
				base := join(resolve(parts[:len(parts)-1], count), parts[len(parts)-1])
				path = fmt.Sprintf("%s[%d]", base, count[base])
				count[base]++
			} else {
				path = resolve(parts, count)
			}
			prefix = path
			l.add(path, p.Shape(firstKey(e).Raw).Start.Line)
		case unstable.KeyValue:
			l.keyValue(&p, prefix, e)
		}
	}
	return l
}

// resolve joins a table header's key parts, giving an array of tables met
// earlier its last entry's index ("release.x" inside the second [[release]]
// is "release[1].x").
func resolve(parts []string, count map[string]int) string {
	path := ""
	for _, k := range parts {
		path = join(path, k)
		if n, ok := count[path]; ok {
			path = fmt.Sprintf("%s[%d]", path, n-1)
		}
	}
	return path
}

func (l lines) keyValue(p *unstable.Parser, prefix string, e *unstable.Node) {
	path := join(prefix, strings.Join(keyParts(e.Key()), "."))
	l.add(path, p.Shape(firstKey(e).Raw).Start.Line)
	l.value(p, path, e.Value())
}

func (l lines) value(p *unstable.Parser, path string, v *unstable.Node) {
	switch v.Kind {
	case unstable.Array:
		i := 0
		for it := v.Children(); it.Next(); i++ {
			n := it.Node()
			el := fmt.Sprintf("%s[%d]", path, i)
			if n.Raw.Length > 0 {
				l.add(el, p.Shape(n.Raw).Start.Line)
			} else if k := firstChildKey(n); k != nil {
				l.add(el, p.Shape(k.Raw).Start.Line)
			}
			l.value(p, el, n)
		}
	case unstable.InlineTable:
		for it := v.Children(); it.Next(); {
			if n := it.Node(); n.Kind == unstable.KeyValue {
				l.keyValue(p, path, n)
			}
		}
	}
}

// add keeps the first line a path is written on.
func (l lines) add(path string, line int) {
	if _, ok := l[path]; !ok && line > 0 {
		l[path] = line
	}
}

// of is the line of path, or of its nearest written ancestor (a missing
// key is reported where its table starts); 0 when none is known.
func (l lines) of(path string) int {
	for path != "" {
		if n, ok := l[path]; ok {
			return n
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

func keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// firstKey is the first key node of a table header or key/value, whose Raw
// range places it in the file.
func firstKey(e *unstable.Node) *unstable.Node {
	it := e.Key()
	if it.Next() {
		return it.Node()
	}
	return e
}

// firstChildKey is the first key inside an inline table element, for
// elements the parser gives no range of their own.
func firstChildKey(n *unstable.Node) *unstable.Node {
	if n.Kind != unstable.InlineTable {
		return nil
	}
	for it := n.Children(); it.Next(); {
		if kv := it.Node(); kv.Kind == unstable.KeyValue {
			return firstKey(kv)
		}
	}
	return nil
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// where is "file:line" of the key path loc in the recipe file, or the
// file alone when the file does not write it.
func (l lines) where(file, loc string) string {
	if n := l.of(loc); n > 0 {
		return fmt.Sprintf("%s:%d", file, n)
	}
	return file
}
