// Package toolid is the identity of the tools that built an artifact, as
// its manifest records it. Package toolchain finds it; check, which only
// reads manifests, needs nothing else of the toolchain.
package toolid

// Identity records exactly which tools built an artifact.
type Identity struct {
	Kind     string `json:"kind"`
	Compiler string `json:"compiler"`           // first line of "clang --version"
	SDK      string `json:"sdk,omitempty"`      // macOS SDK version, or the headers package in cross mode
	SDKPath  string `json:"sdk_path,omitempty"` // macOS: the SDK xcrun selected, given to clang as SDKROOT
	// SDKDigest is the sha256 over what the compiler and the link read of
	// the SDK, file names and contents: in cross mode the macOS header
	// directories, the CommonCrypto shim and the libSystem stubs ("" where
	// not computed: a manifest from before it, or Xcode's SDK, named by its
	// version and path).
	SDKDigest string            `json:"sdk_digest,omitempty"`
	Tools     map[string]string `json:"tools,omitempty"`   // cc (macOS), ar, ranlib, lipo: path (and version in cross mode)
	Targets   map[string]string `json:"targets,omitempty"` // per arch: clang -target used (cross)
}

// String is a one-line summary for logs.
func (id Identity) String() string {
	s := id.Kind + ": " + id.Compiler
	if id.SDK != "" {
		s += ", " + id.SDK
	}
	return s
}
