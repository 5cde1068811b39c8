package upstream

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/advisory"
	"github.com/osslbuild/osslbuild/internal/ctxio"
)

// maxFile bounds one record or text read.
const maxFile = 4 << 20

// ReadDir parses every secjson/CVE-*.json and secadv/*.txt under dir (a
// checkout of openssl/release-metadata), in name order; a record whose
// file name is another CVE's is an error.
func ReadDir(dir string) ([]*Record, []*Text, error) {
	jsons, err := filepath.Glob(filepath.Join(dir, "secjson", "CVE-*.json"))
	if err != nil {
		return nil, nil, err
	}
	if len(jsons) == 0 {
		return nil, nil, fmt.Errorf("%s: no secjson/CVE-*.json: not a checkout of openssl/release-metadata", dir)
	}
	txts, err := filepath.Glob(filepath.Join(dir, "secadv", "*.txt"))
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(jsons)
	slices.Sort(txts)
	var records []*Record
	for _, p := range jsons {
		b, err := ctxio.ReadFile(context.Background(), p, true, maxFile)
		if err != nil {
			return nil, nil, err
		}
		name := "secjson/" + filepath.Base(p)
		r, err := ParseRecord(name, b)
		if err != nil {
			return nil, nil, err
		}
		if want := strings.TrimSuffix(filepath.Base(p), ".json"); r.CVE != want {
			return nil, nil, fmt.Errorf("%s: %w: the record is of %s", name, ErrRecord, r.CVE)
		}
		records = append(records, r)
	}
	var texts []*Text
	for _, p := range txts {
		b, err := ctxio.ReadFile(context.Background(), p, true, maxFile)
		if err != nil {
			return nil, nil, err
		}
		t, err := ParseText("secadv/"+filepath.Base(p), b)
		if err != nil {
			return nil, nil, err
		}
		texts = append(texts, t)
	}
	return records, texts, nil
}

// OpenSSL is the short name of OpenSSL's CNA in a record's cveMetadata.
const OpenSSL = "openssl"

// ReadCVEDir parses every CVE-*.json under dir (a checkout of
// CVEProject/cvelistV5, or the part of one that was read: cves/2026/...)
// and returns, in name order, the records OpenSSL assigned; a file whose
// name is another CVE's is an error, as is a directory with no record.
// commits, when not nil, gives each file's commit by its path under dir
// (records read one by one, each where it was found); a record it does
// not name is an error.
func ReadCVEDir(dir string, commits map[string]string) ([]*Record, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasPrefix(d.Name(), "CVE-") && strings.HasSuffix(d.Name(), ".json") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: no CVE-*.json under it: not (part of) a checkout of %s", dir, CVEList)
	}
	slices.Sort(paths)
	var out []*Record
	for _, p := range paths {
		b, err := ctxio.ReadFile(context.Background(), p, true, maxFile)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, p)
		r, err := ParseRecord(filepath.ToSlash(rel), b)
		if err != nil {
			return nil, err
		}
		if want := strings.TrimSuffix(filepath.Base(p), ".json"); r.CVE != want {
			return nil, fmt.Errorf("%s: %w: the record is of %s", rel, ErrRecord, r.CVE)
		}
		if commits != nil {
			if r.Commit = commits[r.Name]; r.Commit == "" {
				return nil, fmt.Errorf("%s: no commit listed for it", filepath.Join(dir, rel))
			}
		}
		if r.Assigner == OpenSSL {
			out = append(out, r)
		}
	}
	return out, nil
}

// ReadCommits reads "PATH COMMIT" lines (a record's path under a -cves
// directory and the commit it was read at; '#' starts a comment).
func ReadCommits(file string) (map[string]string, error) {
	b, err := ctxio.ReadFile(context.Background(), file, true, maxFile)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 2 || !advisory.IsCommit(f[1]) {
			return nil, fmt.Errorf("%s:%d: want a record's path and the commit (hex) it was read at", file, i+1)
		}
		out[f[0]] = f[1]
	}
	return out, nil
}
