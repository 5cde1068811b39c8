// Package upstream reads OpenSSL's published advisory records, the
// secjson/ (CVE JSON 5 records) and secadv/ (advisory texts) directories
// of openssl/release-metadata, and builds package advisory's table from
// them (Build), handling what is uneven in them: severities "unknown" or
// in capitals, ranges given as lessThanOrEqual or not at all, pre-release
// and letter versions, the FIPS module's own version numbers, and fixes
// for a series past its end of life that went to premium support
// customers only.
package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/osslbuild/osslbuild/internal/advisory"
)

// ErrRecord is matched (errors.Is) by every error ParseRecord returns.
var ErrRecord = errors.New("malformed advisory record")

// Record is what Build needs of one secjson record.
type Record struct {
	Name  string // the file, for messages
	CVE   string
	State string // PUBLISHED; REJECTED records are left out
	Date  string // datePublic's day, YYYY-MM-DD; "" when the record has none
	// Severity is OpenSSL's rating as the record spells it ("High",
	// "MODERATE", "unknown"); "" when the record has none.
	Severity string
	URL      string // the reference tagged vendor-advisory
	Versions []VersionEntry
	// Assigner is the CNA's short name ("openssl"): a collection of every
	// CNA's records (cvelistV5) is read for OpenSSL's alone.
	Assigner string
	// Updated is cveMetadata.dateUpdated as written (RFC 3339): of two
	// copies of a record, the later-updated one is read.
	Updated string
	// Commit is the commit the record was read at when that is not its
	// source's (ReadCVEDir's commits); "" otherwise.
	Commit string
}

// VersionEntry is one entry of the record's affected[].versions, with the
// product it is under.
type VersionEntry struct {
	Product         string `json:"-"` // affected[].product
	Version         string `json:"version"`
	LessThan        string `json:"lessThan"`
	LessThanOrEqual string `json:"lessThanOrEqual"`
	Status          string `json:"status"`
}

// cveRecord is the part of a CVE JSON 5 record read here.
type cveRecord struct {
	DataType    string `json:"dataType"`
	CVEMetadata struct {
		CVEID       string `json:"cveId"`
		State       string `json:"state"`
		Assigner    string `json:"assignerShortName"`
		DateUpdated string `json:"dateUpdated"`
	} `json:"cveMetadata"`
	Containers *struct {
		CNA *struct {
			DatePublic string `json:"datePublic"`
			Affected   []struct {
				Product  string         `json:"product"`
				Versions []VersionEntry `json:"versions"`
			} `json:"affected"`
			Metrics []struct {
				Format string `json:"format"`
				Other  *struct {
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"other"`
			} `json:"metrics"`
			References []struct {
				URL  string   `json:"url"`
				Tags []string `json:"tags"`
			} `json:"references"`
		} `json:"cna"`
	} `json:"containers"`
}

// ParseRecord reads one secjson record; name names it in errors.
func ParseRecord(name string, data []byte) (*Record, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s", name, ErrRecord, fmt.Sprintf(format, args...))
	}
	var r cveRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		return nil, bad("not a CVE JSON record: %v", err)
	}
	switch {
	case dec.More():
		return nil, bad("data after the record")
	case r.DataType != "CVE_RECORD":
		return nil, bad("dataType %q, want CVE_RECORD", r.DataType)
	case !advisory.IsCVE(r.CVEMetadata.CVEID): // none, where cveMetadata is missing
		return nil, bad("cveMetadata.cveId %q: want CVE-YYYY-NNNN", r.CVEMetadata.CVEID)
	case r.CVEMetadata.State == "":
		return nil, bad("%s: no cveMetadata.state", r.CVEMetadata.CVEID)
	case r.Containers == nil || r.Containers.CNA == nil:
		return nil, bad("%s: no containers.cna", r.CVEMetadata.CVEID)
	}
	cna := r.Containers.CNA
	out := &Record{Name: name, CVE: r.CVEMetadata.CVEID, State: r.CVEMetadata.State, Assigner: r.CVEMetadata.Assigner, Updated: r.CVEMetadata.DateUpdated}
	if cna.DatePublic != "" {
		d, err := publicDay(cna.DatePublic)
		if err != nil {
			return nil, bad("%s: datePublic %q: %v", out.CVE, cna.DatePublic, err)
		}
		out.Date = d
	}
	for _, m := range cna.Metrics {
		if m.Other != nil && m.Other.Content.Text != "" {
			out.Severity = m.Other.Content.Text
			break
		}
	}
	for _, ref := range cna.References {
		if out.URL == "" && slices.Contains(ref.Tags, "vendor-advisory") {
			out.URL = ref.URL
		}
	}
	for _, a := range cna.Affected {
		for _, v := range a.Versions {
			if v.Version == "" {
				return nil, bad("%s: an affected version of %s with no version", out.CVE, a.Product)
			}
			if v.LessThan != "" && v.LessThanOrEqual != "" {
				return nil, bad("%s: version %s gives both lessThan and lessThanOrEqual", out.CVE, v.Version)
			}
			v.Product = a.Product
			out.Versions = append(out.Versions, v)
		}
	}
	return out, nil
}

// publicDay is the day of a datePublic timestamp as the record writes it
// ("2026-09-29T16:21:57+02:00" is 2026-09-29): the advisory's own date.
func publicDay(s string) (string, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format(time.DateOnly), nil
		}
	}
	return "", errors.New("want an RFC 3339 timestamp or YYYY-MM-DD")
}
