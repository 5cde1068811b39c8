package check

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// ourCommand is an annotation check itself writes: its file= and title=
// properties and message are escaped, so nothing in them ends the command.
var ourCommand = regexp.MustCompile(`^::(error|warning) (file=[^:]*,)?title=osslbuild check%3A[^:]*::`)

// injectsCommand reports whether a log line would make the GitHub Actions
// runner run a workflow command check did not mean to write: "::" starting
// the line after blanks, or the legacy "##[" anywhere in a line that is
// not one of check's own commands (the runner parses those first, as
// "::" commands, and never looks for "##[" in them).
func injectsCommand(line string) bool {
	rest := strings.TrimLeftFunc(line, unicode.IsSpace)
	if ourCommand.MatchString(rest) {
		return false
	}
	return strings.HasPrefix(rest, "::") || strings.Contains(line, "##[")
}

// File and member names built to inject workflow commands are printed as
// text under GitHub Actions: in the table, the failures, the annotations,
// the JSON and the error mage prints as "Error: ...".
func TestActionsInjection(t *testing.T) {
	k := newKit(t)
	bad := k.macho("bad.o", "arm64-apple-macos11", cversion(lineArmO0, "darwin64-arm64-cc"))
	dir := filepath.Join(t.TempDir(), "dist")
	os.Mkdir(dir, 0o755)
	for _, name := range []string{"a\n::warning title=injected::pwned", "::error::injected", "##[error]injected", "x\r::notice::injected", "  ::set-output name=x::y"} {
		testfixture.CopyFile(t, bad, filepath.Join(dir, name))
	}
	// The example: an archive member named "a\n::warning ...".
	obj, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	var tgz bytes.Buffer
	gz := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Name: "a\n::warning ::injected.o", Mode: 0o644, Size: int64(len(obj)), Typeflag: tar.TypeReg})
	tw.Write(obj)
	tw.Close()
	gz.Close()
	os.WriteFile(filepath.Join(dir, "m.tar.gz"), tgz.Bytes(), 0o644)

	actions := func(k string) string { return map[string]string{"GITHUB_ACTIONS": "true"}[k] }
	for _, asJSON := range []bool{false, true} {
		var out, stderr bytes.Buffer
		err := Run(context.Background(), Options{Path: dir, JSON: asJSON, Stdout: &out, Stderr: &stderr, Env: actions})
		if !errors.Is(err, ErrFailed) {
			t.Fatalf("json %v: err = %v", asJSON, err)
		}
		mage := "Error: " + err.Error() // what mage prints
		if strings.ContainsAny(mage, "\r\n") || injectsCommand(mage) {
			t.Errorf("json %v: the returned error can inject a command: %q", asJSON, mage)
		}
		for _, l := range strings.Split(out.String()+stderr.String(), "\n") {
			if injectsCommand(l) {
				t.Errorf("json %v: line injects a command: %q", asJSON, l)
			}
		}
		if asJSON {
			var res Result
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatalf("stdout is no longer JSON: %v", err)
			}
			names := map[string]bool{}
			for _, b := range res.Binaries {
				names[filepath.Base(b.Path)+"|"+b.Member] = true
			}
			for _, w := range []string{"##[error]injected|", "m.tar.gz|a\n::warning ::injected.o"} {
				if !names[w] {
					t.Errorf("JSON lost the name %q: %v", w, names)
				}
			}
		} else if !strings.Contains(out.String(), "FAIL "+filepath.Join(dir, "##%5Berror]injected")) || !strings.Contains(out.String(), "\n%3A:error::injected ") {
			t.Errorf("names not shown escaped:\n%s\n%s", out.String(), mage)
		}
	}
	// The example alone: the final error names the member, escaped.
	err = Run(context.Background(), Options{Path: filepath.Join(dir, "m.tar.gz"), Stdout: &bytes.Buffer{}, Env: actions})
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "m.tar.gz(a%0A::warning ::injected.o) arm64: compiler line has no -O flag") ||
		strings.ContainsAny(err.Error(), "\r\n") {
		t.Errorf("final error: %q", err)
	}
	// Outside GitHub Actions the terminal gets no control characters.
	var out bytes.Buffer
	err = Run(context.Background(), Options{Path: dir, Stdout: &out, Env: noEnv})
	if strings.ContainsAny(err.Error(), "\r\n\x1b") || strings.ContainsAny(strings.ReplaceAll(out.String(), "\n", ""), "\r\x1b") {
		t.Errorf("control characters printed: %q", err)
	}
}
