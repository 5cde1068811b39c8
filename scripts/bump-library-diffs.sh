#!/usr/bin/env bash
# Builds, for each proposal the recipe-bump workflow's find job wrote, the
# series' previous pin and the proposed release (arm64, with this
# checkout's osslbuild: the previous from the recipe as it is, the proposed
# from the proposal's recipe) and writes `go tool mage diff` of the two as
# the proposal's library-diff.md, copied to DIFFS/<series>/: the library
# job of .github/workflows/recipe-bump.yml. A new series has nothing to
# compare with and is skipped. A series whose build or comparison fails is
# reported and the others go on; the exit status is then 1.
#
#   scripts/bump-library-diffs.sh PROPOSALS BUILT DIFFS
#
# Run in the checkout whose osslbuild the proposal was made with.
set -euo pipefail

die() { echo "bump-library-diffs: $*" >&2; exit 1; }

[ $# -eq 3 ] || die "usage: $0 PROPOSALS BUILT DIFFS"
proposals=$1 built=$2 diffs=$3
[ -d "$proposals" ] || die "$proposals: not a directory"
mkdir -p "$built" "$diffs"

status=0
for p in "$proposals"/*; do
	[ -e "$p" ] || continue
	s=$(basename "$p")
	[[ $s =~ ^[0-9]+\.[0-9]+$ ]] || die "$p: not a proposal directory (want a series, X.Y)"
	facts="$p/proposal.json"
	if [ ! -f "$facts" ] || [ -L "$facts" ]; then die "$facts: missing or not a regular file"; fi
	pinned=$(go run ./internal/bump/librarydiff -proposal "$p" -print pinned) || die "$facts: unreadable"
	version=$(go run ./internal/bump/librarydiff -proposal "$p" -print version) || die "$facts: unreadable"
	if [ -z "$pinned" ]; then
		echo "series $s: OpenSSL $version starts a new series: nothing to compare"
		continue
	fi
	out="$built/$s"
	if go tool mage build:arm64 "-version=$pinned" "-out=$out/old" &&
		go tool mage build:arm64 "-recipe=$p/openssl.toml" "-version=$version" "-out=$out/new" &&
		go run ./internal/bump/librarydiff -proposal "$p" "$out/old" "$out/new"; then
		mkdir -p "$diffs/$s"
		cp "$p/library-diff.md" "$diffs/$s/library-diff.md"
		echo "series $s: compared OpenSSL $pinned and $version"
	else
		echo "bump-library-diffs: series $s: building or comparing OpenSSL $pinned and $version failed" >&2
		status=1
	fi
done
exit "$status"
