//go:build !unix

package check

import "os"

func mapFile(f *os.File, size int64) ([]byte, func(), error) { return readFile(f, size) }
