// Package patches embeds the patch files (*.patch) applied to OpenSSL
// source trees; see README.md for the format. internal/source/patch applies them.
package patches

import "embed"

// FS holds this directory; only *.patch files are patches.
//
//go:embed *
var FS embed.FS
