package fetch

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/internal/testsupport/sigtest"
)

// badSignatures are the .asc files a careless or hostile source serves for
// the genuine tarball, with what verification says of each.
func badSignatures(t *testing.T, tarball string, genuine []byte) []struct {
	name string
	asc  []byte
	is   error
} {
	return []struct {
		name string
		asc  []byte
		is   error
	}{
		{"foreign", sigtest.Foreign(t, tarball), signature.ErrUnknownSigner},
		{"truncated", genuine[:len(genuine)/2], signature.ErrMalformed},
	}
}

// withSignature serves the files in dir, but asc for any .asc.
func withSignature(dir string, asc []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if path.Ext(r.URL.Path) == ".asc" {
			w.Write(asc)
			return
		}
		serveDir(dir)(w, r)
	}
}

// plant puts asc into the cache as the signature of tar, recorded as coming
// from origin: what an earlier version, or a crash, could have left.
func plant(t *testing.T, tar Result, asc []byte, origin string) string {
	t.Helper()
	p := tar.Path + ".asc"
	if err := os.WriteFile(p, asc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+originSuffix, []byte(origin+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSignatureCheck(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	dir := filepath.Dir(r.Tarball)
	genuine, err := os.ReadFile(r.Signature)
	if err != nil {
		t.Fatal(err)
	}
	sigName := tarName + ".asc"

	for _, bad := range badSignatures(t, r.Tarball, genuine) {
		t.Run(bad.name+" from a source: passed over, never cached", func(t *testing.T) {
			t.Parallel()
			file := file
			evil := serve(t, withSignature(dir, bad.asc))
			good := serve(t, serveDir(dir))
			file.URLs = []string{evil.url(tarName), good.url(tarName)}
			f := newFetcher(t, Options{})
			tar, err := f.Fetch(context.Background(), file)
			if err != nil || tar.URL != evil.url(tarName) {
				t.Fatalf("tarball: %+v, %v", tar, err)
			}
			// The tarball's origin is asked first; its signature is
			// rejected and the next source's accepted.
			res, err := f.FetchSignature(context.Background(), file, tar, verifies(tar))
			if err != nil {
				t.Fatal(err)
			}
			if res.URL != good.url(sigName) || res.Cached || res.Evicted != nil {
				t.Errorf("signature result %+v, want a fresh download from %s", res, good.url(sigName))
			}
			if got, _ := os.ReadFile(res.Path); !bytes.Equal(got, genuine) {
				t.Error("the cached signature is not the genuine one")
			}
			if evil.count(sigName) != 1 || good.count(sigName) != 1 {
				t.Errorf("signature requests: evil %d, good %d; want 1, 1 (a rejection is not retried)", evil.count(sigName), good.count(sigName))
			}

			// With only the hostile source: refused, naming it and why, and
			// nothing cached for the next run to trip over.
			other := newFetcher(t, Options{})
			file.URLs = []string{evil.url(tarName)}
			tar2, err := other.Fetch(context.Background(), file)
			if err != nil {
				t.Fatal(err)
			}
			_, err = other.FetchSignature(context.Background(), file, tar2, verifies(tar2))
			wantErr(t, err, []error{ErrRejected, bad.is, ErrAllFailed}, []string{"fetch " + sigName + ": all 1 source failed:\n  " + evil.url(sigName) + ": "})
			if strings.Contains(err.Error(), "cache:") {
				t.Errorf("the cache is blamed, though it held nothing:\n%v", err)
			}
			if _, err := os.Stat(tar2.Path + ".asc"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("rejected signature cached: %v", err)
			}
		})

		t.Run(bad.name+" in the cache: removed and fetched again", func(t *testing.T) {
			t.Parallel()
			file, good := served(t, file, serveDir(dir))
			f, tar := fetched(t, Options{}, file)
			planted := plant(t, tar, bad.asc, "http://evil.example/"+sigName)
			res, err := f.FetchSignature(context.Background(), file, tar, verifies(tar))
			if err != nil {
				t.Fatal(err)
			}
			if res.Cached || res.URL != good.url(sigName) {
				t.Errorf("result %+v, want a download from %s", res, good.url(sigName))
			}
			if res.Evicted == nil || !errors.Is(res.Evicted, bad.is) ||
				!strings.HasPrefix(res.Evicted.Error(), planted+" (downloaded from http://evil.example/"+sigName+"): ") {
				t.Errorf("Evicted = %v, want the planted file, its origin and %v", res.Evicted, bad.is)
			}
			if got, _ := os.ReadFile(planted); !bytes.Equal(got, genuine) {
				t.Error("the cache does not hold the genuine signature now")
			}
			if o := readOrigin(planted); o != good.url(sigName) {
				t.Errorf("origin record %q, want %q", o, good.url(sigName))
			}
		})

		t.Run(bad.name+" in the cache, no source: the cache is named", func(t *testing.T) {
			t.Parallel()
			file := file
			f, tar := fetched(t, Options{Mirror: dir}, file)
			planted := plant(t, tar, bad.asc, "http://evil.example/"+sigName)
			tar.URL = refusedURL(t)
			_, err := newFetcher(t, Options{CacheDir: f.CacheDir()}).FetchSignature(context.Background(), file, tar, verifies(tar))
			wantErr(t, err, []error{ErrRejected, bad.is, ErrAllFailed}, []string{
				"fetch " + sigName + ": all 1 source failed:\n  cache: " + planted + " (downloaded from http://evil.example/" + sigName + "): ",
				"(removed)\n  " + tar.URL + ".asc: connection error",
			})
			t.Log(err)
			if _, err := os.Stat(planted); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("bad signature still cached: %v", err)
			}
			if _, err := os.Stat(planted + originSuffix); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("its origin record is still there: %v", err)
			}
		})
	}

	t.Run("a good cached signature is checked on every use", func(t *testing.T) {
		t.Parallel()
		file := file
		f, tar := fetched(t, Options{Mirror: dir}, file)
		var calls atomic.Int32
		counted := func(ctx context.Context, sig Result) error {
			calls.Add(1)
			return verifies(tar)(ctx, sig)
		}
		for i, wantCached := range []bool{false, true} {
			res, err := f.FetchSignature(context.Background(), file, tar, counted)
			if err != nil || res.Cached != wantCached {
				t.Fatalf("fetch %d: %+v, %v; want Cached=%v", i, res, err, wantCached)
			}
		}
		if calls.Load() != 2 {
			t.Errorf("check called %d times, want 2 (download, cache hit)", calls.Load())
		}
	})

	t.Run("no check", func(t *testing.T) {
		t.Parallel()
		f, tar := fetched(t, Options{Mirror: dir}, file)
		_, err := f.FetchSignature(context.Background(), file, tar, nil)
		wantErr(t, err, nil, []string{"no check given"})
	})
}

// TestSeed: files downloaded elsewhere enter the cache verified, recording
// where they were downloaded from, never the local path they were read from.
func TestSeed(t *testing.T) {
	t.Parallel()
	r, file := fixture(t)
	genuine, err := os.ReadFile(r.Signature)
	if err != nil {
		t.Fatal(err)
	}
	const origin = "https://github.com/openssl/openssl/releases/download/openssl-4.0.2/" + tarName
	// A private copy, as recipe:bump stages one, removed before the cache is read.
	stage := t.TempDir()
	copyTo := func(name string, b []byte) string {
		p := filepath.Join(stage, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tarball, err := os.ReadFile(r.Tarball)
	if err != nil {
		t.Fatal(err)
	}
	tb, asc := copyTo(tarName, tarball), copyTo(tarName+".asc", genuine)

	f := newFetcher(t, Options{Offline: true})
	tar, err := f.Seed(context.Background(), file, tb, origin)
	if err != nil {
		t.Fatal(err)
	}
	wantFile(t, tar, file)
	sig, err := f.SeedSignature(context.Background(), file, tar, asc, origin+".asc", verifies(tar))
	if err != nil {
		t.Fatal(err)
	}
	if tar.URL != origin || sig.URL != origin+".asc" {
		t.Errorf("seeded with origins %q, %q; want %q and .asc", tar.URL, sig.URL, origin)
	}
	if err := os.RemoveAll(stage); err != nil {
		t.Fatal(err)
	}
	tar2, err := f.Fetch(context.Background(), file)
	if err != nil || !tar2.Cached || tar2.URL != origin {
		t.Errorf("cache hit after seeding: %+v, %v; want origin %q", tar2, err, origin)
	}
	sig2, err := f.FetchSignature(context.Background(), file, tar2, verifies(tar2))
	if err != nil || !sig2.Cached || sig2.URL != origin+".asc" {
		t.Errorf("signature cache hit after seeding: %+v, %v; want origin %q.asc", sig2, err, origin)
	}

	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		stage := t.TempDir()
		short := filepath.Join(stage, tarName)
		if err := os.WriteFile(short, tarball[:1000], 0o644); err != nil {
			t.Fatal(err)
		}
		foreign := filepath.Join(stage, tarName+".asc")
		if err := os.WriteFile(foreign, sigtest.Foreign(t, r.Tarball), 0o644); err != nil {
			t.Fatal(err)
		}
		f := newFetcher(t, Options{})
		_, err := f.Seed(context.Background(), file, short, origin)
		wantErr(t, err, []error{ErrMismatch}, []string{"(downloaded from " + origin + "): size mismatch"})
		_, err = f.Seed(context.Background(), file, short, "")
		wantErr(t, err, nil, []string{`seed ` + tarName + `: origin "": want the http(s) or file URL`})

		tar, err := newFetcher(t, Options{CacheDir: f.CacheDir(), Mirror: filepath.Dir(r.Tarball)}).Fetch(context.Background(), file)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.SeedSignature(context.Background(), file, tar, foreign, origin+".asc", verifies(tar))
		wantErr(t, err, []error{ErrRejected, signature.ErrUnknownSigner}, []string{"(downloaded from " + origin + ".asc): unknown signer"})
		if _, err := os.Stat(tar.Path + ".asc"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("rejected signature seeded: %v", err)
		}
	})
}
