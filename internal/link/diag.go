package link

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/osslbuild/osslbuild/internal/platform"
	"github.com/osslbuild/osslbuild/internal/toolchain"
)

// ErrUndefined marks a link that left a symbol undefined.
var ErrUndefined = errors.New("undefined symbol")

// ErrNeedsNewerOS marks an undefined symbol the system library has, but
// only on a newer macOS than the deployment target.
var ErrNeedsNewerOS = errors.New("needs a newer macOS than the deployment target")

// Undefined is one undefined symbol and the first object that needs it.
type Undefined struct {
	Symbol string // as the linker names it: _OpenSSL_version, ___chkstk_darwin
	Object string // e.g. libcrypto.a(libcrypto-lib-foo.o), no directory
	// Hidden are the macOS versions whose libSystem withholds Symbol
	// ($ld$hide$os<version>$Symbol in the stubs); empty when no stub has
	// the symbol for any version.
	Hidden []string
}

// Since is the first macOS after every version hiding the symbol: where it
// becomes available.
func (u Undefined) Since() string {
	if len(u.Hidden) == 0 {
		return ""
	}
	return nextMacOS(u.Hidden[len(u.Hidden)-1])
}

// Error is a failed link check.
type Error struct {
	Slice     platform.Slice
	Program   string
	Undefined []Undefined // in the linker's order, each symbol once
	Link      *toolchain.LinkError
}

func (e *Error) Error() string {
	where := fmt.Sprintf("link check %s", e.Slice)
	if u, ok := e.newerOS(); ok {
		return fmt.Sprintf("%s: %s, used by %s, needs macOS %s or later: the deployment target is %s and libSystem hides it for macOS %s ($ld$hide$os markers)%s",
			where, u.Symbol, u.Object, u.Since(), e.Slice.MinOS, versionRange(u.Hidden), e.more())
	}
	if len(e.Undefined) > 0 {
		u := e.Undefined[0]
		return fmt.Sprintf("%s: undefined symbol %s, referenced by %s%s (linking %s with every member of %s)",
			where, u.Symbol, u.Object, e.more(), e.Program, strings.Join(Libraries, " and "))
	}
	return fmt.Sprintf("%s: %s: %v", where, e.Program, e.Link)
}

// more counts the other undefined symbols.
func (e *Error) more() string {
	if n := len(e.Undefined) - 1; n > 0 {
		return fmt.Sprintf(" (and %d more undefined symbol%s)", n, map[bool]string{true: "s"}[n > 1])
	}
	return ""
}

// newerOS is the first undefined symbol a newer macOS has.
func (e *Error) newerOS() (Undefined, bool) {
	for _, u := range e.Undefined {
		if slices.ContainsFunc(u.Hidden, func(v string) bool { return compareVersions(v, e.Slice.MinOS) == 0 }) {
			return u, true
		}
	}
	return Undefined{}, false
}

func (e *Error) Is(target error) bool {
	switch target {
	case ErrUndefined:
		return len(e.Undefined) > 0
	case ErrNeedsNewerOS:
		_, ok := e.newerOS()
		return ok
	}
	return false
}

func (e *Error) Unwrap() error { return e.Link }

// explain turns a failed link into an *Error naming what was undefined.
func explain(s platform.Slice, p Program, le *toolchain.LinkError) error {
	e := &Error{Slice: s, Program: p.Name, Link: le}
	if le.Step != "link" {
		return e
	}
	e.Undefined = ParseUndefined(le.Output)
	if len(le.Linked.Stubs) > 0 && len(e.Undefined) > 0 {
		hidden, err := hiddenIn(le.Linked.Stubs, e.Undefined)
		if err != nil {
			return fmt.Errorf("%w (and reading the stubs: %v)", e, err)
		}
		for i := range e.Undefined {
			e.Undefined[i].Hidden = hidden[e.Undefined[i].Symbol]
		}
	}
	return e
}

var (
	// ld64.lld: "error: undefined symbol: _x" then ">>> referenced by obj";
	// Apple ld: `  "_x", referenced from:` then `      _f in obj`. Each
	// alternative has a group of its own: the one that matched is set.
	undefinedRe  = regexp.MustCompile(`error: undefined symbol: (\S+)|^\s+"(.+)", referenced from:$`)
	referencedRe = regexp.MustCompile(`^>>> referenced by (.+?)(?::\(symbol .*\))?$|^\s+\S+ in (.+)$`)
	// GNU ld: "ld: obj: in function `f':" then "src:(.text+0x5): undefined
	// reference to `x'", or "ld: obj:(.data+0x8): undefined reference to `x'".
	gnuFunction  = regexp.MustCompile("^(?:\\S*ld: )?(.+?): in function `")
	gnuReference = regexp.MustCompile("^(?:\\S*ld: )?(.*?): undefined reference to `([^']+)'")
	gnuObject    = regexp.MustCompile(`^(.*(?:\.o|\.a\([^)]*\)))(?::\(.*\))?$`)
)

// ParseUndefined reads the undefined symbols, each with the first object
// that references it, from the output of ld64.lld, Apple's ld or GNU ld.
func ParseUndefined(out string) []Undefined {
	var list []Undefined
	seen := map[string]bool{}
	add := func(sym, obj string) {
		if sym == "" || seen[sym] { // none pending, or named before
			return
		}
		seen[sym] = true
		list = append(list, Undefined{Symbol: sym, Object: object(obj)})
	}
	var pending, function string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case undefinedRe.MatchString(line):
			add(pending, "") // the one before had no object named
			m := undefinedRe.FindStringSubmatch(line)
			pending = m[1] + m[2]
		case pending != "" && referencedRe.MatchString(line):
			m := referencedRe.FindStringSubmatch(line)
			add(pending, m[1]+m[2])
			pending = ""
		case gnuReference.MatchString(line):
			m := gnuReference.FindStringSubmatch(line)
			obj := function
			if o := gnuObject.FindStringSubmatch(m[1]); o != nil {
				obj = o[1]
			}
			add(m[2], obj)
		case gnuFunction.MatchString(line):
			function = gnuFunction.FindStringSubmatch(line)[1]
		}
	}
	add(pending, "")
	return list
}

// object shortens a linker's name for an object to the library and member
// (or file name) without the machine's directories: libcrypto.a(foo.o).
func object(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "an unnamed object"
	}
	if i := strings.IndexAny(s, "(["); i > 0 {
		// Apple's new ld writes libx.a[12](foo.o): keep the member.
		rest := s[i:]
		if _, member, ok := strings.Cut(rest, "]"); ok && rest[0] == '[' {
			rest = member
		}
		return filepath.Base(s[:i]) + rest
	}
	return filepath.Base(s)
}

var hideMarker = regexp.MustCompile(`\$ld\$hide\$os([0-9]+(?:\.[0-9]+)*)\$([A-Za-z0-9_$.]+)`)

// hiddenIn reads the $ld$hide$os<version>$<symbol> markers of the stubs
// for the given symbols: the macOS versions each is withheld from, oldest
// first.
func hiddenIn(stubs []string, us []Undefined) (map[string][]string, error) {
	out := map[string][]string{}
	for _, p := range stubs {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		for _, m := range hideMarker.FindAllStringSubmatch(string(b), -1) {
			if slices.ContainsFunc(us, func(u Undefined) bool { return u.Symbol == m[2] }) && !slices.Contains(out[m[2]], m[1]) {
				out[m[2]] = append(out[m[2]], m[1])
			}
		}
	}
	for _, v := range out {
		slices.SortFunc(v, compareVersions)
	}
	return out, nil
}

// compareVersions orders macOS versions as the packed deployment targets
// platform.ParseMinOS makes of them: "11" and "11.0" are the same.
func compareVersions(a, b string) int {
	x, _ := platform.ParseMinOS(a)
	y, _ := platform.ParseMinOS(b)
	return cmp.Compare(x, y)
}

// nextMacOS is the release after v: 10.14 -> 10.15, 10.15 -> 11.0,
// 11.0 -> 12.0 (from 11 on, the major number counts releases).
func nextMacOS(v string) string {
	p := strings.Split(v, ".")
	major, _ := strconv.Atoi(p[0])
	minor := 0
	if len(p) > 1 {
		minor, _ = strconv.Atoi(p[1])
	}
	switch {
	case major == 10 && minor < 15:
		return fmt.Sprintf("10.%d", minor+1)
	case major == 10:
		return "11.0"
	}
	return fmt.Sprintf("%d.0", major+1)
}

// versionRange writes sorted versions as "10.6 to 10.14" or one version.
func versionRange(v []string) string {
	if len(v) == 1 {
		return v[0]
	}
	return v[0] + " to " + v[len(v)-1]
}
