package inspect_test

import (
	"bytes"
	"reflect"
	"strconv"
	"testing"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
)

// TestUnmappedBuildInfo: strings appended past the end of a real linked
// dylib (ld64.lld-14's, signed, __LINKEDIT last) are no build information
// and name no library, in memory and read through a reader alike: one
// unmapped run from the image's end to the file's, holding all of them.
func TestUnmappedBuildInfo(t *testing.T) {
	img := signedDylib(t, "arm64", "11.0")
	tail := "\x00compiler: cc -O3 -DOPENSSL_PIC -DL_ENDIAN\x00platform: darwin64-arm64-cc\x00ssl/ssl_lib.c\x00"
	b := append(append([]byte(nil), img...), tail...)
	want := []inspect.Unmapped{{Start: int64(len(img)), End: int64(len(b)),
		Where:   "past the end of the Mach-O image (its last segment ends at byte " + strconv.Itoa(len(img)) + ")",
		Strings: []string{"compiler: cc -O3 -DOPENSSL_PIC -DL_ENDIAN", "platform: darwin64-arm64-cc", inspect.FoundSourcePath + "ssl/ssl_lib.c"}}}
	fromBytes, err := inspect.InspectBytes("liba.dylib", b)
	if err != nil {
		t.Fatal(err)
	}
	fromReader, err := inspect.InspectReader("liba.dylib", bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*inspect.File{"bytes": fromBytes, "reader": fromReader} {
		s := f.Slices[0]
		if len(s.BuildInfo) != 0 || s.Record.Family != "" || s.Record.FamilyMarker != "" || !reflect.DeepEqual(s.Unmapped, want) {
			t.Errorf("%s: build info %+v, family %q (%q), unmapped %+v; want none and %+v", name, s.BuildInfo, s.Record.Family, s.Record.FamilyMarker, s.Unmapped, want)
		}
	}
	// The image alone has nothing outside its segments.
	f, err := inspect.InspectBytes("liba.dylib", img)
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Slices[0]; len(s.Unmapped) != 0 {
		t.Errorf("the image alone: unmapped %+v", s.Unmapped)
	}
}
