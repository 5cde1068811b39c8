package recipe

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"

	"github.com/osslbuild/osslbuild/internal/osslver"
)

// Known is a release a recipe's comments list as known and not pinned:
// upstream has published it, and another signed source (Debian's Sources
// index) gives its tarball's sha256 and size, but osslbuild has not
// verified the tarball and its OpenPGP signature, so it is no [[release]].
// recipe:bump holds the download of a known release to these values, and
// drops the line once the release is pinned.
type Known struct {
	Version string
	SHA256  string
	Size    int64
	Line    int // 1-based
}

// knownRe is a known-release line: "# not pinned: 4.0.3 sha256 <hex> 55235667 bytes".
// The version is held to osslver's release grammar after the match.
var knownRe = regexp.MustCompile(`^#[ \t]*not pinned:[ \t]+([0-9][0-9a-z.]*)[ \t]+sha256[ \t]+([0-9a-f]{64})[ \t]+([0-9]+)[ \t]+bytes\b`)

// KnownReleases reads the known-release lines of a recipe's text.
func KnownReleases(data []byte) []Known {
	var out []Known
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		if m := knownRe.FindSubmatch(bytes.TrimRight(sc.Bytes(), "\r")); m != nil && osslver.IsRelease(string(m[1])) {
			size, _ := strconv.ParseInt(string(m[3]), 10, 64)
			out = append(out, Known{Version: string(m[1]), SHA256: string(m[2]), Size: size, Line: n})
		}
	}
	return out
}
