// Package source is the source stage of a build: fetch a release's tarball
// into the verified cache, prove it with OpenSSL's signature against the
// pinned keys, and unpack and patch it into a clean tree. It composes the
// single-purpose packages fetch, signature, unpack and patch.
package source

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/source/fetch"
	"github.com/osslbuild/osslbuild/internal/source/release"
	"github.com/osslbuild/osslbuild/internal/source/signature"
)

// Verified is a release tarball in the cache whose digest, size and (when
// present) signature have been checked.
type Verified struct {
	Release   release.Release
	Tarball   fetch.Result
	Signature *fetch.Result     // nil when the release allows no signature and none was found
	Signer    *signature.Result // nil likewise
}

// FileFor is the fetch request for a release.
func FileFor(rel release.Release) fetch.File {
	return fetch.File{Name: rel.FileName(), SHA256: rel.SHA256, Size: rel.Size, URLs: rel.URLs}
}

// Fetch downloads (or finds in the cache) the release and its signature and
// verifies both. The signature is verified before it enters the cache and on
// every cache hit, so one that fails (a source served a foreign or truncated
// .asc once) is removed and fetched again, and the error says when the cache
// held it.
func Fetch(ctx context.Context, f *fetch.Fetcher, rel release.Release) (*Verified, error) {
	file := FileFor(rel)
	tb, err := f.Fetch(ctx, file)
	if err != nil {
		return nil, err
	}
	return fetchSignature(ctx, f, rel, tb)
}

// fetchSignature fetches the signature of the verified tarball tb (from
// beside tb.URL, or the cache) and verifies it against rel's signers.
func fetchSignature(ctx context.Context, f *fetch.Fetcher, rel release.Release, tb fetch.Result) (*Verified, error) {
	file := FileFor(rel)
	v := &Verified{Release: rel, Tarball: tb}
	var signer signature.Result
	sig, err := f.FetchSignature(ctx, file, tb, SignatureCheck(tb.Path, rel, &signer))
	if err != nil {
		if fe, ok := errors.AsType[*fetch.Error](err); ok && !rel.SignatureRequired() && fe.NotFoundAnywhere() {
			return v, nil
		}
		if rel.SignatureRequired() {
			return nil, fmt.Errorf("verify %s: signature required by the recipe: %w", file.Name, err)
		}
		return nil, fmt.Errorf("verify %s: %w", file.Name, err)
	}
	v.Signature, v.Signer = &sig, &signer
	return v, nil
}

// SignatureCheck is the fetch.Check for a release's detached signature:
// OpenPGP over the tarball at tarball (verified against its pinned digest
// already) by a key rel.Signers allows, found in osslbuild's keys/ or
// among the recipe's release keys (rel.Keys). The signer of an accepted
// signature is stored in *signer (the zero Result for a refused one).
func SignatureCheck(tarball string, rel release.Release, signer *signature.Result) fetch.Check {
	return func(ctx context.Context, sig fetch.Result) error {
		asc, err := ctxio.ReadFile(ctx, sig.Path, true, fetch.MaxSignatureSize)
		if err != nil {
			return err
		}
		*signer, err = VerifyTarball(ctx, tarball, asc, rel)
		return err
	}
}

// VerifyTarball checks the detached signature asc over the tarball at path:
// made by a key rel.Signers allows, found in osslbuild's keys/ or among the
// recipe's release keys (rel.Keys).
func VerifyTarball(ctx context.Context, path string, asc []byte, rel release.Release) (signature.Result, error) {
	t, _, err := ctxio.OpenRegular(path, true)
	if err != nil {
		return signature.Result{}, err
	}
	defer t.Close()
	return signature.Verifier{Extra: rel.Keys}.Verify(ctx, t, asc, rel.Signers)
}

// Describe is a one-line account of a verified release for logs.
func (v *Verified) Describe() string {
	s := fmt.Sprintf("%s sha256 %s (%d bytes) from %s", v.Release.FileName(), v.Tarball.SHA256, v.Tarball.Size, v.Tarball.URL)
	if v.Tarball.Cached {
		s += " (cached)"
	}
	if v.Tarball.Evicted != nil {
		s += " (replacing a bad cached copy)"
	}
	if v.Signer != nil {
		s += fmt.Sprintf("; signed %s by %s (key %s; verified with %s %s)", v.Signer.Created.Format(time.DateOnly), v.Signer.Signer, v.Signer.SigningKey, v.Signer.Key.Origin, v.Signer.Key.Path)
		if v.Signature != nil && v.Signature.Evicted != nil {
			s += fmt.Sprintf("; signature fetched again from %s: the cached one failed: %v", v.Signature.URL, v.Signature.Evicted)
		}
	} else {
		s += "; no signature (allowed by the recipe)"
	}
	return s
}
