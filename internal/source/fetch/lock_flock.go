//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package fetch

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f, held until f is closed or the
// process dies; it waits while a sweep holds it for a moment.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// tryLockFile takes an exclusive flock on f if no one holds one.
func tryLockFile(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, syscall.EINTR):
			return false, err
		}
	}
}

// sweepsByLock: temporary files of dead processes are swept at once.
const sweepsByLock = true
