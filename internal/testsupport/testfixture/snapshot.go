package testfixture

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Snapshot lists every path under dir with its type and, for a regular
// file, its sha256, sorted: two snapshots are equal when the tree is as
// it was. A missing dir is an empty snapshot.
func Snapshot(t testing.TB, dir string) string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == dir {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		e := rel + " " + d.Type().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// ProcessesUnder lists the processes (pid and command line) whose working
// directory or command line is under dir: what an interrupted build must
// not leave running. It reads /proc (Linux).
func ProcessesUnder(dir string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		cmd, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		if strings.HasPrefix(cwd, dir) || strings.Contains(string(cmd), dir) {
			out = append(out, filepath.Base(p)+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}
