#!/bin/sh
# check-speed.sh: how long `check` takes, as a whole process, against the
# one-liner that only greps the strings:
#
#   strings -a FILE | grep -E '^(compiler|platform): '
#
# side by side in one run, with hyperfine (apt-get install hyperfine).
#
# Usage: bench/check-speed.sh DIST [ROUNDS] [OUT]
#   DIST    a directory holding osslbuild's macOS artifacts, as
#           `go tool mage build:universal2` writes them: openssl-macos-arm64,
#           openssl-macos-x86-64, openssl-macos-universal2 (directories)
#   ROUNDS  alternating hyperfine rounds (default 6, 10 runs of each side)
#   OUT     the Markdown report (default bench/check-<date>.md)
#
# Two inputs:
#   - the universal2 lib/libcrypto.a;
#   - a directory of many Mach-O files: copies of the three artifact
#     directories (check verifies each against its manifest: every file's
#     sha256, every member's CPU and minos, the compiler line, flags,
#     platform and version) and every member object of the thin libcrypto.a
#     and libssl.a (llvm-ar x), against
#     find DIR -type f -exec strings -a {} + | grep -E '^(compiler|platform): '
#
# check is the compiled mage binary (`go tool mage -compile BIN`, then
# `BIN check PATH`), so the process start of the whole tool is counted.
# hyperfine runs each command in a shell and subtracts the shell's start;
# the rounds alternate which side goes first, so a change in the machine's
# load hits both. The ratio is check's median over the one-liner's median.
set -eu

DIST=${1:?usage: bench/check-speed.sh DIST [ROUNDS] [OUT]}
ROUNDS=${2:-6}
OUT=${3:-bench/check-$(date -u +%Y-%m-%d).md}
for t in hyperfine strings llvm-ar-14 python3 go; do
	command -v "$t" >/dev/null || { echo "check-speed: $t not on PATH" >&2; exit 1; }
done
for a in universal2 arm64 x86-64; do
	[ -f "$DIST/openssl-macos-$a/manifest.json" ] || { echo "check-speed: no $DIST/openssl-macos-$a/manifest.json" >&2; exit 1; }
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT INT TERM
BIN=$WORK/osslbuild
go tool mage -compile "$BIN"

LIB=$WORK/libcrypto.a
cp "$DIST/openssl-macos-universal2/lib/libcrypto.a" "$LIB"
DIR=$WORK/macho
mkdir "$DIR"
for a in universal2 arm64 x86-64; do
	cp -R "$DIST/openssl-macos-$a" "$DIR/"
done
for a in arm64 x86-64; do
	mkdir "$DIR/objects-$a"
	(cd "$DIR/objects-$a" && llvm-ar-14 x "$DIR/openssl-macos-$a/lib/libcrypto.a" && llvm-ar-14 x "$DIR/openssl-macos-$a/lib/libssl.a")
done
# The check must succeed on both inputs: a failing check is no measurement.
"$BIN" check "$LIB" >/dev/null
"$BIN" check "$DIR" -minopt=3 >/dev/null

GREP="grep -E '^(compiler|platform): '"
run() { # name round command-a command-b
	hyperfine --style none --warmup 2 --runs 10 --export-json "$WORK/$1-$2.json" "$3" "$4" >/dev/null
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
i=1
while [ "$i" -le "$ROUNDS" ]; do
	c1="$BIN check $LIB" s1="strings -a $LIB | $GREP"
	c2="$BIN check $DIR -minopt=3" s2="find $DIR -type f -exec strings -a {} + | $GREP"
	if [ $((i % 2)) -eq 1 ]; then
		run lib "$i" "$c1" "$s1"
		run dir "$i" "$c2" "$s2"
	else
		run lib "$i" "$s1" "$c1"
		run dir "$i" "$s2" "$c2"
	fi
	i=$((i + 1))
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$WORK" "$OUT" "$ROUNDS" "$LIB" "$DIR" "$load_before" "$load_after" <<'EOF'
import glob, json, os, statistics, subprocess, sys, datetime
work, out, rounds, lib, d, before, after = sys.argv[1:8]

def sizes(p):
    n = b = 0
    for root, _, files in os.walk(p):
        for f in files:
            n += 1
            b += os.lstat(os.path.join(root, f)).st_size
    return n, b

def collect(name):
    t = {"check": [], "one-liner": []}
    for f in sorted(glob.glob(os.path.join(work, name + "-*.json"))):
        for r in json.load(open(f))["results"]:
            side = "check" if " check " in r["command"] else "one-liner"
            t[side] += r["times"]
    return t

def first(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, shell=True).stdout.splitlines()[0]

n, b = sizes(d)
rows = []
for name, what in (("lib", "universal2 libcrypto.a, %.1f MB" % (os.path.getsize(lib) / 1e6)),
                   ("dir", "directory of %d files, %.0f MB" % (n, b / 1e6))):
    t = collect(name)
    mc, ms = statistics.median(t["check"]), statistics.median(t["one-liner"])
    rows.append("| %s | %.1f ms | %.1f ms | %.2f | %d + %d |" % (
        what, mc * 1e3, ms * 1e3, mc / ms, len(t["check"]), len(t["one-liner"])))

cpu = first("grep -m1 'model name' /proc/cpuinfo").split(":", 1)[1].strip()
with open(out, "w") as f:
    f.write("""# check speed: the whole tool against `strings | grep`

- Date: %s UTC
- Machine: %s, %d CPUs; load average %s before, %s after the run (other
  work was running: the ratio, measured side by side, is the point).
- Tools: %s; %s; %s.
- Command: `bench/check-speed.sh DIST %s` on osslbuild's OpenSSL 4.0.2
  macOS artifacts (DIST as `go tool mage build:universal2` writes it).
- check: the compiled mage binary, `BIN check PATH` (`-minopt=3` for the
  directory), as a whole process: start, mapping each binary once, hashing
  it (sha256) while the build-info search and the Mach-O parsing run on the
  other core, every rule, the report. In the directory it verifies the
  three artifacts against their manifests (every file's sha256, every
  member's CPU and minos, compiler line, flags, platform, version).
- One-liner: `strings -a FILE | grep -E '^(compiler|platform): '`; for the
  directory `find DIR -type f -exec strings -a {} + | grep ...`.
- Method: hyperfine, 2 warm-up runs and 10 runs of each side per round,
  %s rounds alternating which side runs first; times are wall-clock medians
  over all runs; ratio = check / one-liner (goal: at most 0.5).

| input | check | one-liner | ratio | runs |
|---|---|---|---|---|
%s
""" % (datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"), cpu, os.cpu_count(), before, after,
       first("hyperfine --version"), first("strings --version"), first("go version"), rounds, rounds, "\n".join(rows)))
print(open(out).read())
EOF
