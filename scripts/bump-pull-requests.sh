#!/usr/bin/env bash
# Opens or updates one pull request per release series from the proposals
# that `go run ./internal/bump/proposals -out DIR` wrote (DIR/<series>/:
# openssl.toml, title.txt, body.md, commit.txt; and LIBRARY_DIFFS/<series>/library-diff.md
# when the library job compared the builds, appended to the body): the last job of
# .github/workflows/recipe-bump.yml, the only one holding a token that can
# write. It runs git and gh only; the downloading and verifying happened in
# the first job, without that token.
#
#   scripts/bump-pull-requests.sh DIR
#
# Run in a checkout of the base branch (HEAD is the base). Environment:
#   GITHUB_REPOSITORY  owner/repo, for gh
#   BASE_BRANCH        the branch pull requests go to (main)
#   BUILD_WORKFLOW     optional: a workflow file to dispatch on a new or
#                      changed branch (a pull request opened with the job's
#                      token starts no workflow by itself)
#   GH_TOKEN           the token for gh and for git's push
#   LIBRARY_DIFFS      optional: where the library job's <series>/library-diff.md
#                      files are (default: DIR)
#
# For series X.Y the branch is osslbuild/bump-X.Y, owned by this script: it
# is one commit on the base, rewritten when the base or the proposal
# changes. The commit's author, committer and dates are fixed (the dates are
# the base commit's), so an unchanged proposal on an unchanged base is the
# same commit and nothing is pushed, edited or rebuilt. A pull request for
# the same release that was closed without merging is not reopened.
set -euo pipefail

die() { echo "bump-pull-requests: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 PROPOSALS_DIR"
dir=$1
# The library job's sections, DIFFS/<series>/library-diff.md: only these
# files are taken from that job, which ran OpenSSL's build.
diffs=${LIBRARY_DIFFS:-$dir}
[ -d "$dir" ] || die "$dir: no such directory"
: "${GITHUB_REPOSITORY:?bump-pull-requests: GITHUB_REPOSITORY (owner/repo) is not set}"
: "${BASE_BRANCH:?bump-pull-requests: BASE_BRANCH is not set}"
recipe=recipes/openssl.toml
base=$(git rev-parse --verify 'HEAD^{commit}') || die "not in a git checkout"
[ -f "$recipe" ] || die "$recipe: not found in the checkout"
[ -z "$(git status --porcelain --untracked-files=no)" ] || die "the checkout has local changes"

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

# Every proposal is checked before anything is pushed.
series_list=()
for p in "$dir"/*; do
	[ -e "$p" ] || continue
	s=$(basename "$p")
	[[ $s =~ ^[0-9]+\.[0-9]+$ ]] || die "$p: not a proposal directory (want a series, X.Y)"
	for f in openssl.toml title.txt body.md commit.txt; do
		if [ ! -f "$p/$f" ] || [ -L "$p/$f" ]; then die "$p/$f: missing or not a regular file"; fi
	done
	l="$diffs/$s/library-diff.md"
	if [ -e "$l" ] || [ -L "$l" ]; then
		if [ ! -f "$l" ] || [ -L "$l" ]; then die "$l: not a regular file"; fi
	fi
	series_list+=("$s")
done
if [ ${#series_list[@]} -eq 0 ]; then
	echo "no proposals: nothing to do"
	exit 0
fi

trap 'git checkout -q --detach "$base"' EXIT
for s in "${series_list[@]}"; do
	p="$dir/$s"
	branch="osslbuild/bump-$s"
	title=$(head -n 1 "$p/title.txt")
	[ -n "$title" ] || die "$p/title.txt: empty"

	git checkout -q --detach "$base"
	cp "$p/openssl.toml" "$recipe"
	if git diff --quiet -- "$recipe"; then
		die "$p/openssl.toml: the same as $recipe on the base; nothing to propose"
	fi
	git commit -q -F "$p/commit.txt" -- "$recipe"
	new=$(git rev-parse HEAD)

	# The library job's comparison of the previous pin's and the proposed
	# release's artifacts, when it ran: the body's last section.
	body="$p/body.md"
	if [ -e "$diffs/$s/library-diff.md" ]; then
		body="$p/.body-and-libraries.md"
		cat "$p/body.md" "$diffs/$s/library-diff.md" >"$body"
	fi

	pr=$(gh_repo pr list --head "$branch" --base "$BASE_BRANCH" --state open --json number --jq '.[0].number // empty')
	if [ -z "$pr" ]; then
		# Compared here, not in a jq program built from the title.
		list=$(gh_repo pr list --head "$branch" --base "$BASE_BRANCH" --state closed --json number,title --jq '.[] | [.number, .title] | @tsv')
		closed=
		while IFS=$'\t' read -r number t; do
			if [ "$t" = "$title" ]; then closed=$number; fi
		done <<<"$list"
		if [ -n "$closed" ]; then
			echo "series $s: pull request #$closed for this release was closed; not reopening ($title)"
			continue
		fi
	fi

	old=$(git ls-remote origin "refs/heads/$branch" | cut -f1)
	changed=false
	if [ "$new" != "$old" ]; then
		push --force origin "$new:refs/heads/$branch"
		changed=true
	fi

	if [ -n "$pr" ]; then
		if $changed; then
			gh_repo pr edit "$pr" --title "$title" --body-file "$body" >/dev/null
			echo "series $s: updated pull request #$pr: $title"
		else
			echo "series $s: pull request #$pr is up to date: $title"
		fi
	else
		url=$(gh_repo pr create --base "$BASE_BRANCH" --head "$branch" --title "$title" --body-file "$body")
		echo "series $s: opened $url: $title"
		changed=true
	fi
	if $changed && [ -n "${BUILD_WORKFLOW:-}" ]; then
		gh_repo workflow run "$BUILD_WORKFLOW" --ref "$branch"
		echo "series $s: started $BUILD_WORKFLOW on $branch"
	fi
done
