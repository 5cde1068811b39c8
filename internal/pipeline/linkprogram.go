package pipeline

import (
	"github.com/osslbuild/osslbuild/internal/link"
	"github.com/osslbuild/osslbuild/smoke"
)

// WithLinkProgram is rt linking prog in the link stage instead of
// smoke/smoke.c: a tree shaped like OpenSSL that is not OpenSSL (the mini
// tree of the tests, internal/testsupport/minitest) needs a consumer of
// its own API. Exported for test support in other packages; no flag or
// environment variable reaches it.
func WithLinkProgram(rt Runtime, prog link.Program) Runtime {
	rt.linkProgram = prog
	return rt
}

// LinkProgram is the program rt's link stage links: smoke/smoke.c unless
// WithLinkProgram gave another. verify:rebuild holds it to the program an
// artifact records before building.
func LinkProgram(rt Runtime) link.Program {
	if rt.linkProgram.Source == nil {
		return link.Program{Name: smoke.Name, Source: smoke.Source}
	}
	return rt.linkProgram
}
