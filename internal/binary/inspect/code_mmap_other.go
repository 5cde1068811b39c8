//go:build !unix

package inspect

import "os"

// mapFile: no memory mapping here; CodeEvidenceFile reads the file instead.
func mapFile(*os.File, int64) ([]byte, func(), bool) { return nil, nil, false }
