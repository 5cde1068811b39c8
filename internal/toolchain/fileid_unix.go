//go:build linux || darwin

package toolchain

import (
	"fmt"
	"os"
	"syscall"
)

// fileID is the file's device, inode and status-change time: a file
// written again in place, or another file moved to the same path with the
// same size and modification time, has another.
func fileID(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d:%s", st.Dev, st.Ino, ctime(st))
}
