package repro_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osslbuild/osslbuild/internal/diff"
	"github.com/osslbuild/osslbuild/internal/repro"
	"github.com/osslbuild/osslbuild/internal/testsupport/e2e"
)

var record = flag.Bool("record", false, "build e2e.Twins past every cache under a hostile environment, compare them with this run's fixtures and write "+e2e.RecordFile)

// TestReproducibleAgainstRecord: every artifact of e2e.Twins (osslbuild's
// universal2 and both its slices, the shared recipe's arm64 dylibs and
// linux-x86_64 ELF libraries), as this run's fixtures hold it, has the
// files and tarball entries of the record's build of the same plan, which
// was made elsewhere (another machine, day and directory), past every
// cache, under a hostile environment (CFLAGS=-O0, CPPFLAGS, CC,
// MACOSX_DEPLOYMENT_TARGET, SOURCE_DATE_EPOCH..., another TZ, locale and
// umask 077); and no output names a build directory, the fixture store
// or this checkout. Each plan is built once per run: a cold run anywhere
// compares two independent builds.
//
// With -record it builds the twins again here (BuildTwin), compares them
// with the fixtures file by file (repro.CompareDists, down to the archive
// member and section), and writes the record only if they agree.
func TestReproducibleAgainstRecord(t *testing.T) {
	records, err := e2e.LoadRecords()
	if err != nil && !*record {
		t.Fatalf("%v: record it (%s)", err, e2e.RecordCommand)
	}
	if records == nil {
		records = map[string]e2e.Record{}
	}
	for _, tw := range e2e.Twins {
		t.Run(tw.Name, func(t *testing.T) {
			tw.Require(t)
			dist := tw.Fixture(t)
			leaks, err := diff.FindStrings(context.Background(), dist, e2e.Leaks())
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range leaks {
				t.Errorf("%s: %s", tw.Name, l)
			}
			if *record {
				twin := e2e.BuildTwin(t, tw, t.TempDir())
				log := &diff.Log{W: io.Discard}
				if err := repro.CompareDists(context.Background(), tw.Artifacts, dist, twin, e2e.Leaks(), log); err != nil {
					t.Fatal(err)
				}
				for _, l := range log.Lines {
					if l.Status != "PASS" {
						t.Error(l)
					}
				}
				if _, failed := log.Count(); failed > 0 {
					return
				}
			}
			for _, name := range tw.Artifacts {
				got, err := e2e.RecordOf(dist, name)
				if err != nil {
					t.Fatal(err)
				}
				if *record {
					records[name] = got
					continue
				}
				want, ok := records[name]
				if !ok {
					t.Errorf("%s: not in %s: record it (%s)", name, e2e.RecordFile, e2e.RecordCommand)
					continue
				}
				for _, p := range e2e.CompareRecord(name, want, got) {
					t.Error(p)
				}
			}
		})
	}
	if *record && !t.Failed() {
		if err := e2e.WriteRecords(records); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", e2e.RecordFile)
	}
}

// TestRecordTellsStaleFromIrreproducible: the comparison with the record
// says a changed plan is a stale record (one problem, naming the command
// that records again), and names each file and tar entry of a build of
// the recorded plan that differs.
func TestRecordTellsStaleFromIrreproducible(t *testing.T) {
	base := e2e.Record{Plan: "aa", Files: map[string]string{"lib/libcrypto.a": "11", "include/openssl/ssl.h": "22"},
		Tar: []string{"0 644 0:0 : 1 10 openssl/lib/libcrypto.a"}}
	for _, tt := range []struct {
		name string
		edit func(r *e2e.Record)
		want []string
	}{
		{"same", func(r *e2e.Record) {}, nil},
		{"plan", func(r *e2e.Record) { r.Plan = "bb"; r.Files = nil }, []string{"x: its plan changed since it was recorded (plan bb, recorded aa): if the change is meant, record again (" + e2e.RecordCommand + ")"}},
		{"file", func(r *e2e.Record) {
			r.Files = map[string]string{"lib/libcrypto.a": "12", "include/openssl/ssl.h": "22"}
		}, []string{"x: lib/libcrypto.a has sha256 12, the record's build 11"}},
		{"missing", func(r *e2e.Record) { r.Files = map[string]string{"lib/libcrypto.a": "11"} }, []string{"x: include/openssl/ssl.h is recorded (sha256 22) but not built"}},
		{"extra", func(r *e2e.Record) {
			r.Files = map[string]string{"lib/libcrypto.a": "11", "include/openssl/ssl.h": "22", "lib/x": "33"}
		}, []string{"x: lib/x is not in the record"}},
		{"tar", func(r *e2e.Record) { r.Tar = []string{"0 600 0:0 : 1 10 openssl/lib/libcrypto.a"} }, []string{
			`x.tar.gz: entry "0 600 0:0 : 1 10 openssl/lib/libcrypto.a" is not the record's`,
			`x.tar.gz: the record's entry "0 644 0:0 : 1 10 openssl/lib/libcrypto.a" is missing`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := base
			tt.edit(&got)
			problems := e2e.CompareRecord("x", base, got)
			if tt.want == nil {
				if len(problems) != 0 {
					t.Fatalf("problems %q, want none", problems)
				}
				return
			}
			if tt.name != "plan" {
				tt.want = append(tt.want, "x: the plan is the recorded one, so either the build is not reproducible or code after make changed what it lays out; if that change is meant, record again ("+e2e.RecordCommand+")")
			}
			if len(problems) != len(tt.want) {
				t.Fatalf("problems\n%q\nwant\n%q", problems, tt.want)
			}
			for i := range problems {
				if problems[i] != tt.want[i] {
					t.Errorf("problem %d: %q, want %q", i, problems[i], tt.want[i])
				}
			}
		})
	}
}

// TestRecordPlan: a record's plan follows what decides the bytes (a
// changed Configure argument, source or toolchain is another plan) and
// not what names the run (osslbuild's revision, the recipe file's digest,
// the verdicts, the SBOM); a manifest without a plan field is refused, naming the
// file and the field.
func TestRecordPlan(t *testing.T) {
	base := map[string]any{
		"name": "openssl-macos-arm64", "osslbuild": "v1", "recipe": map[string]any{"sha256": "r1"},
		"openssl": map[string]any{"version": "4.0.2", "sha256": "s1", "url": "mirror:openssl-4.0.2.tar.gz"},
		"patches": []any{}, "target": map[string]any{"name": "arm64", "options": []any{"no-zlib"}},
		"toolchain": map[string]any{"compiler": "clang 14"}, "configure": map[string]any{"argv": []any{"perl", "Configure", "darwin64-arm64-cc"}},
		"source_date_epoch": 1, "code_evidence": []any{"optimised"},
		"files": map[string]any{"lib/libcrypto.a": "11", "sbom.json": "22"},
	}
	planOf := func(t *testing.T, edit func(m map[string]any)) (string, error) {
		t.Helper()
		m := map[string]any{}
		b, _ := json.Marshal(base)
		json.Unmarshal(b, &m)
		edit(m)
		dist := t.TempDir()
		writeArtifact(t, dist, "openssl-macos-arm64", m)
		r, err := e2e.RecordOf(dist, "openssl-macos-arm64")
		return r.Plan, err
	}
	want, err := planOf(t, func(map[string]any) {})
	if err != nil {
		t.Fatal(err)
	}
	dist := t.TempDir()
	writeArtifact(t, dist, "openssl-macos-arm64", base)
	if r, err := e2e.RecordOf(dist, "openssl-macos-arm64"); err != nil || len(r.Files) != 1 || r.Files["lib/libcrypto.a"] != "11" {
		t.Errorf("files %v (%v), want lib/libcrypto.a alone: sbom.json names the revision", r.Files, err)
	}
	for _, tt := range []struct {
		name string
		edit func(m map[string]any)
		same bool
	}{
		{"revision", func(m map[string]any) { m["osslbuild"] = "v2" }, true},
		{"recipe file", func(m map[string]any) { m["recipe"] = map[string]any{"sha256": "r2"} }, true},
		{"verdicts", func(m map[string]any) { m["code_evidence"] = []any{} }, true},
		{"mirror", func(m map[string]any) { m["openssl"].(map[string]any)["url"] = "https://example/x.tar.gz" }, true},
		{"argv", func(m map[string]any) {
			m["configure"] = map[string]any{"argv": []any{"perl", "Configure", "darwin64-arm64-cc", "no-asm"}}
		}, false},
		{"source", func(m map[string]any) { m["openssl"].(map[string]any)["sha256"] = "s2" }, false},
		{"toolchain", func(m map[string]any) { m["toolchain"] = map[string]any{"compiler": "clang 15"} }, false},
		{"options", func(m map[string]any) { m["target"] = map[string]any{"name": "arm64", "options": []any{}} }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := planOf(t, tt.edit)
			if err != nil {
				t.Fatal(err)
			}
			if (got == want) != tt.same {
				t.Errorf("plan %.12s against %.12s: same=%v, want same=%v", got, want, got == want, tt.same)
			}
		})
	}
	_, err = planOf(t, func(m map[string]any) { delete(m, "configure") })
	if err == nil || !strings.Contains(err.Error(), "manifest.json: no \"configure\"") {
		t.Errorf("a manifest without configure: %v", err)
	}
}

// writeArtifact writes dist/name/manifest.json and dist/name.tar.gz (one
// entry) for RecordOf.
func writeArtifact(t *testing.T, dist, name string, manifest map[string]any) {
	t.Helper()
	b, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dist, name), 0o755)
	if err := os.WriteFile(filepath.Join(dist, name, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: name + "/manifest.json", Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
	tw.Write(b)
	tw.Close()
	zw.Close()
	if err := os.WriteFile(filepath.Join(dist, name+".tar.gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
