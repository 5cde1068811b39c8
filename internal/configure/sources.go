package configure

import _ "embed"

// GateSource is gate.go, the file that reads Configure's Makefile and
// decides whether make runs: the make cache keys staging directories by it,
// so a change to the gate builds again rather than restoring what an older
// gate let through.
//
//go:embed gate.go
var GateSource []byte
