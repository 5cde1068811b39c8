package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/report"
	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// TestLittleO0Evidence: a stripped static library built at -O0 whose
// compiler line claims -O3 leaves the classifier only a few functions
// (fewer than a verdict needs), and those look -O0. That is all the
// evidence there is against the line, which then no longer shows the
// level: the optimisation is unknown, not ok (the table, -json's
// opt_status and unknown, the code's evidence with its score). -strict
// fails it (rule optimisation, naming score and count, in SARIF too),
// without -strict a note says so.
// Optimised code with as little evidence stays quiet, and so does -O0
// code in fewer than 10 functions (a build-info object alone is one). Real objects:
// clang-14 for macOS arm64 and x86_64, gcc for Linux, stripped with
// llvm-strip-14.
func TestLittleO0Evidence(t *testing.T) {
	k := newKit(t)
	testfixture.Tools(t, "llvm-strip-14")
	for _, p := range []struct {
		name, target, platform, line string
	}{
		{"arm64", "arm64-apple-macos11", "darwin64-arm64-cc", lineArmO3},
		{"x86_64", "x86_64-apple-macos10.12", "darwin64-x86_64-cc", lineX86O3},
		{"linux-x86_64", "", "linux-x86_64", "gcc -fPIC -pthread -m64 -Wall -O3 -DOPENSSL_PIC"},
	} {
		// lib is the stripped archive: cversion.o and the first members of
		// sixteen of a few functions each, compiled at opt in one compiler
		// run per opt (a smaller archive takes the same objects);
		// stripped, each member's code is one function to the classifier.
		libs, compiled := map[string]string{}, map[string][]string{}
		const most = 16
		lib := func(opt string, members int) string {
			t.Helper()
			name := fmt.Sprintf("%s%s-%d-libcrypto.a", p.name, opt, members)
			if l, ok := libs[name]; ok {
				return l
			}
			objs, ok := compiled[opt]
			if !ok {
				prefix := p.name + opt + "-"
				srcs := []string{k.path(prefix + "cversion.c")}
				os.WriteFile(srcs[0], []byte(cversion(p.line, p.platform)), 0o644)
				for i := range most {
					srcs = append(srcs, k.path(fmt.Sprintf("%sm%d.c", prefix, i)))
					os.WriteFile(srcs[i+1], []byte(strings.ReplaceAll(manyFuncs(4), "int f", fmt.Sprintf("int m%d_f", i))), 0o644)
				}
				cc := []string{"gcc", opt, "-c"}
				if p.target != "" {
					cc = []string{"clang-14", "-target", p.target, "-ffreestanding", opt, "-c"}
				}
				testfixture.RunIn(t, k.dir, append(cc, srcs...)...)
				for _, c := range srcs {
					objs = append(objs, strings.TrimSuffix(c, ".c")+".o")
				}
				compiled[opt] = objs
			}
			l := k.ar(name, p.target != "", objs[:1+members]...)
			testfixture.RunIn(t, k.dir, "llvm-strip-14", l)
			libs[name] = l
			return l
		}
		for _, tc := range []struct {
			name    string
			codeOpt string
			strict  bool
			ok      bool
			failure string // in the failures
			note    string // in the notes
			members int
		}{
			{"-O0 code, -strict", "-O0", true, false, " over 16 functions, fewer than the 30 a verdict needs): -strict fails it", "", 16},
			{"-O0 code", "-O0", false, true, "", " over 16 functions, fewer than the 30 a verdict needs) (reported, not failed; -strict fails it)", 16},
			{"-O2 code, -strict", "-O2", true, true, "", "", 16},
			{"-O0 code in 9 members, -strict: too few to weigh", "-O0", true, true, "", "", 9},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				lib := lib(tc.codeOpt, tc.members)
				res, err := Check(context.Background(), Options{Path: lib, MinOpt: "3", Strict: tc.strict})
				if err != nil {
					t.Fatal(err)
				}
				s := res.Binaries[0].Slices[0]
				t.Logf("opt %q, code %+v; failures %q; notes %q", s.Opt, s.Code, res.Failures, res.Notes)
				if s.Code == nil || s.Code.Class != "too little evidence" || s.Opt != "-O3" {
					t.Fatalf("code %+v, opt %q: want too little evidence under an -O3 line", s.Code, s.Opt)
				}
				if res.OK != tc.ok {
					t.Errorf("ok %v, want %v: %q", res.OK, tc.ok, res.Failures)
				}
				if fs := strings.Join(res.Failures, "\n"); tc.failure != "" && (!strings.Contains(fs, "compiler line says -O3 but the little machine code there is looks -O0 (score ") || !strings.Contains(fs, tc.failure)) {
					t.Errorf("failures lack %q: %q", tc.failure, res.Failures)
				}
				if tc.failure != "" && (len(s.Problems) == 0 || s.Problems[0].Rule != "optimisation") {
					t.Errorf("problems %+v: want rule optimisation", s.Problems)
				}
				notes := strings.Join(res.Notes, "\n")
				if tc.note != "" && !strings.Contains(notes, tc.note) {
					t.Errorf("notes lack %q: %q", tc.note, res.Notes)
				}
				if tc.note == "" && strings.Contains(notes, "little machine code") {
					t.Errorf("notes %q", res.Notes)
				}
				// Whatever -strict, -O0-looking code beneath the line leaves
				// the optimisation unknown, not ok: in the table, in -json
				// (opt_status, unknown, the code's evidence with its score),
				// and under -strict in SARIF.
				o0 := tc.codeOpt == "-O0" && tc.members >= 10
				var cells []string
				for _, r := range Rows(res) {
					cells = append(cells, r.Opt)
				}
				var buf bytes.Buffer
				if err := report.JSON(&buf, res); err != nil {
					t.Fatal(err)
				}
				var doc struct {
					Binaries []struct {
						Slices []struct {
							OptStatus string `json:"opt_status"`
							Unknown   string `json:"unknown"`
							Status    string `json:"status"`
							Evidence  []struct {
								Source, Detail string
							} `json:"evidence"`
						} `json:"slices"`
					} `json:"binaries"`
				}
				if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
					t.Fatal(err)
				}
				js := doc.Binaries[0].Slices[0]
				code := ""
				for _, e := range js.Evidence {
					if e.Source == "machine-code" {
						code = e.Detail
					}
				}
				if !strings.Contains(code, fmt.Sprintf("too little evidence (score %.2f over %d functions measured, 30 needed)", s.Code.Score, s.Code.Functions)) {
					t.Errorf("-json machine-code evidence %q: want its score and count", code)
				}
				wantStatus, wantCell := "ok", "-O3"
				if o0 {
					wantStatus, wantCell = "unknown", "unknown"
				}
				if js.OptStatus != wantStatus || s.OptStatus != wantStatus || len(cells) != 1 || cells[0] != wantCell ||
					o0 && !strings.Contains(js.Unknown, "the little machine code there is looks -O0 (score ") {
					t.Errorf("opt_status %q (%q), unknown %q, OPT cells %q: want %q, %q", js.OptStatus, s.OptStatus, js.Unknown, cells, wantStatus, wantCell)
				}
				buf.Reset()
				if err := SARIF(&buf, res, "test"); err != nil {
					t.Fatal(err)
				}
				var log struct {
					Runs []struct {
						Results []struct {
							RuleID  string `json:"ruleId"`
							Message struct{ Text string }
						} `json:"results"`
					} `json:"runs"`
				}
				if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
					t.Fatal(err)
				}
				// OpenSSL 4.0.2's advisories are results of their own rule.
				var rs []struct {
					RuleID  string `json:"ruleId"`
					Message struct{ Text string }
				}
				for _, r := range log.Runs[0].Results {
					if r.RuleID != "advisory" {
						rs = append(rs, r)
					}
				}
				if tc.failure != "" && (len(rs) != 1 || rs[0].RuleID != "optimisation" || !strings.Contains(rs[0].Message.Text, tc.failure)) || tc.failure == "" && len(rs) != 0 {
					t.Errorf("SARIF results %+v: want one optimisation result saying %q only when -strict fails it", rs, tc.failure)
				}
			})
		}
	}
}
