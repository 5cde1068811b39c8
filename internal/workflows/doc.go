// Package workflows holds no code: its test lints the GitHub Actions
// workflows in .github/workflows with actionlint and holds them to the
// project's rules (every action pinned to a full commit SHA with a version
// comment, one SHA per action, pyca's artifact names), so a broken or
// loosely pinned workflow fails `go test ./...` on any machine, long before
// it reaches a macOS runner.
package workflows
