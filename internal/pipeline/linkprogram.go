package pipeline

import "github.com/osslbuild/osslbuild/internal/link"

// WithLinkProgram is rt linking prog in the link stage instead of
// smoke/smoke.c: a tree shaped like OpenSSL that is not OpenSSL (the mini
// tree of the tests, internal/testsupport/minitest) needs a consumer of
// its own API. Exported for test support in other packages; no flag or
// environment variable reaches it.
func WithLinkProgram(rt Runtime, prog link.Program) Runtime {
	rt.linkProgram = prog
	return rt
}
