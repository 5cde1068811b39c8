// Package workflows holds no code: its tests lint the GitHub Actions
// workflows in .github/workflows with actionlint and hold them to the
// project's rules (every action pinned to a full commit SHA with a version
// comment, one SHA per action, pyca's artifact names); check action.yml,
// the composite action other repositories call, and docs/pyca-infra.md,
// the replacement of pyca/infra's workflow, against each other; and run
// the action's own scripts the way GitHub Actions runs them. A broken or
// loosely pinned workflow fails `go test ./...` on any machine, long
// before it reaches a macOS runner.
package workflows
