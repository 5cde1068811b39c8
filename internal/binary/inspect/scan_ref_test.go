package inspect

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// refScan is the definition the fast scanner must match, written the slow,
// obvious way: split the input into maximal printable runs; in each, the
// first prefix that at most maxJunk non-alphanumeric bytes precede starts
// the string, which ends with the run or MaxBuildInfoLen bytes later.
func refScan(b []byte) []BuildInfo {
	var out []BuildInfo
	for i := 0; i < len(b); {
		if !isText(b[i]) {
			i++
			continue
		}
		j := i
		for j < len(b) && isText(b[j]) {
			j++
		}
		run := b[i:j]
		for at := 0; at <= maxJunk && at < len(run); at++ {
			c := run[at]
			if c == ' ' || c == '\t' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				hit := false
				for _, p := range infoPrefixes {
					if bytes.HasPrefix(run[at:], []byte(p.prefix)) {
						hit = true
					}
				}
				if hit {
					end := min(len(run), at+MaxBuildInfoLen)
					if bi, ok := classify(string(run[at:end])); ok {
						bi.Offset, bi.Truncated = int64(i+at), end < len(run)
						out = append(out, bi)
					}
				}
				break // a letter, digit or space is no junk: nothing later in the run qualifies
			}
		}
		i = j
	}
	return out
}

// chunky returns reads of pseudo-random sizes, some straddling prefixes.
type chunky struct {
	r   io.Reader
	rnd *rand.Rand
}

func (c chunky) Read(p []byte) (int, error) {
	n := 1 + c.rnd.Intn(len(p))
	if c.rnd.Intn(3) == 0 {
		n = min(n, 1+c.rnd.Intn(16))
	}
	return c.r.Read(p[:n])
}

// checkAgainstRef requires every way of scanning data to agree with refScan.
func checkAgainstRef(t *testing.T, data []byte, seed int64) {
	t.Helper()
	want := refScan(data)
	got := ScanBuildInfoBytes(data)
	if !equalInfo(got, want) {
		t.Fatalf("bytes scan:\n got %s\nwant %s", show(got), show(want))
	}
	for name, r := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(bytes.NewReader(data)),
		"half":     iotest.HalfReader(bytes.NewReader(data)),
		"data+EOF": iotest.DataErrReader(bytes.NewReader(data)),
		"random":   chunky{bytes.NewReader(data), rand.New(rand.NewSource(seed))},
	} {
		got, err := ScanBuildInfo(r)
		if err != nil {
			t.Fatal(err)
		}
		if !equalInfo(got, want) {
			t.Fatalf("%s stream scan:\n got %s\nwant %s", name, show(got), show(want))
		}
	}
}

func equalInfo(a, b []BuildInfo) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func show(bs []BuildInfo) string {
	var s []string
	for _, b := range bs {
		t := b.Text
		if len(t) > 40 {
			t = t[:40] + "..."
		}
		s = append(s, fmt.Sprintf("%s=%q@%d(cut %v)", b.Kind, t, b.Offset, b.Truncated))
	}
	return "[" + strings.Join(s, " | ") + "]"
}

var pieces = []string{
	"compiler: ", "platform: ", "built on: ", "OPENSSLDIR: ", "MODULESDIR: ", "ENGINESDIR: ",
	"OpenSSL ", "LibreSSL ", "AWS-LC ", "cc -O3 -Wall", "n/a", "$", "%(", "x", " ", "\t", ":",
	"OpenSSL 4.0.2 25 Aug 2026", "OpenSSL 1.1.1 (compatible; BoringSSL)", "LibreSSL 3.8.2",
	"OpenSSL 1.1.1 (compatible; AWS-LC 1.29.0)", "AWS-LC 1.29.0", "compil", "er: ", "Open", "SSL ",
	"\x00", "\x00", "\x00", "\x01", "\xff", "\n",
}

// randomInput strings pieces together, now and then with a run near
// MaxBuildInfoLen or the stream scanner's chunk size.
func randomInput(rnd *rand.Rand) []byte {
	var b []byte
	for n := rnd.Intn(60); n > 0; n-- {
		switch rnd.Intn(40) {
		case 0:
			b = append(b, bytes.Repeat([]byte("-DX "), (MaxBuildInfoLen-8+rnd.Intn(16))/4)...)
		case 1:
			b = append(b, bytes.Repeat([]byte{'a'}, 64<<10-rnd.Intn(40))...)
		case 2:
			for k := rnd.Intn(64); k > 0; k-- {
				b = append(b, byte(rnd.Intn(256)))
			}
		default:
			b = append(b, pieces[rnd.Intn(len(pieces))]...)
		}
	}
	return b
}

// The fast scanner (a vectorised search for spaces, chunked with a look
// back) finds exactly what the obvious definition finds, on any input and
// any way of reading it.
func TestScanMatchesReference(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	n := 1000
	if testing.Short() {
		n = 100
	}
	for i := 0; i < n; i++ {
		checkAgainstRef(t, randomInput(rnd), int64(i))
	}
	// Exact boundaries: a string of MaxBuildInfoLen bytes is not cut, one
	// more byte is.
	for _, extra := range []int{-1, 0, 1, 2} {
		s := "compiler: " + strings.Repeat("y", MaxBuildInfoLen-len("compiler: ")+extra)
		checkAgainstRef(t, []byte("\x00"+s+"\x00"), 7)
		checkAgainstRef(t, []byte(s), 8)
	}
}

func FuzzScanMatchesReference(f *testing.F) {
	f.Add([]byte("\x00compiler: cc -O3\x00OpenSSL 4.0.2 25 Aug 2026\x00platform: x\x00"), int64(1))
	f.Add([]byte("$$compiler: \x00LibreSSL 3.8.2"), int64(2))
	f.Fuzz(func(t *testing.T, data []byte, seed int64) {
		checkAgainstRef(t, data, seed)
	})
}
