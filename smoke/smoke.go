// Package smoke embeds smoke.c, the program that proves an artifact is
// usable: the link check links it on every slice (internal/link), and
// `go tool mage smoke` runs it where the slice can run.
package smoke

import _ "embed"

// Source is smoke.c.
//
//go:embed smoke.c
var Source []byte

// Name is the program's path in the repository, as records name it.
const Name = "smoke/smoke.c"
