package inspect

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
)

// Lines and layouts as real libraries embed them.
const (
	realO3   = "gcc -fPIC -arch arm64 -Wa,--noexecstack -O3 -Wall -DL_ENDIAN -DOPENSSL_PIC -DOPENSSL_BUILDING_OPENSSL -DNDEBUG"
	realNoO  = "cc -fPIC -arch arm64 -isysroot /SDK -mmacosx-version-min=13 -DL_ENDIAN -DOPENSSL_PIC -DOPENSSL_BUILDING_OPENSSL -DNDEBUG"
	decoyO3  = "cc -O3 -Wall"
	decoyO0  = "cc -O0 -g"
	boringTx = "OpenSSL 1.1.1 (compatible; BoringSSL)"
)

// cversionData is cversion.o's strings as a NUL-separated block: version,
// built on, platform, OPENSSLDIR, then the compiler line when not "-".
func cversionData(version, line, platform string) string {
	s := "\x00" + version + "\x00built on: Thu Jan  1 00:00:00 1970 UTC\x00platform: " + platform +
		"\x00OPENSSLDIR: \"/usr/local/ssl\"\x00"
	if line != "-" {
		s += "\x15\x18$compiler: " + line + "\x00"
	}
	return s
}

// far is filler between unrelated parts of a linked image.
var far = strings.Repeat("\x00\x01\x02\x03", 4096)

func TestRecordOf(t *testing.T) {
	for _, tc := range []struct {
		name       string
		data       string
		compiler   string // chosen line's value; "<none>" when no compiler line
		family     Family
		version    string
		platform   string
		candidates int
	}{
		{"one line, laid out with the rest", cversionData("OpenSSL 4.0.2 25 Aug 2026", realO3, "darwin64-arm64-cc"),
			realO3, FamilyOpenSSL, "OpenSSL 4.0.2 25 Aug 2026", "darwin64-arm64-cc", 1},
		// Real-world shape 1: the build's -O3 line and a second, empty
		// "compiler: " string elsewhere in the data.
		{"empty compiler string elsewhere", "\x00compiler: \x00" + far + cversionData("OpenSSL 3.5.7 9 Jun 2026", realO3, "darwin64-arm64-cc"),
			realO3, FamilyOpenSSL, "OpenSSL 3.5.7 9 Jun 2026", "darwin64-arm64-cc", 2},
		// A decoy -O3 string elsewhere must not rescue a real line without -O.
		{"decoy -O3 before the real line", "\x00compiler: " + decoyO3 + "\x00" + far + cversionData("OpenSSL 3.5.7 9 Jun 2026", realNoO, "darwin64-arm64-cc"),
			realNoO, FamilyOpenSSL, "OpenSSL 3.5.7 9 Jun 2026", "darwin64-arm64-cc", 2},
		{"decoy -O3 after the real line", cversionData("OpenSSL 3.5.7 9 Jun 2026", realNoO, "darwin64-arm64-cc") + far + "\x00compiler: " + decoyO3 + "\x00",
			realNoO, FamilyOpenSSL, "OpenSSL 3.5.7 9 Jun 2026", "darwin64-arm64-cc", 2},
		// Linked Mach-O: the compiler_flags array lands in __TEXT,__const,
		// far from cversion.c's literals in __cstring. Neither line has
		// neighbours; Configure's flags tell the build's line from a decoy.
		{"linked image, decoy -O3, real line far from its cluster",
			"\x00compiler: " + decoyO3 + "\x00" + far + "\x00compiler: " + realNoO + "\x00" + far + cversionData("OpenSSL 3.5.7 9 Jun 2026", "-", "darwin64-arm64-cc"),
			realNoO, FamilyOpenSSL, "OpenSSL 3.5.7 9 Jun 2026", "darwin64-arm64-cc", 2},
		{"linked image, decoy -O0 does not sink a real -O3 line",
			"\x00compiler: " + decoyO0 + "\x00" + far + "\x00compiler: " + realO3 + "\x00" + far + cversionData("OpenSSL 3.5.7 9 Jun 2026", "-", "darwin64-arm64-cc"),
			realO3, FamilyOpenSSL, "OpenSSL 3.5.7 9 Jun 2026", "darwin64-arm64-cc", 2},
		// When nothing tells them apart, the least optimised line is the one
		// reported: a contested optimisation is never credited.
		{"no evidence either way", "\x00compiler: cc -O3 -DOPENSSL_PIC\x00" + far + "\x00compiler: cc -O1 -DOPENSSL_PIC\x00",
			"cc -O1 -DOPENSSL_PIC", "", "", "", 2},
		{"a placeholder never beats a line that records flags", "\x00compiler: n/a\x00" + far + "\x00compiler: cc -O2 -DL_ENDIAN\x00",
			"cc -O2 -DL_ENDIAN", "", "", "", 2},
		// A string that merely starts "compiler: " is no build information:
		// V8's WebAssembly printer, in every Node.js, Electron and Deno.
		{"V8's decoy alone", "\x00Liftoff\x00TurboFan\x00compiler: \x00Body (size = \x00",
			"<none>", "", "", "", 1},
		{"lone lines without Configure's flags", "\x00compiler: cc -O3\x00" + far + "\x00compiler: gcc -O0\x00",
			"<none>", "", "", "", 2},
		{"V8's decoy beside a version string only", "\x00OpenSSL 3.0.19 27 Jan 2026\x00Liftoff\x00TurboFan\x00compiler: \x00",
			"<none>", FamilyOpenSSL, "OpenSSL 3.0.19 27 Jan 2026", "", 1},
		{"V8's decoy and libcrypto's strings without a line", "\x00Liftoff\x00TurboFan\x00compiler: \x00" + far + cversionData("OpenSSL 4.0.2 25 Aug 2026", "-", "darwin64-arm64-cc"),
			"<none>", FamilyOpenSSL, "OpenSSL 4.0.2 25 Aug 2026", "darwin64-arm64-cc", 1},
		{"the real layout next to V8's decoy", "\x00Liftoff\x00TurboFan\x00compiler: \x00" + far + cversionData("OpenSSL 3.5.7 9 Jun 2026", realO3, "darwin64-arm64-cc"),
			realO3, FamilyOpenSSL, "OpenSSL 3.5.7 9 Jun 2026", "darwin64-arm64-cc", 2},
		// Real-world shape 2: BoringSSL records placeholders; its version
		// text sits elsewhere.
		{"BoringSSL", "\x00" + boringTx + "\x00" + far + "\x00BoringSSL\x00compiler: n/a\x00built on: n/a\x00platform: n/a\x00OPENSSLDIR: n/a\x00" +
			far + "\x00compiler: " + decoyO3 + "\x00",
			"n/a", FamilyBoringSSL, boringTx, "n/a", 2},
		{"AWS-LC", "\x00AWS-LC 1.29.0\x00compiler: n/a\x00built on: n/a\x00platform: n/a\x00OPENSSLDIR: n/a\x00",
			"n/a", FamilyAWSLC, "AWS-LC 1.29.0", "n/a", 1},
		{"LibreSSL", "\x00LibreSSL 3.8.2\x00built on: date not available\x00compiler: information not available\x00platform: information not available\x00",
			"information not available", FamilyLibreSSL, "LibreSSL 3.8.2", "information not available", 1},
		{"libcrypto strings, no compiler line", cversionData("OpenSSL 4.0.2 25 Aug 2026", "-", "darwin64-arm64-cc"),
			"<none>", FamilyOpenSSL, "OpenSSL 4.0.2 25 Aug 2026", "darwin64-arm64-cc", 0},
		{"version only (a program built against the headers)", "\x00OpenSSL 3.0.19 27 Jan 2026\x00",
			"<none>", FamilyOpenSSL, "OpenSSL 3.0.19 27 Jan 2026", "", 0},
		{"nothing", "\x00\x01abc\x00", "<none>", "", "", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := RecordOf(ScanBuildInfoBytes([]byte(tc.data)))
			got := "<none>"
			if c := rec.Compiler(); c != nil {
				got = c.Value
			}
			if got != tc.compiler {
				t.Errorf("compiler %q, want %q (candidates %+v)", got, tc.compiler, rec.Candidates)
			}
			if rec.Family != tc.family || len(rec.Candidates) != tc.candidates {
				t.Errorf("family %q, %d candidates; want %q, %d", rec.Family, len(rec.Candidates), tc.family, tc.candidates)
			}
			if v := value(rec.Version); v != tc.version {
				t.Errorf("version %q, want %q", v, tc.version)
			}
			if v := value(rec.Platform); v != tc.platform {
				t.Errorf("platform %q, want %q", v, tc.platform)
			}
		})
	}
}

func value(b *BuildInfo) string {
	if b == nil {
		return ""
	}
	return b.Value
}

// Candidates carry their evidence: what lies beside them, Configure's
// flags, placeholders; in an archive, only strings of the same member
// count as beside.
func TestRecordEvidence(t *testing.T) {
	infos := ScanBuildInfoBytes([]byte(cversionData("OpenSSL 4.0.2 25 Aug 2026", realO3, "x") + far + "\x00compiler: n/a\x00"))
	rec := RecordOf(infos)
	c := rec.Candidates
	want := []BuildInfoKind{InfoOpenSSLDir, InfoBuiltOn, InfoPlatform, InfoVersion}
	if !reflect.DeepEqual(c[0].Beside, want) || !c[0].Configured || c[0].Placeholder {
		t.Errorf("chosen: %+v", c[0])
	}
	if len(c[1].Beside) != 0 || c[1].Configured || !c[1].Placeholder {
		t.Errorf("other: %+v", c[1])
	}
	// Split across two members: the compiler line is alone in its member.
	for i := range infos {
		infos[i].Member = "a.o"
		if infos[i].Kind == InfoCompiler && infos[i].Value == realO3 {
			infos[i].Member = "b.o"
		}
	}
	rec = RecordOf(infos)
	if c := rec.Candidates[0]; c.Member != "b.o" || len(c.Beside) != 0 {
		t.Errorf("strings of another member counted as beside: %+v", c)
	}
}

func TestFamilyOf(t *testing.T) {
	for _, tc := range []struct {
		s      string
		family Family
		number string
	}{
		{"OpenSSL 4.0.2 25 Aug 2026", FamilyOpenSSL, "4.0.2"},
		{"OpenSSL 1.1.1w  11 Sep 2023", FamilyOpenSSL, "1.1.1w"},
		{"OpenSSL 3.6.0-alpha1 xx XXX xxxx", FamilyOpenSSL, "3.6.0-alpha1"},
		{boringTx, FamilyBoringSSL, ""},
		{"OpenSSL 1.1.1 (compatible; AWS-LC 1.29.0)", FamilyAWSLC, "1.29.0"},
		{"AWS-LC FIPS 2.0.0", FamilyAWSLC, "2.0.0"},
		{"LibreSSL 3.8.2", FamilyLibreSSL, "3.8.2"},
		{"OpenSSL 3.0 is great", "", ""},
		{"OpenSSL 1.1.1 (compatible; SomethingElse)", "", ""},
		// osslver's grammar: two letters at most, no leading zeros, a
		// fork claims a release.
		{"OpenSSL 0.9.8zh 3 Dec 2015", FamilyOpenSSL, "0.9.8zh"},
		{"OpenSSL 1.0.2k-fips  26 Jan 2017", FamilyOpenSSL, "1.0.2k-fips"},
		{"OpenSSL 1.1.1abc 11 Sep 2023", "", ""},
		{"OpenSSL 03.0.0 7 Sep 2021", "", ""},
		{"OpenSSL 1.1.1-dev (compatible; BoringSSL)", "", ""},
	} {
		f, n := FamilyOf(tc.s)
		if f != tc.family || n != tc.number {
			t.Errorf("FamilyOf(%q) = %q %q, want %q %q", tc.s, f, n, tc.family, tc.number)
		}
	}
}

// InspectBytes (the in-memory search) and InspectReader (the streamed one)
// report the same facts about real compiled files.
func TestInspectBytesMatchesReader(t *testing.T) {
	o := buildObjects(t)
	d := t.TempDir()
	lib := o.tc.Archive(t, "darwin", false, d+"/a.a", o.cvArm, o.plainArm)
	libX := o.tc.Archive(t, "darwin", false, d+"/x.a", o.cvX86, o.plainX86)
	fat := o.tc.LipoCreate(t, d+"/fat.a", lib, libX)
	for _, p := range []string{o.cvArm, o.cvX86, lib, fat} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fb, err := InspectBytes(p, b)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := InspectReader(p, bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fb, fr) {
			t.Errorf("%s: InspectBytes and InspectReader differ:\n%+v\n%+v", p, fb, fr)
		}
		if c := fb.Slices[len(fb.Slices)-1].Record.Compiler(); c == nil || c.Member == "" && fb.Format == FormatFat {
			t.Errorf("%s: no compiler line chosen: %+v", p, fb.Slices)
		}
	}
}
