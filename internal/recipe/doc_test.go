package recipe

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// tomlKeys lists the TOML keys of struct type t, embedded structs
// included.
func tomlKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			keys = append(keys, tomlKeys(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}

// TestRecipesDocKeys: docs/recipes.md documents every key the schema has,
// in the table of its section, and no key the schema lacks: a key added to
// the decoder without its page fails here.
func TestRecipesDocKeys(t *testing.T) {
	b, err := os.ReadFile("../../docs/recipes.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	sections := map[string]reflect.Type{
		"### Top level": reflect.TypeOf(fileSchema{}),
		"### `options` entries (top level and per target)": reflect.TypeOf(Option{}),
		"### `[targets.<name>]`":                           reflect.TypeOf(Target{}),
		"### `[[release]]`":                                reflect.TypeOf(Release{}),
		"### `release_keys` entries":                       reflect.TypeOf(ReleaseKey{}),
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\|")
	for heading, typ := range sections {
		i := strings.Index(doc, "\n"+heading+"\n")
		if i < 0 {
			t.Errorf("docs/recipes.md has no section %q", heading)
			continue
		}
		body := doc[i+len(heading)+2:]
		if j := strings.Index(body, "\n### "); j >= 0 {
			body = body[:j]
		}
		if j := strings.Index(body, "\n## "); j >= 0 {
			body = body[:j]
		}
		var documented []string
		for _, m := range row.FindAllStringSubmatch(body, -1) {
			documented = append(documented, m[1])
		}
		want := slices.Sorted(slices.Values(tomlKeys(typ)))
		slices.Sort(documented)
		if !slices.Equal(documented, slices.Compact(want)) {
			t.Errorf("%s documents %v; the schema has %v", heading, documented, want)
		}
	}
}
