package fetch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// killedFetchEnv makes the test binary a fetch for TestKilledFetch to kill:
// "<cache>|<url>|<sha256>|<size>".
const killedFetchEnv = "OSSLBUILD_TEST_KILLED_FETCH"

func TestMain(m *testing.M) {
	if spec := os.Getenv(killedFetchEnv); spec != "" {
		os.Exit(fetchUntilKilled(spec))
	}
	os.Exit(m.Run())
}

// fetchUntilKilled fetches as spec says with no deadline and no minimum
// rate, from a server that never finishes: only a kill ends it.
func fetchUntilKilled(spec string) int {
	p := strings.Split(spec, "|")
	size, _ := strconv.ParseInt(p[3], 10, 64)
	f, err := New(Options{CacheDir: p[0], Deadline: -1, MinRate: -1})
	if err == nil {
		_, err = f.Fetch(context.Background(), File{Name: tarName, SHA256: p[2], Size: size, URLs: []string{p[1]}})
	}
	fmt.Fprintf(os.Stderr, "fetch returned, but was to be killed: %v\n", err)
	return 2
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var tmps []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			tmps = append(tmps, filepath.Join(dir, e.Name()))
		}
	}
	return tmps
}

// TestKilledFetch: a fetch killed mid-download (SIGKILL: no deferred
// cleanup runs) leaves its temporary file in the cache; the next fetch into
// that entry removes it, since no live process holds its lock.
func TestKilledFetch(t *testing.T) {
	if !sweepsByLock {
		t.Skipf("temporary files are swept by age only on %s", runtime.GOOS)
	}
	t.Parallel()
	r, file := fixture(t)
	srv := serve(t, trickle(file.Size))
	cache := t.TempDir()
	entry := filepath.Join(cache, "sha256", file.SHA256)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killedFetchEnv+"="+strings.Join([]string{cache, srv.url(tarName), file.SHA256, strconv.FormatInt(file.Size, 10)}, "|"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	// Wait for the download to be under way: its temporary file exists.
	for start := time.Now(); len(tempFiles(t, entry)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > safety {
			t.Fatalf("no temporary file in %s after %v; helper: %s", entry, safety, stderr.String())
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true
	left := tempFiles(t, entry)
	if len(left) != 1 {
		t.Fatalf("after the kill, temporary files %v, want the one the download had", left)
	}

	good := serve(t, serveDir(filepath.Dir(r.Tarball)))
	file.URLs = []string{good.url(tarName)}
	if _, err := newFetcher(t, Options{CacheDir: cache}).Fetch(context.Background(), file); err != nil {
		t.Fatal(err)
	}
	assertClean(t, cache)
}

// TestLiveTempFileNotSwept: a temporary file whose owner is alive (holds its
// lock) survives a sweep however fresh; once released, it is swept.
func TestLiveTempFileNotSwept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	live, err := createTemp(dir, tempPattern(tarName))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := prepareDir(dir, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live.Name()); err != nil {
		t.Fatalf("a live download's temporary file was swept: %v", err)
	}
	live.Close()
	// Unlocked, but in a directory of discovered files handed to callers
	// unlocked: only age counts there.
	if err := prepareDir(dir, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live.Name()); err != nil {
		t.Fatalf("swept from a directory swept by age only: %v", err)
	}
	if !sweepsByLock {
		return
	}
	if err := prepareDir(dir, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live.Name()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("released temporary file not swept: %v", err)
	}
}

// TestOriginRecordSurvivesASweep: another fetch sweeping the cache
// directory at the moment the origin record is renamed into place (the
// hook stands for that instant, deterministically) leaves the record to its
// writer, which still holds it locked; the record then names the origin.
func TestOriginRecordSurvivesASweep(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, tarName)
	swept := false
	beforeRename = func(tmp string) {
		if err := prepareDir(dir, true); err != nil {
			t.Error(err)
		}
		_, err := os.Stat(tmp)
		swept = err != nil
	}
	defer func() { beforeRename = nil }()
	if err := writeOrigin(final, "https://example.invalid/"+tarName); err != nil {
		t.Fatalf("origin record lost to a concurrent sweep: %v", err)
	}
	if swept {
		t.Error("the sweep removed the record's temporary file")
	}
	if got := readOrigin(final); got != "https://example.invalid/"+tarName {
		t.Errorf("origin %q", got)
	}
}
