package check

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSARIFURI: artifactLocation.uri is an RFC 3986 URI reference, as
// SARIF requires: a file's name is percent-encoded (quotes, backslashes,
// newlines, spaces, "%", "#", "?", a colon that would read as a scheme),
// relative paths stay relative references and absolute ones are file:
// URIs; decoding gives the name back.
func TestSARIFURI(t *testing.T) {
	for _, tc := range []struct{ path, uri string }{
		{"wheelhouse/a-1.0.whl", "wheelhouse/a-1.0.whl"},
		{"./dist/x.so", "dist/x.so"},
		{".//dist/x.so", "dist/x.so"},
		{"../up/x.so", "../up/x.so"},
		{`wheel"house\x.whl`, "wheel%22house%5Cx.whl"},
		{"a b\nc%d#e?f", "a%20b%0Ac%25d%23e%3Ff"},
		{"c:evil.so", "c%3Aevil.so"},
		{"/opt/lib/libcrypto.so.3", "file:///opt/lib/libcrypto.so.3"},
		{"/tmp/it's here/ü.so", "file:///tmp/it%27s%20here/%C3%BC.so"},
	} {
		got := sarifURI(tc.path)
		if got != tc.uri {
			t.Errorf("sarifURI(%q) = %q, want %q", tc.path, got, tc.uri)
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Errorf("%q: not a URI reference: %v", got, err)
			continue
		}
		want, scheme := strings.TrimPrefix(strings.TrimPrefix(tc.path, "./"), "./"), ""
		if strings.HasPrefix(tc.path, "/") {
			want, scheme = tc.path, "file"
		}
		if tc.path == ".//dist/x.so" {
			want = "dist/x.so"
		}
		if u.Scheme != scheme || u.Path != want {
			t.Errorf("%q parses as scheme %q path %q, want %q %q", got, u.Scheme, u.Path, scheme, want)
		}
	}

	// A real file whose name holds a quote, a backslash and a newline,
	// checked by a relative path and by an absolute one.
	dir := t.TempDir()
	name := "lib\"x\\y\nz.so"
	if err := os.WriteFile(filepath.Join(dir, name), []byte("not a binary"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, p := range []string{name, filepath.Join(dir, name)} {
		var out bytes.Buffer
		err := Run(context.Background(), Options{Path: p, Format: "sarif", Stdout: &out, Env: func(string) string { return "" }})
		if err == nil {
			t.Fatalf("%q: a file that is no binary passed", p)
		}
		var log sarifLog
		if err := json.Unmarshal(out.Bytes(), &log); err != nil {
			t.Fatalf("%q: %v\n%s", p, err, out.Bytes())
		}
		uri := log.Runs[0].Results[0].Locations[0].Physical.Artifact.URI
		if want := sarifURI(p); uri != want || strings.ContainsAny(uri, "\"\\\n") {
			t.Errorf("%q: uri %q, want %q", p, uri, want)
		}
		if u, err := url.Parse(uri); err != nil || u.Path != p {
			t.Errorf("%q: uri %q decodes to %q (%v)", p, uri, u.Path, err)
		}
	}
}

// TestSARIFStable: two runs over one result give the same bytes, rules
// the table lacks included (they are appended in name order, not in map
// order).
func TestSARIFStable(t *testing.T) {
	res := &Result{Path: "x", Binaries: []Binary{
		{Path: "a.so", Problems: []Problem{{Rule: "zz-new-rule", Message: "one"}}},
		{Path: "b.so", Problems: []Problem{{Rule: "aa-new-rule", Message: "two"}}},
		{Path: "c.so", Problems: []Problem{{Rule: "mm-new-rule", Message: "three"}}},
		{Path: "d.so", Problems: []Problem{{Rule: "optimisation", Message: "four"}}},
	}}
	var first []byte
	for i := range 50 {
		var b bytes.Buffer
		if err := SARIF(&b, res, "v1"); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b.Bytes()
			continue
		}
		if !bytes.Equal(b.Bytes(), first) {
			t.Fatalf("run %d differs from the first:\n%s\n---\n%s", i, b.Bytes(), first)
		}
	}
	var log sarifLog
	if err := json.Unmarshal(first, &log); err != nil {
		t.Fatal(err)
	}
	rules := log.Runs[0].Tool.Driver.Rules
	var tail []string
	for _, r := range rules[len(ruleHelp):] {
		tail = append(tail, r.ID)
	}
	if strings.Join(tail, " ") != "aa-new-rule mm-new-rule zz-new-rule" {
		t.Errorf("rules beyond the table: %v", tail)
	}
}
