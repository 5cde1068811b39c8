package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestObjRe(t *testing.T) {
	tests := []struct{ line, want string }{
		{`cc  -Icrypto -I. -fPIC -arch arm64 -O3 -MMD -MF crypto/libcrypto-lib-cversion.d.tmp -c -o crypto/libcrypto-lib-cversion.o crypto/cversion.c`, "crypto/libcrypto-lib-cversion.o"},
		{`cc -I. -c -o crypto/aes/libcrypto-lib-aesv8-armx.o crypto/aes/libcrypto-lib-aesv8-armx.S`, "crypto/aes/libcrypto-lib-aesv8-armx.o"},
		{`ar qc libcrypto.a crypto/a.o`, ""},
		{`perl util/mkbuildinf.pl "cc -O3" > crypto/buildinf.h`, ""},
	}
	for _, tt := range tests {
		m := objRe.FindStringSubmatch(tt.line)
		got := ""
		if m != nil {
			got = m[1]
		}
		if got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestRunWithRealMake drives GNU make on a small Makefile shaped like
// OpenSSL's (build_libs, install_dev with DESTDIR), checking progress counts,
// the log and the install.
func TestRunWithRealMake(t *testing.T) {
	src := t.TempDir()
	mk := "LIBS=liba.a\nbuild_libs: liba.a\nliba.a: x.o y.o\n\t@echo ar qc $@ x.o y.o; cat x.o y.o > $@\n" +
		"x.o y.o:\n\t@echo cc -O3 -c -o $@ $(@:.o=.c); echo obj > $@\n" +
		"install_dev: build_libs\n\tmkdir -p $(DESTDIR)/opt/lib && cp liba.a $(DESTDIR)/opt/lib/\n"
	os.WriteFile(filepath.Join(src, "Makefile"), []byte(mk), 0o644)
	var out bytes.Buffer
	p := &LineProgress{W: &out, Label: "t", Interval: 0}
	stage := filepath.Join(t.TempDir(), "stage")
	log := filepath.Join(t.TempDir(), "make.log")
	err := Run(context.Background(), Options{Src: src, Env: []string{"PATH=/usr/bin:/bin"}, Jobs: 2, Objects: []string{"x.o", "y.o"}, Log: log, Progress: p, Stage: stage})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(stage, "opt/lib/liba.a")); err != nil {
		t.Error("install_dev did not install into DESTDIR")
	}
	if !strings.Contains(out.String(), "[2/2 100%] done") {
		t.Errorf("progress:\n%s", out.String())
	}
	b, _ := os.ReadFile(log)
	if !strings.Contains(string(b), "+ make -j2 build_libs") || !strings.Contains(string(b), "cc -O3 -c -o x.o") {
		t.Errorf("log:\n%s", b)
	}
}

func TestRunFailureShowsTail(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "Makefile"), []byte("build_libs:\n\t@echo compiling; echo 'x.c:1: error: boom' >&2; exit 1\n"), 0o644)
	log := filepath.Join(t.TempDir(), "make.log")
	err := Run(context.Background(), Options{Src: src, Env: []string{"PATH=/usr/bin:/bin"}, Log: log, Stage: t.TempDir()})
	var be *Error
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "error: boom") || !strings.Contains(err.Error(), log) {
		t.Errorf("want *Error with the log tail and path, got %v", err)
	}
}

func TestRunCancelStopsMake(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "Makefile"), []byte("build_libs: a b\na b:\n\tsleep 300\n"), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Src: src, Env: []string{"PATH=/usr/bin:/bin"}, Jobs: 2, Log: filepath.Join(t.TempDir(), "l"), Stage: t.TempDir()})
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("want deadline exceeded, got %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("make survived cancellation")
	}
}

// TestSharedJobsBudget runs two makes at once under one budget of 3 jobs:
// together they must reach 3 concurrent jobs (the jobserver is used: without
// it each make would run one job at a time) and never exceed 3.
func TestSharedJobsBudget(t *testing.T) {
	j, err := NewJobs(3)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	running := t.TempDir()
	peaks := filepath.Join(t.TempDir(), "peaks")
	var objs []string
	rule := ""
	for i := 0; i < 6; i++ {
		objs = append(objs, fmt.Sprintf("o%d.o", i))
	}
	rule = "build_libs: " + strings.Join(objs, " ") + "\n" + strings.Join(objs, " ") + ":\n" +
		"\t@touch " + running + "/$$$$; ls " + running + " | wc -l >> " + peaks + "; sleep 0.4; rm " + running + "/$$$$\n" +
		"install_dev:\n\t@true\n"
	errs := make(chan error, 2)
	for i := 0; i < 2; i++ {
		src := t.TempDir()
		os.WriteFile(filepath.Join(src, "Makefile"), []byte(rule), 0o644)
		go func() {
			errs <- Run(context.Background(), Options{Src: src, Env: []string{"PATH=/usr/bin:/bin"}, Shared: j,
				Log: filepath.Join(t.TempDir(), "log"), Stage: t.TempDir()})
		}()
	}
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(peaks)
	max := 0
	for _, f := range strings.Fields(string(b)) {
		var n int
		fmt.Sscan(f, &n)
		if n > max {
			max = n
		}
	}
	if max != 3 {
		t.Errorf("peak concurrency %d across both makes, want exactly the budget, 3 (samples %q)", max, strings.Fields(string(b)))
	}
}
