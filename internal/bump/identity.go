package bump

import (
	"errors"
	"fmt"
	"strings"

	"github.com/osslbuild/osslbuild/internal/recipe"
)

// ErrRelabelled marks a download whose sha256 the recipe already pins to
// another release: the same bytes cannot be two releases, so the source is
// serving an old release under a new name. Its signature would verify (it is
// genuine, just not the release asked for), so this is checked first.
var ErrRelabelled = errors.New("already pinned as another release")

// refuseKnownDigest refuses a tarball whose sha256 r pins to another version.
func refuseKnownDigest(r *recipe.Recipe, recipePath, ver, sha256 string) error {
	for _, rel := range r.Releases {
		if strings.EqualFold(rel.SHA256, sha256) && rel.Version != ver {
			return fmt.Errorf("%w: sha256 %s is OpenSSL %s in %s, so it cannot be OpenSSL %s", ErrRelabelled, sha256, rel.Version, recipePath, ver)
		}
	}
	return nil
}
