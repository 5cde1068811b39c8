// Package magetest runs osslbuild's Mage targets the way a user does,
// `go tool mage <target>` in the repository root, and checks what they print
// and their exit codes. It has no code of its own, only tests.
package magetest
