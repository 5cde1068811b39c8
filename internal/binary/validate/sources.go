package validate

import "embed"

// Sources are this package's Go files: a verdict depends on them, so the
// artifact cache records their digest with every entry it has proved and
// proves the entry again once they change (pipeline's rulesDigest).
//
//go:embed *.go
var Sources embed.FS
