package check

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// ptyPair is a pseudo-terminal: what a program writes to slave, which is a
// terminal, is read from master.
type ptyPair struct{ master, slave *os.File }

// pty opens a pseudo-terminal cols columns wide.
func pty(t *testing.T, cols int) ptyPair {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: uint16(cols)}); err != nil {
		t.Fatal(err)
	}
	return ptyPair{master: m, slave: s}
}

// TestTextTerminalWidth: on a terminal the table fits the terminal's
// width (term.GetSize on stdout), here a pseudo-terminal 90 columns wide.
func TestTextTerminalWidth(t *testing.T) {
	whl := universal2Wheel(t)
	tty := pty(t, 90)
	done := make(chan string)
	go func() {
		b, _ := readAll(tty.master)
		done <- b
	}()
	err := Run(context.Background(), Options{Path: whl, Stdout: tty.slave, Env: noEnv, Advisories: testAdvisories(t), Now: dec1})
	tty.slave.Close()
	out := strings.ReplaceAll(<-done, "\r\n", "\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := tableLines(out)
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 90 {
			t.Errorf("a table line of %d runes on a 90-column terminal:\n%s", n, l)
		}
	}
	if len(lines) < 6 || !strings.HasPrefix(lines[0], "ARTIFACT") {
		t.Errorf("no table:\n%s", out)
	}
}

// readAll reads a pseudo-terminal's master until the slave is closed
// (Linux reports EIO then).
func readAll(f *os.File) (string, error) {
	var b bytes.Buffer
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String(), err
		}
	}
}
