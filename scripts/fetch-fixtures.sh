#!/bin/sh
# Obtain the real OpenSSL release tarballs and their upstream signatures from
# Debian source packages (the only route to them on machines without general
# internet), verify their pinned sha256 and size, and place them where the
# tests look: $OSSLBUILD_FIXTURES (default: <repo>/.fixtures/releases).
#
# Debian's openssl_X.orig.tar.gz is byte-identical to upstream's
# openssl-X.tar.gz; openssl_X.orig.tar.gz.asc is upstream's detached signature.
# The Debian packaging tarballs are kept too: their debian/upstream/signing-key.asc
# is where keys/ came from.
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
dest=${OSSLBUILD_FIXTURES:-$repo/.fixtures/releases}
mkdir -p "$dest"

# upstream  debian-version  sha256  size
releases='
4.0.2 4.0.2-1 736b467530f916737b7031310ccb21d8218c6229e61e8e160cd1d3458cd543a8 55153883
3.5.7 3.5.7-1~deb13u2 a8c0d28a529ca480f9f36cf5792e2cd21984552a3c8e4aa11a24aa31aeac98e8 53153930
3.0.20 3.0.20-1~deb12u2 c80a01dfc70ece4dc21168932c37739042d404d46ccc81a5986dd75314ecda6f 15292815
'

have() {
	# have FILE SHA256 SIZE: the file exists with exactly that digest and size.
	[ -f "$1" ] || return 1
	[ "$(wc -c <"$1" | tr -d ' ')" = "$3" ] || return 1
	[ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

need_apt=0
echo "$releases" | while read -r v dv sum size; do
	[ -n "$v" ] || continue
	have "$dest/openssl-$v.tar.gz" "$sum" "$size" && [ -s "$dest/openssl-$v.tar.gz.asc" ] || exit 1
done || need_apt=1

if [ "$need_apt" = 1 ]; then
	src=/etc/apt/sources.list.d/osslbuild-src.sources
	if [ ! -f "$src" ]; then
		# Derive deb-src entries from the binary ones apt already has, so no
		# mirror host is written here; add the suites that carry newer OpenSSL (4.x lives in experimental).
		sed -e 's/^Types: deb$/Types: deb-src/' \
		    -e 's/^Suites: bookworm bookworm-updates$/Suites: bookworm bookworm-updates trixie sid experimental/' \
		    -e 's/^Suites: bookworm-security$/Suites: bookworm-security trixie-security/' \
		    /etc/apt/sources.list.d/debian.sources >"$src.tmp"
		mv "$src.tmp" "$src"
		apt-get update -qq
	fi
	work=$(mktemp -d "$dest/.apt.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	echo "$releases" | while read -r v dv sum size; do
		[ -n "$v" ] || continue
		if have "$dest/openssl-$v.tar.gz" "$sum" "$size" && [ -s "$dest/openssl-$v.tar.gz.asc" ]; then
			continue
		fi
		echo "fetch-fixtures: apt-get source openssl=$dv" >&2
		(cd "$work" && apt-get source -qq --download-only "openssl=$dv") || {
			echo "fetch-fixtures: cannot download Debian source package openssl=$dv (mirror contents change; is deb-src configured?)" >&2
			exit 1
		}
		orig="$work/openssl_$v.orig.tar.gz"
		if ! have "$orig" "$sum" "$size"; then
			echo "fetch-fixtures: $orig: want sha256 $sum and $size bytes, got $(sha256sum "$orig" | cut -d' ' -f1) and $(wc -c <"$orig") bytes" >&2
			exit 1
		fi
		[ -s "$orig.asc" ] || { echo "fetch-fixtures: $orig.asc missing from the source package" >&2; exit 1; }
		mv "$orig.asc" "$dest/openssl-$v.tar.gz.asc"
		mv "$orig" "$dest/openssl-$v.tar.gz"
		for d in "$work"/openssl_"$dv".debian.tar.*; do
			[ -f "$d" ] && mv "$d" "$dest/"
		done
	done
fi
echo "fetch-fixtures: OpenSSL release fixtures verified in $dest" >&2
