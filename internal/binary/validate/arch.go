package validate

// NormArch folds the names ELF tools, Go and Apple's tools give one CPU
// ("aarch64" is "arm64", "amd64" and "x86-64" are "x86_64"), so every rule
// compares architectures the same way.
func NormArch(a string) string {
	switch a {
	case "aarch64":
		return "arm64"
	case "amd64", "x86-64":
		return "x86_64"
	}
	return a
}

// SameArch reports whether two architecture names are one CPU.
func SameArch(a, b string) bool { return NormArch(a) == NormArch(b) }
