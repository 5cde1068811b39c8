package inspect

// Run a fuzzer with, for example:
//
//	go test ./internal/binary/inspect -run '^$' -fuzz '^FuzzParseFat$' -fuzztime 60s -fuzzminimizetime 2s
//
// The short -fuzzminimizetime matters for FuzzParseFat: its seeds are
// kilobytes long and the default 60 s minimisation of each new input
// otherwise eats the whole run. Crashers go to testdata/fuzz/<Fuzzer>/.

import (
	"bytes"
	"debug/macho"
	"io"
	"reflect"
	"testing"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

func FuzzParseAr(f *testing.F) {
	_, archives, _ := testfixture.RealSeeds(f)
	for _, s := range append(archives, testfixture.SynthArchives(f)...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseAr(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for _, m := range append(a.Members, a.SymbolTables...) {
			if m.Offset < 0 || m.Size < 0 || m.Offset+m.Size > int64(len(data)) || m.Offset < arHeaderSize+int64(len(ArMagic)) {
				t.Fatalf("member %q out of bounds: %+v (archive %d bytes)", m.Name, m, len(data))
			}
		}
	})
}

func FuzzParseFat(f *testing.F) {
	_, archives, fats := testfixture.RealSeeds(f)
	obj := machoObject(f, LCBuildVersion, PlatformMacOS, 0x000b0000)
	seeds := append(fats,
		fatFile(f, fatSlice{cpu: macho.CpuArm64, data: obj}, fatSlice{cpu: macho.CpuAmd64, data: testfixture.SynthArchives(f)[1]}),
		fatFile64(f, macho.CpuArm64, 4096, 16),
		// Compact seeds: slices right after the header keep inputs small for the mutator.
		fatFile(f, fatSlice{cpu: macho.CpuArm64, data: obj, offset: 28}),
		fatFile(f, fatSlice{cpu: macho.CpuArm64, data: testfixture.SynthArchives(f)[2], offset: 28}),
		[]byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 1},
	)
	for _, a := range archives {
		seeds = append(seeds, fatFile(f, fatSlice{cpu: macho.CpuArm64, data: a}))
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, arches, err := ParseFat(bytes.NewReader(data), int64(len(data)))
		if err == nil {
			for _, a := range arches {
				if a.Offset < 8 || a.Size <= 0 || a.Offset+a.Size > int64(len(data)) {
					t.Fatalf("slice out of bounds: %+v (file %d bytes)", a, len(data))
				}
			}
		}
		// The whole pipeline on the same input: it must not panic either.
		_, _ = InspectReader("fuzz", bytes.NewReader(data), int64(len(data)))
	})
}

func FuzzParseMachO(f *testing.F) {
	objs, _, _ := testfixture.RealSeeds(f)
	seeds := append(objs,
		machoObject(f, LCBuildVersion, PlatformMacOS, 0x000b0000),
		machoObject(f, LCVersionMinMacOSX, 0, 0x000a0c00),
		testfixture.BigEndian32(),
	)
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMachO(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		if int64(len(m.Versions))*8 > int64(len(data)) {
			t.Fatalf("%d versions from %d bytes", len(m.Versions), len(data))
		}
		_ = m.TypeName()
		for _, v := range m.Versions {
			_ = v.MinOS.String() + v.SDK.String() + v.Platform.String() + v.CmdName()
		}
	})
}

func FuzzScanBuildInfo(f *testing.F) {
	f.Add([]byte("\x00compiler: cc -O3\x00OpenSSL 4.0.2 25 Aug 2026\x00platform: x\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ScanBuildInfo(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range got {
			if b.Offset < 0 || b.Offset+int64(len(b.Text)) > int64(len(data)) || !bytes.HasPrefix(data[b.Offset:], []byte(b.Text)) {
				t.Fatalf("%+v does not point into the input", b)
			}
			_ = ParseCompilerLine(b.Value).Has("-O3")
		}
	})
}

// Make sure the io.ReaderAt contract is all the parsers need: a reader that
// returns short reads with io.EOF at the end must not confuse them.
func TestParsersWithSectionReader(t *testing.T) {
	obj := machoObject(t, LCBuildVersion, PlatformMacOS, 0x000b0000)
	ar := buildAr(arEntry{"a.o/", obj})
	padded := append(append([]byte("junk"), ar...), "junk"...)
	sr := io.NewSectionReader(bytes.NewReader(padded), 4, int64(len(ar)))
	a, err := ParseAr(sr, int64(len(ar)))
	if err != nil || len(a.Members) != 1 {
		t.Fatalf("%+v %v", a, err)
	}
}

// FuzzInspectLoaded: whatever the headers say, Inspect in memory and
// through a reader agree on what is build information and what lies in
// bytes the format does not load, every string kept lies in its slice,
// every unmapped run lies in the file and holds what it names, and
// nothing panics.
func FuzzInspectLoaded(f *testing.F) {
	objs, _, _ := testfixture.RealSeeds(f)
	line := []byte("\x00compiler: cc -O3 -DOPENSSL_PIC -DL_ENDIAN\x00platform: x\x00ssl/s3_clnt.c\x00")
	for _, o := range append(objs, machoObject(f, LCBuildVersion, PlatformMacOS, 0x000b0000)) {
		f.Add(append(append([]byte(nil), o...), line...))
		f.Add(buildAr(arEntry{"a.o/", o}, arEntry{"b.txt/", line}))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, aerr := InspectBytes("fuzz", data)
		b, berr := InspectReader("fuzz", bytes.NewReader(data), int64(len(data)))
		if (aerr == nil) != (berr == nil) {
			t.Fatalf("in memory: %v; through a reader: %v", aerr, berr)
		}
		if aerr != nil {
			return
		}
		for i := range a.Slices {
			sa, sb := a.Slices[i], b.Slices[i]
			if !reflect.DeepEqual(sa.BuildInfo, sb.BuildInfo) || !reflect.DeepEqual(sa.Unmapped, sb.Unmapped) ||
				sa.Record.Family != sb.Record.Family || sa.Record.FamilyMarker != sb.Record.FamilyMarker {
				t.Fatalf("slice %d: in memory %+v %+v %q, through a reader %+v %+v %q", i, sa.BuildInfo, sa.Unmapped, sa.Record.FamilyMarker, sb.BuildInfo, sb.Unmapped, sb.Record.FamilyMarker)
			}
			for _, bi := range sa.BuildInfo {
				if bi.Offset < sa.Offset || bi.Offset+int64(len(bi.Text)) > sa.Offset+sa.Size {
					t.Fatalf("%+v outside its slice at %d (%d bytes)", bi, sa.Offset, sa.Size)
				}
			}
			for _, u := range sa.Unmapped {
				if u.Start < 0 || u.End > int64(len(data)) || u.Start > u.End || len(u.Strings) == 0 {
					t.Fatalf("unmapped %+v in a file of %d bytes", u, len(data))
				}
			}
		}
	})
}
