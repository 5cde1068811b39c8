package inspect

import (
	"slices"
	"sort"
	"strings"
)

// OpenSSL lays its build information out together: crypto/cversion.c
// returns the version text, "built on: ", "platform: " and the OPENSSLDIR
// strings as literals, and the "compiler: " line from the compiler_flags
// array that util/mkbuildinf.pl writes into crypto/buildinf.h, all in one
// object (libcrypto-lib-cversion.o), a few hundred bytes apart; a linker
// keeps an object's constants together. The forks do the same in their
// OpenSSL_version() (BoringSSL and AWS-LC in crypto/crypto.c, LibreSSL in
// crypto/cversion.c), with placeholders instead of values. So when a slice
// holds several "compiler: " strings, the one laid out with the others is
// the build's, and a "compiler: cc -O3" string elsewhere in the data is
// not; Record chooses by that evidence, never by the order of the bytes.

// ClusterGap is how far apart (from the end of one to the start of the
// next) two build-info strings of one object may lie and still count as
// laid out together. cversion.o's strings sit within a few hundred bytes
// (Debian's gcc-built libcrypto.so.3: 350 bytes for all seven).
const ClusterGap = 1024

// Candidate is one "compiler: " string and the evidence that it is the
// build's own.
type Candidate struct {
	BuildInfo
	// Beside lists the kinds of the other build-info strings laid out
	// with it (same object, within ClusterGap of one another), sorted.
	Beside []BuildInfoKind
	// Configured says the line carries the preprocessor flags OpenSSL's
	// Configure writes into every build's line (-DOPENSSL_..., -DL_ENDIAN
	// or -DB_ENDIAN), which an unrelated "compiler: " string lacks.
	Configured bool
	// Placeholder says the line records nothing: "", "n/a" (BoringSSL,
	// AWS-LC), "information not available" (LibreSSL, OpenSSL 1.0.2
	// without CFLAGS). Such a line says the flags are unknown, not -O0.
	Placeholder bool
	// Attested says the string is OpenSSL's build information at all: it
	// lies beside libcrypto's own strings (platform, built on, the
	// directories), or it carries Configure's flags. Anything else is a
	// string that merely starts "compiler: ": V8's WebAssembly printer
	// holds "compiler: " in every Node.js, Electron and Deno binary, and
	// a program's own message may too. Such a string is no evidence, of
	// the flags or of OpenSSL being there.
	Attested bool
}

// Record is a slice's OpenSSL build information as chosen by layout.
type Record struct {
	Family Family // from Version; without one, from a fork's marker (FamilyMarker)
	// FamilyMarker is a source path of the library's own that shows its
	// code is in a slice nothing else shows it in: no version string
	// ("boringssl/" of BoringSSL's source paths), or a version string
	// without libcrypto's build information or a compiler line (OpenSSL
	// 1.0.2's libssl: "s3_clnt.c"); "" when the strings showed it. Without
	// a version string it named Family too.
	FamilyMarker string
	Version      *BuildInfo // the version string, from the chosen line's cluster when it has one
	Platform     *BuildInfo
	BuiltOn      *BuildInfo
	// Candidates are every "compiler: " string of the slice, the chosen
	// one first, then the others by decreasing evidence.
	Candidates []Candidate
}

// Compiler is the chosen compiler line, nil when the slice has none that
// is attested as OpenSSL's (see Candidate.Attested).
func (r *Record) Compiler() *Candidate {
	if len(r.Candidates) == 0 || !r.Candidates[0].Attested {
		return nil
	}
	return &r.Candidates[0]
}

// attesting are the kinds of build-info string only libcrypto's
// OpenSSL_version (and the forks') returns: a version string alone does
// not attest a line, since OPENSSL_VERSION_TEXT is a header macro any
// program may hold.
var attesting = map[BuildInfoKind]bool{
	InfoPlatform: true, InfoBuiltOn: true, InfoOpenSSLDir: true, InfoModulesDir: true, InfoEnginesDir: true,
}

// IsPlaceholder reports whether a build-info value records nothing.
func IsPlaceholder(v string) bool {
	return slices.Contains([]string{"", "n/a", "na", "none", "unknown", "not available", "information not available", "date not available"},
		strings.ToLower(strings.TrimSpace(v)))
}

// configured reports whether a compiler line carries Configure's own
// preprocessor flags.
func configured(line string) bool {
	return slices.ContainsFunc(strings.Fields(line), func(w string) bool {
		return strings.HasPrefix(w, "-DOPENSSL_") || w == "-DL_ENDIAN" || w == "-DB_ENDIAN"
	})
}

// RecordOf chooses a slice's build information from every build-info
// string found in it (in file order, as Inspect and ScanBuildInfo return
// them). Compiler lines are ranked by, in order: whether they are attested
// as OpenSSL's at all (Candidate.Attested); whether they carry Configure's
// flags (a linked image puts the build's line far from the other strings,
// and an empty "compiler: " of some other code may land beside them); how
// many other kinds of build-info string lie beside them; whether they
// record anything; and, when all that ties, the least
// optimised first, so that a contested line is never credited with an
// optimisation another candidate denies. The other strings come from the
// chosen line's cluster, else from the richest cluster that has them.
func RecordOf(infos []BuildInfo) Record {
	var rec Record
	if len(infos) == 0 {
		return rec
	}
	// Cluster strings laid out together.
	cluster := make([]int, len(infos))
	for i := 1; i < len(infos); i++ {
		p, b := infos[i-1], infos[i]
		cluster[i] = cluster[i-1]
		if b.Member != p.Member || b.Offset-(p.Offset+int64(len(p.Text))) > ClusterGap || b.Offset < p.Offset {
			cluster[i]++
		}
	}
	// kinds[c][k] is the first string of kind k in cluster c.
	kinds := make([]map[BuildInfoKind]int, cluster[len(infos)-1]+1)
	for i := len(infos) - 1; i >= 0; i-- { // backwards: the first of a kind is written last
		if kinds[cluster[i]] == nil {
			kinds[cluster[i]] = map[BuildInfoKind]int{}
		}
		kinds[cluster[i]][infos[i].Kind] = i
	}
	// Each candidate with its cluster and optimisation, to rank them by.
	type ranked struct {
		Candidate
		cluster int
		opt     OptLevel
	}
	var cands []ranked
	for i, b := range infos {
		if b.Kind != InfoCompiler {
			continue
		}
		c := Candidate{BuildInfo: b, Configured: configured(b.Value), Placeholder: IsPlaceholder(b.Value)}
		for k := range kinds[cluster[i]] {
			if k != InfoCompiler {
				c.Beside = append(c.Beside, k)
			}
		}
		slices.Sort(c.Beside)
		c.Attested = c.Configured || slices.ContainsFunc(c.Beside, func(k BuildInfoKind) bool { return attesting[k] })
		cands = append(cands, ranked{c, cluster[i], ParseCompilerLine(b.Value).Opt})
	}
	sort.SliceStable(cands, func(x, y int) bool {
		a, b := cands[x], cands[y]
		if a.Attested != b.Attested {
			return a.Attested
		}
		if a.Configured != b.Configured {
			return a.Configured
		}
		if len(a.Beside) != len(b.Beside) {
			return len(a.Beside) > len(b.Beside)
		}
		if a.Placeholder != b.Placeholder {
			return b.Placeholder
		}
		if a.opt != b.opt {
			return a.opt < b.opt
		}
		return a.Offset < b.Offset
	})
	chosenCluster := -1
	for i, c := range cands {
		rec.Candidates = append(rec.Candidates, c.Candidate)
		if i == 0 && c.Attested {
			chosenCluster = c.cluster
		}
	}

	// Clusters to take the other strings from: the chosen line's first,
	// then by how many kinds they hold, then in file order.
	clusters := make([]int, len(kinds))
	for i := range clusters {
		clusters[i] = i
	}
	sort.SliceStable(clusters, func(x, y int) bool {
		a, b := clusters[x], clusters[y]
		if (a == chosenCluster) != (b == chosenCluster) {
			return a == chosenCluster
		}
		return len(kinds[a]) > len(kinds[b])
	})
	pick := func(kind BuildInfoKind) *BuildInfo {
		for _, c := range clusters {
			if i, ok := kinds[c][kind]; ok {
				return new(infos[i])
			}
		}
		return nil
	}
	rec.Version, rec.Platform, rec.BuiltOn = pick(InfoVersion), pick(InfoPlatform), pick(InfoBuiltOn)
	if rec.Version != nil {
		rec.Family, _ = FamilyOf(rec.Version.Value)
	}
	return rec
}
