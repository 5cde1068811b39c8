#!/bin/sh
# cache-hit-ab.sh: a cache hit of one mage target, timed as a whole process
# with /usr/bin/time, for two revisions side by side in alternating rounds.
#
# Usage: bench/cache-hit-ab.sh BASE [TARGET] [ROUNDS]
#   BASE    the revision to compare with (a commit, tag or branch)
#   TARGET  the mage target (default build:universal2)
#   ROUNDS  alternating rounds, one hit of each side per round (default 5)
#
# Each side is the compiled magefile (go tool mage -compile) of its own
# checkout: BASE in a temporary git worktree, "this" the working tree. Each
# gets an artifact cache, work and output directory of its own, filled by
# one build first, then the timed runs are hits: a slice or both slices and
# the merge copied, verified, validated from their bytes, their tarballs
# checked, published into an -out that holds the previous run's artifacts
# (so a hit also replaces them, as a user's second build does).
#
# The releases come from OSSLBUILD_MIRROR (default .fixtures/releases,
# scripts/setup.sh), offline. The fill is a full build unless
# OSSLBUILD_MAKE_CACHE names a make cache that holds the plan (the test
# fixtures' does: ~/.cache/osslbuild/test-fixtures/make), then seconds.
# Prints one line per run and, last, the medians. No test asserts a timing.
set -eu
BASE=${1:?usage: bench/cache-hit-ab.sh BASE [TARGET] [ROUNDS]}
TARGET=${2:-build:universal2}
ROUNDS=${3:-5}
[ -x /usr/bin/time ] || { echo "cache-hit-ab: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
ROOT=$(pwd)
WORK=$(mktemp -d)
trap 'git -C "$ROOT" worktree remove --force "$WORK/base" 2>/dev/null; rm -rf "$WORK"' EXIT INT TERM
git worktree add --detach "$WORK/base" "$BASE" >/dev/null 2>&1
(cd "$WORK/base" && go tool mage -compile "$WORK/bin-base")
go tool mage -compile "$WORK/bin-this"
export OSSLBUILD_MIRROR="${OSSLBUILD_MIRROR:-$ROOT/.fixtures/releases}" OSSLBUILD_OFFLINE=1

side() { # name checkout
	(
		export OSSLBUILD_CACHE="$WORK/cache-$1" OSSLBUILD_WORK="$WORK/work-$1"
		cd "$2"
		/usr/bin/time -f "%e %U %S" -o "$WORK/time" "$WORK/bin-$1" "$TARGET" -out="$WORK/out-$1" >"$WORK/log-$1" 2>&1 ||
			{ cat "$WORK/log-$1" >&2; exit 1; }
		hits=$(grep -c 'cache hit' "$WORK/log-$1" || true)
		read -r wall user sys <"$WORK/time"
		echo "$1 $TARGET wall ${wall}s user ${user}s sys ${sys}s cache hits $hits"
	)
}
side base "$WORK/base" >/dev/null
side this "$ROOT" >/dev/null
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	if [ $((i % 2)) -eq 0 ]; then
		side base "$WORK/base"
		side this "$ROOT"
	else
		side this "$ROOT"
		side base "$WORK/base"
	fi
	i=$((i + 1))
done | tee "$WORK/runs"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for s in base this; do
	grep "^$s " "$WORK/runs" | awk '{sub("s","",$4); print $4}' | sort -n |
		awk -v s="$s" -v b="$BASE" '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%s (%s): median wall %.2fs, min %.2fs, max %.2fs over %d hits\n", s, (s=="base"?b:"working tree"), m, v[1], v[NR], NR}'
done
