package inspect

import (
	"bytes"
	"reflect"
	"testing"
)

func TestParseAr(t *testing.T) {
	obj := []byte("odd") // odd size: exercises the '\n' pad byte
	tests := []struct {
		name    string
		data    []byte
		members []string
		symtabs []string
	}{
		{"empty", []byte(ArMagic), nil, nil},
		{"plain names", buildAr(arEntry{"a.o", obj}, arEntry{"b.o", obj}), []string{"a.o", "b.o"}, nil},
		{"bsd sorted symdef with NUL-padded long names", buildAr(
			arEntry{"__.SYMDEF SORTED", []byte("\x00\x00\x00\x00")},
			arEntry{"#1/28", append([]byte("libcrypto-lib-cversion.o\x00\x00\x00\x00"), obj...)},
			arEntry{"#1/8", append([]byte("x.o\x00\x00\x00\x00\x00"), obj...)},
		), []string{"libcrypto-lib-cversion.o", "x.o"}, []string{"__.SYMDEF SORTED"}},
		{"bsd symdef named through #1/N", buildAr(
			arEntry{"#1/20", []byte("__.SYMDEF_64 SORTED\x00")},
			arEntry{"#1/4", append([]byte("a.o\x00"), obj...)},
		), []string{"a.o"}, []string{"__.SYMDEF_64 SORTED"}},
		{"bsd __.SYMDEF_64 short name", buildAr(arEntry{"__.SYMDEF_64", nil}, arEntry{"a.o", obj}), []string{"a.o"}, []string{"__.SYMDEF_64"}},
		{"gnu with long-name table", buildAr(
			arEntry{"/", []byte{0, 0, 0, 0}},
			arEntry{"//", []byte("libcrypto-lib-cversion.o/\nlibssl-lib-a_long_name.o/\n")},
			arEntry{"/0", obj},
			arEntry{"/26", obj},
			arEntry{"short.o/", obj},
		), []string{"libcrypto-lib-cversion.o", "libssl-lib-a_long_name.o", "short.o"}, []string{"/"}},
		{"gnu sym64", buildAr(arEntry{"/SYM64/", make([]byte, 8)}, arEntry{"a.o/", obj}), []string{"a.o"}, []string{"/SYM64/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseAr(bytes.NewReader(tt.data), int64(len(tt.data)))
			if err != nil {
				t.Fatal(err)
			}
			var names, syms []string
			for _, m := range a.Members {
				names = append(names, m.Name)
				if got := string(tt.data[m.Offset : m.Offset+m.Size]); got != string(obj) {
					t.Errorf("member %s data %q, want %q", m.Name, got, obj)
				}
			}
			for _, m := range a.SymbolTables {
				syms = append(syms, m.Name)
				if !m.SymbolTable {
					t.Errorf("%s not marked as symbol table", m.Name)
				}
			}
			if !reflect.DeepEqual(names, tt.members) || !reflect.DeepEqual(syms, tt.symtabs) {
				t.Errorf("members %q symtabs %q, want %q %q", names, syms, tt.members, tt.symtabs)
			}
		})
	}
}

func TestParseArNotAr(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("!<arch"), []byte("!<arc>\n\n")} {
		if _, err := ParseAr(bytes.NewReader(data), int64(len(data))); err == nil {
			t.Errorf("%q: no error", data)
		}
	}
}
