package testfixture

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// FIFO makes a named pipe at path that no test can hang on: until the
// test ends, whenever a reader waits in a blocking open(2) of it (only
// then does a non-blocking open for writing succeed), it opens the write
// end and closes it at once, so that reader reads an empty file instead
// of waiting for ever. Code that opens without blocking and refuses a
// FIFO by name passes; code that would block gets an empty file and
// fails the test's check, instead of hanging the test binary.
func FIFO(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			time.Sleep(5 * time.Millisecond) // pacing, not a deadline
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}
