//go:build !unix

package recipe

import "os"

// openNonBlocking is os.Open where FIFOs do not block an open.
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }
