#!/bin/sh
# check-verdicts.sh: check's JSON verdicts on every real-world package
# (scripts/fetch-realworld.sh), plain and -strict, one file per package
# and mode with the exit status, so that two builds of osslcheck can be
# compared with diff -r: a speed change must leave every verdict as it was.
#
# Usage: bench/check-verdicts.sh OSSLCHECK OUTDIR
#   OSSLCHECK  an osslcheck binary (go build -o X ./cmd/osslcheck)
#   OUTDIR     where the verdicts go (created; must not exist)
#
# Compare two builds:
#   git stash; go build -o /tmp/before ./cmd/osslcheck; git stash pop
#   go build -o /tmp/after ./cmd/osslcheck
#   bench/check-verdicts.sh /tmp/before /tmp/v-before
#   bench/check-verdicts.sh /tmp/after /tmp/v-after
#   diff -r /tmp/v-before /tmp/v-after && echo identical
set -eu

BIN=${1:?usage: bench/check-verdicts.sh OSSLCHECK OUTDIR}
OUT=${2:?usage: bench/check-verdicts.sh OSSLCHECK OUTDIR}
SRC=${OSSLBUILD_REALWORLD:-${XDG_CACHE_HOME:-$HOME/.cache}/osslbuild/realworld}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "check-verdicts: $BIN is not executable" >&2; exit 1; }
[ ! -e "$OUT" ] || { echo "check-verdicts: $OUT exists" >&2; exit 1; }
ls "$SRC"/*.tgz >/dev/null 2>&1 || { echo "check-verdicts: no packages in $SRC (run scripts/fetch-realworld.sh)" >&2; exit 1; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT INT TERM

for tgz in "$SRC"/*.tgz; do
	name=$(basename "$tgz" .tgz)
	mkdir -p "$WORK/$name"
	tar -xzf "$tgz" -C "$WORK/$name"
	for mode in plain strict; do
		flags=
		[ "$mode" = plain ] || flags=-strict
		# Relative paths, so that the JSON does not name this run's
		# temporary directory.
		rc=0
		(cd "$WORK/$name" && "$BIN" -format json $flags .) >"$OUT/$name.$mode.json" 2>"$OUT/$name.$mode.stderr" || rc=$?
		echo "$rc" >"$OUT/$name.$mode.exit"
	done
	rm -rf "$WORK/$name"
done
echo "check-verdicts: $(ls "$SRC"/*.tgz | wc -l) packages, plain and -strict, in $OUT"
