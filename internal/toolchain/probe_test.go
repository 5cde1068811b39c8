package toolchain

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFirstLineMemo: a tool is asked once a process while its file is
// unchanged, again once it is replaced on disk; a tool that fails is asked
// again; versions names the first failing tool.
func TestFirstLineMemo(t *testing.T) {
	t.Setenv("OSSLBUILD_PROBE_CACHE", "off")
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	tool := filepath.Join(dir, "tool")
	write := func(version string) {
		t.Helper()
		body := "#!/bin/sh\necho x >> " + calls + "\necho '" + version + "'\necho second line\n"
		if err := os.WriteFile(tool+".tmp", []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tool+".tmp", tool); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "x")
	}
	write("tool version 1")
	link := filepath.Join(dir, "tool-link")
	if err := os.Symlink(tool, link); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		for _, p := range []string{tool, link} {
			got, err := firstLine(t.Context(), p, "--version")
			if err != nil || got != "tool version 1" {
				t.Fatalf("ask %d of %s: %q, %v", i, p, got, err)
			}
		}
	}
	if n := count(); n != 1 {
		t.Fatalf("the unchanged tool was run %d times, want once", n)
	}
	// Another modification time even on a coarse file system.
	time.Sleep(10 * time.Millisecond)
	write("tool version 2")
	if got, err := firstLine(t.Context(), link, "--version"); err != nil || got != "tool version 2" {
		t.Fatalf("after the tool was replaced: %q, %v; want version 2", got, err)
	}
	if n := count(); n != 2 {
		t.Fatalf("the replaced tool was run %d times in all, want twice", n)
	}

	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("#!/bin/sh\necho x >> "+calls+"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := firstLine(t.Context(), bad, "--version"); err == nil {
			t.Fatal("a failing tool gave no error")
		}
	}
	if n := count(); n != 4 {
		t.Fatalf("a failing tool was asked %d times in all (with the good one's 2), want 4: failures are not kept", n)
	}

	got, err := versions(t.Context(), map[string]string{"b": bad, "a": tool, "z": filepath.Join(dir, "missing")})
	if err == nil || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("versions with a failing tool: %v, want bad's error (b sorts before z)", err)
	}
	if got["a"] != tool+": tool version 2" {
		t.Fatalf("versions: a = %q", got["a"])
	}
}

// TestProbeCacheOnDisk: a new process (here: the in-process memo
// forgotten) takes the answer from ProbeDir without running the tool,
// until the tool is replaced; a damaged or foreign answer file is not an
// answer.
func TestProbeCacheOnDisk(t *testing.T) {
	t.Setenv("OSSLBUILD_PROBE_CACHE", t.TempDir())
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	tool := filepath.Join(dir, "tool")
	write := func(version string) {
		t.Helper()
		body := "#!/bin/sh\necho x >> " + calls + "\necho '" + version + "'\n"
		if err := os.WriteFile(tool+".tmp", []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tool+".tmp", tool); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "x")
	}
	forget := func() {
		probes.Lock()
		clear(probes.m)
		probes.Unlock()
	}
	ask := func(want string) {
		t.Helper()
		got, err := firstLine(t.Context(), tool, "--version")
		if err != nil || got != want {
			t.Fatalf("asked: %q, %v; want %q", got, err, want)
		}
	}
	write("v1")
	ask("v1")
	forget()
	ask("v1")
	if n := count(); n != 1 {
		t.Fatalf("the tool ran %d times for two processes, want once (the second reads the answer from disk)", n)
	}
	key, _ := probeKey([]string{tool, "--version"})
	f := probeFile(key)
	for name, body := range map[string]string{
		"truncated":   strconv.Quote(key) + "\nv1",
		"another key": strconv.Quote(key+"x") + "\nforged\n",
		"empty":       "",
	} {
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		forget()
		before := count()
		ask("v1")
		if count() != before+1 {
			t.Fatalf("%s answer file: taken as the answer, want the tool run again", name)
		}
	}
	time.Sleep(10 * time.Millisecond)
	write("v2")
	forget()
	ask("v2")
}
