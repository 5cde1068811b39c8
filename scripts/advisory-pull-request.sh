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
# the base, rewritten when the base or the proposal changes. The commit's
# author, committer and dates are fixed (the dates are the base commit's),
# so an unchanged proposal on an unchanged base is the same commit and
# nothing is pushed or edited. A pull request of the same title that was
# closed without merging is not reopened.
set -euo pipefail

die() { echo "advisory-pull-request: $*" >&2; exit 1; }

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

export GIT_AUTHOR_NAME="github-actions[bot]" GIT_COMMITTER_NAME="github-actions[bot]"
export GIT_AUTHOR_EMAIL="41898282+github-actions[bot]@users.noreply.github.com"
export GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
GIT_AUTHOR_DATE=$(git show -s --format=%cI "$base")
export GIT_AUTHOR_DATE GIT_COMMITTER_DATE="$GIT_AUTHOR_DATE"

# git gets the token from GH_TOKEN through a credential helper that reads
# it when asked: it is never stored in .git/config nor put on a command line.
# shellcheck disable=SC2016 # expanded by the helper's shell, not here
helper='!f() { test "$1" = get && echo username=x-access-token && echo "password=${GH_TOKEN:?}"; }; f'
push() { git -c credential.helper= -c "credential.helper=$helper" push -q "$@"; }
gh_repo() { gh "$@" --repo "$GITHUB_REPOSITORY"; }

trap 'git checkout -q --detach "$base"' EXIT
git checkout -q --detach "$base"
cp "$dir/advisories.json" "$table"
if git diff --quiet -- "$table"; then
	die "$dir/advisories.json: the same as $table on the base; nothing to propose"
fi
git commit -q -F "$dir/commit.txt" -- "$table"
new=$(git rev-parse HEAD)

pr=$(gh_repo pr list --head "$branch" --base "$BASE_BRANCH" --state open --json number --jq '.[0].number // empty')
if [ -z "$pr" ]; then
	# Compared here, not in a jq program built from the title.
	list=$(gh_repo pr list --head "$branch" --base "$BASE_BRANCH" --state closed --json number,title --jq '.[] | [.number, .title] | @tsv')
	while IFS=$'\t' read -r number t; do
		if [ "$t" = "$title" ]; then
			echo "pull request #$number with this title was closed; not reopening ($title)"
			exit 0
		fi
	done <<<"$list"
fi

old=$(git ls-remote origin "refs/heads/$branch" | cut -f1)
changed=false
if [ "$new" != "$old" ]; then
	push --force origin "$new:refs/heads/$branch"
	changed=true
fi
if [ -n "$pr" ]; then
	if $changed; then
		gh_repo pr edit "$pr" --title "$title" --body-file "$dir/body.md" >/dev/null
		echo "updated pull request #$pr: $title"
	else
		echo "pull request #$pr is up to date: $title"
	fi
else
	url=$(gh_repo pr create --base "$BASE_BRANCH" --head "$branch" --title "$title" --body-file "$dir/body.md")
	echo "opened $url: $title"
fi
