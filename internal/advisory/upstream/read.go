package upstream

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
		b, err := readFile(p)
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
		b, err := readFile(p)
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

func readFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(b) > maxFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", p, maxFile)
	}
	return b, nil
}
