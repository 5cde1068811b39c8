#!/usr/bin/env bash
# Opens or updates the pull request that proposes a new advisory table
# from what `go run ./internal/advisory/cmd/genadvisories -proposal DIR`
# wrote (DIR: advisories.json, title.txt, body.md, commit.txt): the second
# job of .github/workflows/advisory-update.yml, the only one holding a
# token that can write. It runs git and gh only; reading OpenSSL's records
# and testing the table happened in the first job, without that token.
#
#   scripts/advisory-pull-request.sh DIR
#
# Run in a checkout of the base branch (HEAD is the base). Environment:
#   GITHUB_REPOSITORY  owner/repo, for gh
#   BASE_BRANCH        the branch the pull request goes to (main)
#   GH_TOKEN           the token for gh and for git's push
#
# The branch is osslbuild/advisories, owned by this script: one commit on
# the base, opened or updated as scripts/lib/pull-request.sh says.
set -euo pipefail

die() { echo "advisory-pull-request: $*" >&2; exit 1; }
# shellcheck source=lib/pull-request.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/pull-request.sh"

[ $# -eq 1 ] || die "usage: $0 PROPOSAL_DIR"
dir=$1
[ -d "$dir" ] || die "$dir: no such directory"
: "${GITHUB_REPOSITORY:?advisory-pull-request: GITHUB_REPOSITORY (owner/repo) is not set}"
: "${BASE_BRANCH:?advisory-pull-request: BASE_BRANCH is not set}"
table=internal/advisory/advisories.json
branch=osslbuild/advisories
base=$(git rev-parse --verify 'HEAD^{commit}') || die "not in a git checkout"
[ -f "$table" ] || die "$table: not found in the checkout"
[ -z "$(git status --porcelain --untracked-files=no)" ] || die "the checkout has local changes"
for f in advisories.json title.txt body.md commit.txt; do
	if [ ! -f "$dir/$f" ] || [ -L "$dir/$f" ]; then die "$dir/$f: missing or not a regular file"; fi
done
# The bot proposes data, never a new schema: the proposal's schema line
# must be the base table's (a schema change comes with the code reading it).
schema=$(grep -m 1 -E '^  "schema": "https://github.com/osslbuild/osslbuild/advisory/v[0-9]+",$' "$table") ||
	die "$table: no schema line on the base"
head -n 3 "$dir/advisories.json" | grep -qxF -- "$schema" ||
	die "$dir/advisories.json: not an advisory table of the base's schema (want ${schema#  })"
title=$(head -n 1 "$dir/title.txt")
[ -n "$title" ] || die "$dir/title.txt: empty"

pr_identity "$base"
trap 'git checkout -q --detach "$base"' EXIT
pr_commit "$base" "$table" "$dir/advisories.json" "$dir/commit.txt"

pr_open_or_update "$branch" "$title" "$dir/body.md" "" "with this title"
