package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestArgs: flags before and after the paths, a flag's value taken as the
// flag's, and everything after "--" a path, so a file named like a flag
// (-python, -version) is a file. Usage errors (a bad flag or flag value)
// exit 2, as docs/wheels.md promises; a file that cannot be checked exits 1.
func TestArgs(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("HOSTILE_PIDS", filepath.Join(t.TempDir(), "pids"))
	dir := t.TempDir()
	readme := filepath.Join(dir, "README")
	os.WriteFile(readme, []byte("hello"), 0o644)
	sleeper, _ := filepath.Abs("../../internal/check/python/testdata/sleeper")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // in stdout
		stderr string // in stderr
	}{
		{"-- makes -python a path", []string{"--", "-python", readme}, 1, "", "lstat -python: no such file or directory"},
		{"after --, every argument is a path", []string{readme, "--", readme, "-python", "-version"}, 1, "", "lstat -python: no such file or directory"},
		{"-- makes -version a path", []string{"--", "-version"}, 1, "", "lstat -version: no such file or directory"},
		{"flags, then -- and paths", []string{"-minopt=3", "--", readme}, 1, "unrecognised file format", ""},
		{"a flag's value is the flag's, not a path", []string{"-arch", "arm64", readme}, 1, "unrecognised file format", ""},
		{"-version before --", []string{"-version", "--", "-python"}, 0, "osslcheck ", ""},
		{"-minopt=7", []string{readme, "-minopt=7"}, 2, "", `-minopt "7": expected 0, 1, 2, 3, s or z`},
		{"-isa=haswell", []string{readme, "-isa=haswell"}, 2, "", "-isa=haswell: unknown level"},
		{"-arch=arm65", []string{"-arch=arm65", readme}, 2, "", "-arch=arm65: unknown architecture"},
		{"-format=xml", []string{"-format=xml", readme}, 2, "", "-format=xml: want text, json or sarif"},
		{"-json with -format=sarif", []string{"-json", "-format=sarif", readme}, 2, "", "-json and -format=sarif: give one"},
		{"-fail-on=severe", []string{readme, "-fail-on=severe"}, 2, "", "-fail-on=severe: want low, moderate, high or critical (or none)"},
		{"-failon, as mage spells it", []string{"-failon", "unknown", readme}, 2, "", "-fail-on=unknown: want low, moderate, high or critical"},
		{"-fail-on=high is no usage error", []string{"-fail-on=high", "--", readme}, 1, "unrecognised file format", ""},
		{"-vex naming no file", []string{"-vex", filepath.Join(dir, "absent.txt"), readme}, 1, "", "-vex=" + filepath.Join(dir, "absent.txt") + ": file of assessed CVEs: open "},
		{"-vex naming a malformed list", []string{"-vex=" + readme, readme}, 1, "", readme + ":1: malformed file of assessed CVEs: \"hello\": want \"CVE-YYYY-NNNN reason\""},
		{"an unknown flag", []string{"-fast", readme}, 2, "", "flag provided but not defined: -fast"},
		{"a flag without its value", []string{readme, "-minopt"}, 2, "", "flag needs an argument: -minopt"},
		{"no path", nil, 2, "", "usage: osslcheck"},
		{"-python-timeout not a duration", []string{"-python", "-python-timeout=soon"}, 2, "", "invalid value \"soon\" for flag -python-timeout"},
		{"-python-timeout ends a hanging interpreter", []string{"-python", "-python-timeout=500ms", sleeper}, 1, "",
			"python interpreter " + sleeper + ": no exit within 500ms (-python-timeout): killed its process group"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), slices.Clone(tc.args), &out, &errb)
			if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("exit %d, want %d (stdout wants %q, stderr %q)\nstdout:\n%s\nstderr:\n%s", code, tc.code, tc.stdout, tc.stderr, out.String(), errb.String())
			}
		})
	}
}
