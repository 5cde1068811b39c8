package validate

import "context"

// StaticLibrary is StaticLibraryContext without a deadline, for this
// package's tests; the build passes its context.
func StaticLibrary(path string, exp Expect) (Report, error) {
	return StaticLibraryContext(context.Background(), path, exp)
}

// Universal is UniversalContext without a deadline, for this package's
// tests.
func Universal(path string, exps []Expect) (Report, error) {
	return UniversalContext(context.Background(), path, exps)
}
