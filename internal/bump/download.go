package bump

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/osslbuild/osslbuild/internal/source/fetch"
)

// downloaded is a tarball staged on disk with its signature, not yet trusted.
type downloaded struct {
	tarball fetch.Discovered
	sig     fetch.Discovered
	asc     []byte // the signature's bytes
}

// gzipMagic starts every .tar.gz; anything else (an error page in JSON or
// plain text, say) is not worth checking a signature over.
var gzipMagic = []byte{0x1f, 0x8b}

// pgpArmor starts an armored detached signature.
var pgpArmor = []byte("-----BEGIN PGP SIGNATURE-----")

// download stages the tarball and the signature beside whichever source
// served it in f's staging area, through fetch.Discover (mirror first, then
// urls). A source fails as a whole, and the next one is tried, if either
// file is missing or obviously not what it claims to be; judging the
// signature is the caller's business.
func download(ctx context.Context, f *fetch.Fetcher, name string, urls []string, logf func(string, ...any)) (*downloaded, error) {
	dl := &downloaded{}
	accept := func(ctx context.Context, d fetch.Discovered) error {
		if err := checkGzip(d); err != nil {
			return err
		}
		sig, err := f.DiscoverSignature(ctx, d)
		if err != nil {
			// Its error, an *fetch.Error for its one source, reads better
			// on the line of the tarball's source as that source's URL and
			// error than as a nested list.
			u := d.URL + ".asc"
			if fe, ok := errors.AsType[*fetch.Error](err); ok && len(fe.Attempts) == 1 {
				u, err = fe.Attempts[0].URL, fe.Attempts[0].Err
			}
			return fmt.Errorf("tarball served (%d bytes), but its signature %s: %w", d.Size, u, err)
		}
		asc, err := os.ReadFile(sig.Path)
		if err == nil && !bytes.Contains(asc, pgpArmor) {
			err = fmt.Errorf("tarball served, but %s is not an armored OpenPGP signature (starting %q)", sig.URL, start(asc))
		}
		if err != nil {
			os.Remove(sig.Path)
			return err
		}
		dl.sig, dl.asc = sig, asc
		return nil
	}
	tb, err := f.Discover(ctx, fetch.Discovery{Name: name, URLs: urls, MaxSize: MaxTarballSize, Accept: accept})
	if err != nil {
		return nil, err
	}
	for _, a := range tb.Failed {
		logf("skipped %s: %v", a.URL, a.Err)
	}
	dl.tarball = tb
	return dl, nil
}

// checkGzip refuses a tarball that does not start like one.
func checkGzip(d fetch.Discovered) error {
	fh, err := os.Open(d.Path)
	if err != nil {
		return err
	}
	defer fh.Close()
	head, err := io.ReadAll(io.LimitReader(fh, 60))
	if err != nil {
		return fmt.Errorf("read %s: %w", d.Path, err)
	}
	if !bytes.HasPrefix(head, gzipMagic) {
		return fmt.Errorf("not a gzip file (%d bytes, starting %q)", d.Size, start(head))
	}
	return nil
}
