package inspect

import "regexp"

// Family is the library an OpenSSL-compatible version string names.
type Family string

const (
	FamilyOpenSSL   Family = "OpenSSL"
	FamilyBoringSSL Family = "BoringSSL"
	FamilyLibreSSL  Family = "LibreSSL"
	FamilyAWSLC     Family = "AWS-LC"
)

// families match the version strings each library compiles in, forks
// first: BoringSSL and AWS-LC define OPENSSL_VERSION_TEXT as "OpenSSL 1.1.1
// (compatible; ...)", which is not an OpenSSL release. Group 1 is the
// library's own version number, when it has one.
var families = []struct {
	re     *regexp.Regexp
	family Family
}{
	{regexp.MustCompile(`^OpenSSL [0-9]+\.[0-9]+\.[0-9]+[a-z]{0,2} \(compatible; BoringSSL\)()$`), FamilyBoringSSL},
	{regexp.MustCompile(`^OpenSSL [0-9]+\.[0-9]+\.[0-9]+[a-z]{0,2} \(compatible; AWS-LC (?:FIPS )?([0-9]+\.[0-9]+\.[0-9]+)\)$`), FamilyAWSLC},
	{regexp.MustCompile(`^AWS-LC (?:FIPS )?([0-9]+\.[0-9]+\.[0-9]+)$`), FamilyAWSLC},
	{regexp.MustCompile(`^LibreSSL ([0-9]+\.[0-9]+\.[0-9]+)$`), FamilyLibreSSL},
	// OPENSSL_VERSION_TEXT: "OpenSSL {full_version} {release_date}", with
	// full_version MAJOR.MINOR.PATCH[-pre][+build] (1.1.1 style letter
	// suffixes too) and release_date "25 Aug 2026" or "xx XXX xxxx" in dev
	// trees. 1.1.1 put two spaces before a one-digit day, hence " +".
	{regexp.MustCompile(`^OpenSSL ([0-9]+\.[0-9]+\.[0-9]+[a-z]{0,2}(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?) +(?:[0-9]{1,2} [A-Z][a-z]{2} [0-9]{4}|xx XXX xxxx)$`), FamilyOpenSSL},
}

// FamilyOf returns the library a version string names and that library's
// own version number ("4.0.2" for "OpenSSL 4.0.2 25 Aug 2026", "1.29.0"
// for AWS-LC, "" for BoringSSL, which has none). Family is "" when s is no
// version string.
func FamilyOf(s string) (Family, string) {
	for _, f := range families {
		if m := f.re.FindStringSubmatch(s); m != nil {
			return f.family, m[1]
		}
	}
	return "", ""
}
