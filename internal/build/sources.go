package build

import _ "embed"

// Invocation is build.go, the file that decides how make runs (its
// targets, variables and install): the make cache keys staging
// directories by it as well as by the plan, so a change to how make is
// run is a new key, while a change anywhere else in osslbuild is not.
//
//go:embed build.go
var Invocation []byte
