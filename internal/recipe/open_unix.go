//go:build unix

package recipe

import (
	"os"
	"syscall"
)

// openNonBlocking opens path without waiting for a writer should it be a
// FIFO after all (ReadFile then refuses it from its mode).
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
