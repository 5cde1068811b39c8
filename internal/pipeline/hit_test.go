package pipeline_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/pipeline"
)

// TestMiniCacheHit: a second build:universal2 of the same inputs is served
// by the artifact cache, slices and merge alike, as the same bytes: every
// file verified against its manifest, the cached tarballs checked against
// the verified trees and copied, not written again, and the proof stages
// skipped while what proved an entry is unchanged. An entry whose record
// names other rules is proved again; a cached tarball that does not hold
// the tree is not served, and one is made anew.
func TestMiniCacheHit(t *testing.T) {
	s := miniSettings(t, nil)
	s.Rebuild = false
	var log strings.Builder
	rt := miniRuntime(t, &log)
	build := func() *pipeline.Result {
		t.Helper()
		log.Reset()
		res, err := pipeline.Universal2(context.Background(), s, rt)
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		return res
	}
	if _, err := os.Stat(s.Work); err == nil {
		t.Fatal("work directory exists before the first build")
	}
	first := build()
	if strings.Contains(log.String(), "cache hit") {
		t.Fatalf("first build hit the cache:\n%s", log.String())
	}
	tarballs := func() map[string]string {
		out := map[string]string{}
		for _, n := range []string{"openssl-macos-arm64", "openssl-macos-x86-64", "openssl-macos-universal2"} {
			sum, err := artifact.FileSHA256(filepath.Join(s.Out, n+".tar.gz"))
			if err != nil {
				t.Fatal(err)
			}
			out[n] = sum
		}
		return out
	}
	want := tarballs()

	second := build()
	l := log.String()
	for _, n := range []string{"openssl-macos-arm64", "openssl-macos-x86-64", "openssl-macos-universal2"} {
		if !strings.Contains(l, n+": cache hit") || !strings.Contains(l, "not proved again") {
			t.Errorf("%s not served by the cache without proving again:\n%s", n, l)
		}
	}
	if strings.Contains(l, "configure") || strings.Contains(l, "validated libcrypto.a") || strings.Contains(l, "linked ") {
		t.Errorf("a hit rebuilt, re-validated or re-linked:\n%s", l)
	}
	if got := tarballs(); !equal(got, want) || second.Published.Digests.SHA256 != first.Published.Digests.SHA256 {
		t.Errorf("served tarballs %v, built %v", got, want)
	}

	// Other rules proved the slice entries: they are proved again.
	records, _ := filepath.Glob(filepath.Join(s.Fetch.CacheDir, "artifacts", "*", "proved.json"))
	if len(records) != 3 {
		t.Fatalf("%d proof records, want 3 (two slices, one merge)", len(records))
	}
	for _, rec := range records {
		b, _ := os.ReadFile(rec)
		var p map[string]string
		json.Unmarshal(b, &p)
		p["rules"] = "older rules"
		b, _ = json.Marshal(p)
		os.WriteFile(rec, b, 0o644)
	}
	// A cached tarball that lost a byte is not served.
	tgz, _ := filepath.Glob(filepath.Join(s.Fetch.CacheDir, "artifacts", "*", "openssl-macos-arm64.tar.gz"))
	if len(tgz) != 1 {
		t.Fatalf("cached arm64 tarballs %v", tgz)
	}
	b, _ := os.ReadFile(tgz[0])
	b[len(b)/2] ^= 0xff
	os.WriteFile(tgz[0], b, 0o644)

	build()
	l = log.String()
	if c := strings.Count(l, "verified and proved again"); c != 3 {
		t.Errorf("%d entries proved again, want 3:\n%s", c, l)
	}
	if !strings.Contains(l, "openssl-macos-arm64: cached tarball not served") {
		t.Errorf("the damaged tarball was not refused:\n%s", l)
	}
	if got := tarballs(); !equal(got, want) {
		t.Errorf("tarballs after proving again %v, want %v", got, want)
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
