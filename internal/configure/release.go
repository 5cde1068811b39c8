package configure

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Release is what a release's own files say its libraries hold, read from
// the tarball the recipe pins (source.Files) and so beyond the reach of
// anything that only writes caches: the symbols util/libcrypto.num and
// util/libssl.num export, under the conditions util/mkdef.pl applies with
// the features Configure disables, and the objects the release's build
// files can make. Configure itself takes seconds of Perl, far more than a
// cache hit may spend, so Exports reads its decisions from its own tables
// (defaults, cascades, aliases), erring towards requiring less, and
// Object names every object some configuration of the release can make.
type Release struct {
	Name string // the tarball, for messages
	lists
}

// lists are what ReadRelease reads, as Encode writes them.
type lists struct {
	Ordinals map[string][]ordinal `json:"ordinals"`
	Defaults []string             `json:"defaults"` // Configure's %disabled
	Cascades map[string][]string  `json:"cascades"` // @disable_cascades: a feature -> what disabling it disables
	Always   []string             `json:"always"`   // what a cascade of Configure's own code may disable
	Aliases  map[string]string    `json:"aliases"`  // %deprecated_disablables with a new name
	Stems    map[string]bool      `json:"stems"`
}

// ordinal is one line of a .num file.
type ordinal struct {
	Name      string   `json:"name"`
	Exists    bool     `json:"exists"`
	Platforms []string `json:"platforms"` // VMS, !VMS, UNIX, ...
	Features  []string `json:"features"`  // EC, DEPRECATEDIN_3_0, ...
}

// Encode is the release's lists as bytes: what the source cache keeps
// beside the tarball, which Pinned vouches for.
func (r *Release) Encode() []byte {
	b, _ := json.Marshal(r.lists)
	return b
}

// DecodeRelease is the lists Encode wrote, of the release tarball name.
func DecodeRelease(name string, b []byte) (*Release, error) {
	r := &Release{Name: name}
	if err := json.Unmarshal(b, &r.lists); err != nil {
		return nil, fmt.Errorf("%s: its lists: %w", name, err)
	}
	return r, nil
}

// Pinned is, by the sha256 of a release tarball, the sha256 of its lists
// as Encode writes them: read from the real tarballs by TestReleaseLists,
// never typed in. A cache hit reads the pinned lists the source cache
// keeps (half a megabyte, hashed) instead of inflating the whole tarball
// (a second of a hit's CPU); a release without a pin is read from its
// tarball.
var Pinned = map[string]string{
	"736b467530f916737b7031310ccb21d8218c6229e61e8e160cd1d3458cd543a8": "782cda23a2d4e48f29e4307d4eba1b78aba92d459ba5d439d631d6fc58190ff4", // 4.0.2
	"a8c0d28a529ca480f9f36cf5792e2cd21984552a3c8e4aa11a24aa31aeac98e8": "7c932a0dfb0028ec19bc52a2d30173b658c3243a32e688d38de9942a9d015e64", // 3.5.7
	"c80a01dfc70ece4dc21168932c37739042d404d46ccc81a5986dd75314ecda6f": "d53347138eaf28d02e9b45888347fe345deadb753584b3e37e903e0bc5096f76", // 3.0.20
}

// ReleaseWants selects the files ReadRelease needs from the tarball.
func ReleaseWants(rel string) bool {
	return rel == "Configure" || rel == "util/libcrypto.num" || rel == "util/libssl.num" || path.Base(rel) == "build.info"
}

// ReadRelease reads the lists of the release tarball name from its files
// (ReleaseWants) and the names of all its files.
func ReadRelease(name string, files map[string][]byte, names []string) (*Release, error) {
	r := &Release{Name: name, lists: lists{Ordinals: map[string][]ordinal{}, Cascades: map[string][]string{}, Aliases: map[string]string{}, Stems: map[string]bool{}}}
	for _, lib := range []string{"libcrypto", "libssl"} {
		num, ok := files["util/"+lib+".num"]
		if !ok {
			return nil, fmt.Errorf("%s: no util/%s.num: the symbols the library exports cannot be known", name, lib)
		}
		for i, l := range strings.Split(string(num), "\n") {
			f := strings.Fields(l)
			if len(f) == 0 || strings.HasPrefix(f[0], "#") {
				continue
			}
			info := strings.Split(f[len(f)-1], ":")
			if len(f) != 4 || len(info) != 4 {
				return nil, fmt.Errorf("%s: util/%s.num:%d: %q is not NAME NUMBER VERSION EXIST:PLATFORMS:KIND:FEATURES", name, lib, i+1, l)
			}
			r.Ordinals[lib] = append(r.Ordinals[lib], ordinal{Name: f[0], Exists: info[0] == "EXIST", Platforms: fields(info[1]), Features: fields(info[3])})
		}
	}
	conf := string(files["Configure"])
	if block(conf, `our %disabled = (`) == "" || block(conf, `my @disable_cascades = (`) == "" {
		r.Always = append(r.Always, anyFeature) // a Configure laid out otherwise: nothing is known kept
	}
	for _, m := range regexp.MustCompile(`"([^"]+)"\s*=>`).FindAllStringSubmatch(block(conf, `our %disabled = (`), -1) {
		r.Defaults = append(r.Defaults, m[1])
	}
	for _, m := range regexp.MustCompile(`"([^"]+)"\s*=>\s*"([^"]+)"`).FindAllStringSubmatch(block(conf, `my %deprecated_disablables = (`), -1) {
		r.Aliases[m[1]] = m[2]
	}
	arrays := map[string][]string{}
	for _, m := range regexp.MustCompile(`my @(\w+) = qw\(([^)]*)\);`).FindAllStringSubmatch(conf, -1) {
		arrays[m[1]] = strings.Fields(m[2])
	}
	for _, m := range regexp.MustCompile(`(?s)("([^"]+)"|sub\s*\{.*?\})\s*=>\s*\[(.*?)\]`).FindAllStringSubmatch(block(conf, `my @disable_cascades = (`), -1) {
		var targets []string
		for _, t := range regexp.MustCompile(`"([^"]+)"|qw\(([^)]*)\)|@(\w+)`).FindAllStringSubmatch(m[3], -1) {
			switch a, ok := arrays[t[3]]; {
			case t[1] != "":
				targets = append(targets, t[1])
			case t[2] != "":
				targets = append(targets, strings.Fields(t[2])...)
			case ok:
				targets = append(targets, a...)
			default:
				targets = append(targets, anyFeature) // computed (3.x: grep(/eng$/, @disablables))
			}
		}
		if m[2] == "" {
			r.Always = append(r.Always, targets...) // a test in code: taken to disable
		} else {
			r.Cascades[m[2]] = append(r.Cascades[m[2]], targets...)
		}
	}
	generated := regexp.MustCompile(`GENERATE\[([^\]$]+)\]`)
	for _, n := range names {
		if path.Base(n) == "build.info" {
			for _, m := range generated.FindAllStringSubmatch(string(files[n]), -1) {
				r.Stems[stem(m[1])] = true
			}
		}
		for _, ext := range []string{".c", ".S", ".s", ".c.in"} {
			if strings.HasSuffix(n, ext) {
				r.Stems[strings.TrimSuffix(path.Base(n), ext)] = true
			}
		}
	}
	return r, nil
}

// anyFeature stands for the features of a cascade computed in Perl: a
// configuration that may disable it is required to export only the
// symbols no feature conditions.
const anyFeature = "*"

// block is the text of Configure's Perl list that starts with start, to
// its closing ");" at the start of a line ("" if none).
func block(conf, start string) string {
	_, rest, ok := strings.Cut(conf, start)
	if !ok {
		return ""
	}
	end := regexp.MustCompile(`\n\s*\);`).FindStringIndex(rest)
	if end == nil {
		return ""
	}
	return rest[:end[0]]
}

func fields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' })
}

// stem is a file's name without its directory and extension.
func stem(name string) string {
	b := path.Base(strings.TrimSpace(name))
	if i := strings.IndexByte(b, '.'); i > 0 {
		return b[:i]
	}
	return b
}

// Disabled is every feature Configure may disable for a configuration
// given options: its defaults, the options' no- and disable- features
// (under their new names too), what its cascades then disable, and what
// the cascades its code decides may disable. A feature an enable- option
// turns on is still counted: Configure may turn it off again (for want of
// the compiler's support).
func (r *Release) Disabled(options []string) map[string]bool {
	out := map[string]bool{}
	var todo []string
	disable := func(f string) {
		if !out[f] {
			out[f] = true
			todo = append(todo, f)
		}
	}
	for _, f := range slices.Concat(r.Defaults, r.Always) {
		disable(f)
	}
	for _, o := range options {
		f, ok := strings.CutPrefix(o, "no-")
		if !ok {
			f, ok = strings.CutPrefix(o, "disable-")
		}
		if !ok {
			continue
		}
		disable(f)
		disable(strings.TrimSuffix(f, "-method"))
		if a := r.Aliases[f]; a != "" {
			disable(a)
		}
	}
	for len(todo) > 0 {
		f := todo[0]
		todo = todo[1:]
		for _, c := range r.Cascades[f] {
			disable(c)
		}
	}
	return out
}

// Exports are the symbols the .num file of lib ("libcrypto", "libssl")
// says a configuration given options exports wherever it is built, as
// util/mkdef.pl selects them: those that exist, carry no platform but the
// negation of one, and whose every feature the configuration keeps (a
// DEPRECATEDIN_X_Y one while "deprecated" is kept). A symbol of a feature
// Configure may disable (Disabled) is left out; where a cascade Configure
// computes may apply, every symbol a feature conditions.
func (r *Release) Exports(lib string, options []string) []string {
	off := map[string]bool{}
	for f := range r.Disabled(options) {
		off[strings.ReplaceAll(strings.ToUpper(f), "-", "_")] = true
	}
	var out []string
	for _, o := range r.Ordinals[lib] {
		keep := o.Exists && !slices.ContainsFunc(o.Platforms, func(p string) bool { return !strings.HasPrefix(p, "!") })
		keep = keep && !(off[anyFeature] && len(o.Features) > 0)
		for _, f := range o.Features {
			keep = keep && !off[f] && !(strings.HasPrefix(f, "DEPRECATEDIN_") && off["DEPRECATED"])
		}
		if keep {
			out = append(out, o.Name)
		}
	}
	return out
}

// objectName is an object's name as OpenSSL's build files give it:
// <library>-lib-<stem>.o for a static library, -shlib- for a shared one.
var objectName = regexp.MustCompile(`^lib[a-z0-9_]+-(?:lib|shlib)-(.+)\.o$`)

// Object reports whether the release's build files can make an archive
// member of this name: named for one of its libraries, of a source file
// it holds (.c, .S, .s, .c.in) or one they generate.
func (r *Release) Object(member string) bool {
	m := objectName.FindStringSubmatch(member)
	return m != nil && r.Stems[m[1]]
}
