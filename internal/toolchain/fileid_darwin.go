package toolchain

import (
	"fmt"
	"syscall"
)

func ctime(st *syscall.Stat_t) string {
	return fmt.Sprintf("%d.%09d", st.Ctimespec.Sec, st.Ctimespec.Nsec)
}
