//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package fetch

import "os"

func lockFile(*os.File) error { return nil }

func tryLockFile(*os.File) (bool, error) { return false, nil }

// sweepsByLock: temporary files are swept by age only.
const sweepsByLock = false
