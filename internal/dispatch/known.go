package dispatch

import (
	"maps"
	"slices"

	"github.com/osslbuild/osslbuild/internal/osslver"
)

// known are the lists Scan gives on the release tarballs osslbuild pins,
// by series (TestKnownMatchesSources scans each tarball the tests have and
// compares): facts about OpenSSL's sources, for check on binaries built
// elsewhere, where no source tree is at hand. A series with no row has no
// list yet.
var known = map[string][]Func{
	"3.0": {},
	"3.5": {},
	"4.0": {
		{Name: "lookup_pshufb_std", File: "crypto/evp/enc_b64_avx2.c", Line: 52, Target: "avx2"},
		{Name: "lookup_pshufb_srp", File: "crypto/evp/enc_b64_avx2.c", Line: 73, Target: "avx2"},
		{Name: "shift_right_zeros", File: "crypto/evp/enc_b64_avx2.c", Line: 104, Target: "avx2"},
		{Name: "shift_left_zeros", File: "crypto/evp/enc_b64_avx2.c", Line: 146, Target: "avx2"},
		{Name: "insert_line_feed32", File: "crypto/evp/enc_b64_avx2.c", Line: 212, Target: "avx2"},
		{Name: "ins_nl_gt32", File: "crypto/evp/enc_b64_avx2.c", Line: 240, Target: "avx2"},
		{Name: "insert_nl_gt16", File: "crypto/evp/enc_b64_avx2.c", Line: 271, Target: "avx2"},
		{Name: "insert_nl_2nd_vec_stride_12", File: "crypto/evp/enc_b64_avx2.c", Line: 349, Target: "avx2"},
		{Name: "insert_newlines_by_mask", File: "crypto/evp/enc_b64_avx2.c", Line: 383, Target: "avx2"},
		{Name: "insert_nl_str4", File: "crypto/evp/enc_b64_avx2.c", Line: 393, Target: "avx2"},
		{Name: "insert_nl_str8", File: "crypto/evp/enc_b64_avx2.c", Line: 451, Target: "avx2"},
		{Name: "encode_base64_avx2", File: "crypto/evp/enc_b64_avx2.c", Line: 481, Target: "avx2"},
	},
}

// Known is the list for an OpenSSL version number ("4.0.2"). For a series
// without a list, or no version at all (libssl records none), it is every
// known list together, and its name says so.
func Known(version string) List {
	series, err := osslver.SeriesOf(version)
	if err == nil {
		if fns, ok := known[series]; ok {
			return List{Name: "OpenSSL " + series + " (known)", Funcs: fns}
		}
	}
	var all []Func
	for _, s := range slices.Sorted(maps.Keys(known)) {
		all = append(all, known[s]...)
	}
	why := "no version string"
	if version != "" {
		why = "no list for " + version
	}
	return List{Name: "every known release (" + why + ")", Funcs: all}
}
