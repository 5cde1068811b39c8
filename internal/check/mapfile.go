package check

import "syscall"

// mapFile maps the size bytes of f read-only: the file is read once, by
// the hash and the build-info search together, and never copied. When the
// file system cannot map, it is read instead.
func mapFile(f rawFile, size int64) ([]byte, func(), error) {
	if size <= 0 || int64(int(size)) != size {
		return readFile(f, size)
	}
	b, err := syscall.Mmap(f.fd, 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED|mapPopulate)
	if err != nil {
		return readFile(f, size)
	}
	return b, func() { syscall.Munmap(b) }, nil
}
