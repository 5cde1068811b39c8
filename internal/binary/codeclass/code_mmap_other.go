//go:build !unix

package codeclass

import "os"

// mapFile: no memory mapping here; EvidenceFile reads the file instead.
func mapFile(*os.File, int64) ([]byte, func(), bool) { return nil, nil, false }
