// Package recipes embeds the project's recipe files (*.toml), so a built
// osslbuild carries them; internal/recipe loads and validates them.
package recipes

import "embed"

// FS holds every recipe shipped with osslbuild.
//
//go:embed *.toml
var FS embed.FS

// Default is the recipe used when none is named.
const Default = "openssl.toml"
