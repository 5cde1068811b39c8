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
# For series X.Y the branch is osslbuild/bump-X.Y, owned by this script:
# one commit on the base, opened or updated as scripts/lib/pull-request.sh
# says; an unchanged one is not rebuilt either.
set -euo pipefail

die() { echo "bump-pull-requests: $*" >&2; exit 1; }
# shellcheck source=lib/pull-request.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/pull-request.sh"

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

pr_identity "$base"

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

	pr_commit "$base" "$recipe" "$p/openssl.toml" "$p/commit.txt"

	# The library job's comparison of the previous pin's and the proposed
	# release's artifacts, when it ran: the body's last section.
	body="$p/body.md"
	if [ -e "$diffs/$s/library-diff.md" ]; then
		body="$p/.body-and-libraries.md"
		cat "$p/body.md" "$diffs/$s/library-diff.md" >"$body"
	fi

	pr_open_or_update "$branch" "$title" "$body" "series $s: " "for this release"
	# A new or moved branch is built (closed and current ones are not).
	if [[ $pr_state == opened || $pr_state == updated ]] && [ -n "${BUILD_WORKFLOW:-}" ]; then
		gh_repo workflow run "$BUILD_WORKFLOW" --ref "$branch"
		echo "series $s: started $BUILD_WORKFLOW on $branch"
	fi
done
