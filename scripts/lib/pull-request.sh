# shellcheck shell=bash
# Opening or updating a pull request from a branch a bot owns: one commit
# on the base, rewritten when the base or the proposal changes. Sourced by
# scripts/advisory-pull-request.sh and scripts/bump-pull-requests.sh, which
# run git and gh only, in the one job holding a token that can write.
#
# The caller defines die and sets GITHUB_REPOSITORY, BASE_BRANCH and
# GH_TOKEN. The commit's author, committer and dates are fixed (the dates
# are the base commit's), so an unchanged proposal on an unchanged base is
# the same commit and nothing is pushed or edited. A pull request of the
# same title that was closed without merging is not reopened.

# pr_identity BASE: the bot's fixed name and the base commit's dates.
pr_identity() {
	export GIT_AUTHOR_NAME="github-actions[bot]" GIT_COMMITTER_NAME="github-actions[bot]"
	export GIT_AUTHOR_EMAIL="41898282+github-actions[bot]@users.noreply.github.com"
	export GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
	GIT_AUTHOR_DATE=$(git show -s --format=%cI "$1")
	export GIT_AUTHOR_DATE GIT_COMMITTER_DATE="$GIT_AUTHOR_DATE"
}

# git gets the token from GH_TOKEN through a credential helper that reads
# it when asked: it is never stored in .git/config nor put on a command line.
# shellcheck disable=SC2016 # expanded by the helper's shell, not here
pr_helper='!f() { test "$1" = get && echo username=x-access-token && echo "password=${GH_TOKEN:?}"; }; f'
push() { git -c credential.helper= -c "credential.helper=$pr_helper" push -q "$@"; }
gh_repo() { gh "$@" --repo "$GITHUB_REPOSITORY"; }

# pr_commit BASE FILE PROPOSED MESSAGE: on BASE (detached), FILE replaced
# by PROPOSED and committed with the message in the file MESSAGE; the
# commit is pr_new. A proposal that changes nothing is refused.
pr_commit() {
	local base=$1 file=$2 proposed=$3 message=$4
	git checkout -q --detach "$base"
	cp "$proposed" "$file"
	if git diff --quiet -- "$file"; then
		die "$proposed: the same as $file on the base; nothing to propose"
	fi
	git commit -q -F "$message" -- "$file"
	pr_new=$(git rev-parse HEAD)
}

# pr_open_or_update BRANCH TITLE BODY SAY CLOSED: pr_new pushed to BRANCH
# (only when it moved) and its pull request to BASE_BRANCH opened, or
# edited to TITLE and the file BODY when the branch moved. Each line it
# prints starts with SAY; CLOSED says which closed pull request is not
# reopened ("with this title"). pr_state is closed, opened, updated or
# current (nothing pushed or edited).
pr_open_or_update() {
	local branch=$1 title=$2 body=$3 say=$4 closed=$5
	local pr list number t old url
	pr=$(gh_repo pr list --head "$branch" --base "$BASE_BRANCH" --state open --json number --jq '.[0].number // empty')
	if [ -z "$pr" ]; then
		# Compared here, not in a jq program built from the title.
		list=$(gh_repo pr list --head "$branch" --base "$BASE_BRANCH" --state closed --json number,title --jq '.[] | [.number, .title] | @tsv')
		while IFS=$'\t' read -r number t; do
			if [ "$t" = "$title" ]; then
				echo "${say}pull request #$number $closed was closed; not reopening ($title)"
				pr_state=closed
				return 0
			fi
		done <<<"$list"
	fi

	old=$(git ls-remote origin "refs/heads/$branch" | cut -f1)
	pr_state=current
	if [ "$pr_new" != "$old" ]; then
		push --force origin "$pr_new:refs/heads/$branch"
		pr_state=updated
	fi
	if [ -n "$pr" ]; then
		if [ "$pr_state" = updated ]; then
			gh_repo pr edit "$pr" --title "$title" --body-file "$body" >/dev/null
			echo "${say}updated pull request #$pr: $title"
		else
			echo "${say}pull request #$pr is up to date: $title"
		fi
	else
		url=$(gh_repo pr create --base "$BASE_BRANCH" --head "$branch" --title "$title" --body-file "$body")
		echo "${say}opened $url: $title"
		pr_state=opened
	fi
}
