// Package release is what a recipe pins of one upstream OpenSSL release,
// below both the recipe (which reads and checks it: recipe.Release is this
// type) and the sources (which fetch and prove it), so internal/source
// never imports internal/recipe (TestBelowTheRecipe).
package release

import "github.com/osslbuild/osslbuild/internal/source/signature"

// Release is one pinned upstream OpenSSL release.
type Release struct {
	Version   string   `toml:"version"`
	SHA256    string   `toml:"sha256"`
	Size      int64    `toml:"size"`
	URLs      []string `toml:"urls"`
	Signers   []string `toml:"signers"`   // primary key fingerprints from keys/ or the recipe's release_keys
	Signature string   `toml:"signature"` // "required" (default); "optional" only with LoadOptions.Unsigned
	// Keys are the recipe's release keys, where Signers may find a key
	// beside osslbuild's keys/ (Recipe.Keys).
	Keys []signature.Key `toml:"-" json:"-"`
}

// FileName is the upstream tarball name, openssl-<version>.tar.gz.
func (r Release) FileName() string { return "openssl-" + r.Version + ".tar.gz" }

// SignatureRequired reports whether a missing signature is fatal.
func (r Release) SignatureRequired() bool { return r.Signature != "optional" }
