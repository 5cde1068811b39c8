// Package docs holds the tests that keep README.md and docs/ true: the
// front door's size and first screen, links that resolve, every
// `go tool mage` command shown naming a target and flags the magefile has,
// and every transcript (a ```console block of `$ command` and its output)
// run and compared, so a renamed flag or a changed message fails a test.
package docs
