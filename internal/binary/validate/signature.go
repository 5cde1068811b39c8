package validate

import (
	"debug/macho"
	"fmt"
	"strconv"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// RuleCodeSignature: an arm64 linked image (dylib, executable, bundle)
// whose code signature is missing, malformed, or no longer matches its
// pages. macOS maps no arm64 code without a valid signature (ad hoc is
// enough), so such a library fails where it is loaded, not where it was
// built; an image changed after it was signed (an install-name rewrite)
// must be signed again.
const RuleCodeSignature Rule = "code-signature"

// signature holds every arm64 linked Mach-O image of a slice to the code
// signature it carries: well formed, every page hash matching. An image
// without one is not failed here (development builds are often unsigned
// until packaging signs them; check's JSON shows there is none). Objects
// and archives carry none; x86_64 code needs none.
func (c *checker) signature(arch string, o inspect.Object, required bool) {
	m := o.MachO
	if m == nil || m.Type == macho.TypeObj || NormArch(m.Arch) != "arm64" {
		return
	}
	what := m.TypeName()
	switch cs := o.Signature; {
	case o.SignatureErr != nil:
		c.add(arch, o.Member, RuleCodeSignature, "a valid code signature", "malformed",
			"%s: %v", what, o.SignatureErr)
	case cs == nil && required:
		c.add(arch, o.Member, RuleCodeSignature, "a valid code signature", "none",
			"%s has no code signature (LC_CODE_SIGNATURE): macOS refuses to load unsigned arm64 code", what)
	case cs == nil:
	case !cs.Valid():
		var parts []string
		if len(cs.Stale) > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d pages (%s) changed after signing", len(cs.Stale), cs.Pages, pageList(cs.Stale)))
		}
		if len(cs.StaleSpecial) > 0 {
			parts = append(parts, fmt.Sprintf("special slots %v do not match their blobs", cs.StaleSpecial))
		}
		c.add(arch, o.Member, RuleCodeSignature, "page hashes matching the image", "stale",
			"%s: %s code signature is stale: %s; sign it again", what, cs.Kind(), strings.Join(parts, "; "))
	}
}

// pageList names pages as "0, 3, 7" (the first maxListed).
func pageList(pages []int) string {
	var s []string
	for i, p := range pages {
		if i == maxListed {
			s = append(s, fmt.Sprintf("and %d more", len(pages)-maxListed))
			break
		}
		s = append(s, strconv.Itoa(p))
	}
	return "page " + strings.Join(s, ", ")
}
