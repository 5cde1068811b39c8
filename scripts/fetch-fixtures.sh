#!/bin/sh
# Obtain the real OpenSSL release tarballs and their upstream signatures from
# Debian source packages (the only route to them on machines without general
# internet), verify their pinned sha256 and size, and place them where the
# tests look: $OSSLBUILD_FIXTURES (default: <repo>/.fixtures/releases).
#
# Debian's openssl_X.orig.tar.gz is byte-identical to upstream's
# openssl-X.tar.gz; openssl_X.orig.tar.gz.asc is upstream's detached signature.
# The Debian packaging tarball is kept too: its debian/upstream/signing-key.asc
# is where keys/ came from.
#
# Only upstream's sha256 and size are pinned, never a Debian revision: Debian
# replaces superseded revisions (3.5.7-1~deb13u2 by ~deb13u3, ...), so any
# source package apt's index lists whose Checksums-Sha256 names an
# .orig.tar.gz with the pinned digest and size (and its .asc) will do; they are
# tried newest revision first. apt-get update runs when this script adds the
# deb-src entries, when apt has no source index for openssl, and once when no
# listed revision matches or downloads (the index is stale).
#
#   fetch-fixtures.sh                   fetch what is missing (default)
#   fetch-fixtures.sh --candidates      print "upstream debian-version orig-file"
#                                       for each pin from apt's current index
#   fetch-fixtures.sh --select SHA SIZE read `apt-cache showsrc` records on
#                                       stdin, print the matching ones
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
dest=${OSSLBUILD_FIXTURES:-$repo/.fixtures/releases}
me=fetch-fixtures

# upstream  sha256  size (as in recipes/openssl.toml and internal/testsupport/testfixture)
pins='
4.0.2 736b467530f916737b7031310ccb21d8218c6229e61e8e160cd1d3458cd543a8 55153883
3.5.7 a8c0d28a529ca480f9f36cf5792e2cd21984552a3c8e4aa11a24aa31aeac98e8 53153930
3.0.20 c80a01dfc70ece4dc21168932c37739042d404d46ccc81a5986dd75314ecda6f 15292815
'

# Debian suites whose source indices carry the pinned releases (4.x is in
# experimental), added to the machine's own suites.
archive_suites='bookworm trixie sid experimental'
security_suites='bookworm-security trixie-security'
src_list=/etc/apt/sources.list.d/osslbuild-src.sources

die() {
	echo "$me: $*" >&2
	exit 1
}

have() {
	# have FILE SHA256 SIZE: the file exists with exactly that digest and size.
	[ -f "$1" ] || return 1
	[ "$(wc -c <"$1" | tr -d ' ')" = "$3" ] || return 1
	[ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

select_versions() {
	# select_versions SHA256 SIZE: read `apt-cache showsrc` records on stdin and
	# print "debian-version orig-file" for every record whose Checksums-Sha256
	# lists an .orig.tar.gz with exactly that digest and size, and its .asc;
	# once per version, newest first.
	awk -v sum="$1" -v size="$2" '
	function flush(   i) {
		if (ver != "" && orig != "" && (orig ".asc") in files)
			print ver, orig
		ver = ""; orig = ""; ck = 0
		for (i in files) delete files[i]
	}
	/^[ \t]*$/ { flush(); next }
	/^[^ \t]/ { ck = ($0 ~ /^Checksums-Sha256:/) }
	/^Version:/ { ver = $2 }
	ck && /^[ \t]/ {
		files[$3] = 1
		if ($1 == sum && $2 == size && $3 ~ /\.orig\.tar\.gz$/)
			orig = $3
	}
	END { flush() }' | sort -u | sort -rV -k1,1
}

showsrc() {
	apt-cache showsrc openssl 2>/dev/null || true
}

candidates() {
	index=$(showsrc)
	[ -n "$index" ] || die "apt has no source index for openssl (run this script without options to add deb-src entries and apt-get update)"
	status=0
	while read -r v sum size; do
		[ -n "$v" ] || continue
		found=$(printf '%s\n' "$index" | select_versions "$sum" "$size")
		if [ -z "$found" ]; then
			echo "$v -"
			status=1
		else
			printf '%s\n' "$found" | sed "s/^/$v /"
		fi
	done <<EOF
$pins
EOF
	return $status
}

case ${1:-} in
--select)
	[ $# = 3 ] || die "usage: $0 --select SHA256 SIZE <apt-cache-showsrc-output"
	select_versions "$2" "$3"
	exit 0
	;;
--candidates)
	candidates
	exit $?
	;;
'') ;;
*) die "unknown option $1 (want --candidates or --select SHA256 SIZE)" ;;
esac

missing=
while read -r v sum size; do
	[ -n "$v" ] || continue
	if ! have "$dest/openssl-$v.tar.gz" "$sum" "$size" || [ ! -s "$dest/openssl-$v.tar.gz.asc" ]; then
		missing="$missing $v"
	fi
done <<EOF
$pins
EOF
if [ -z "$missing" ]; then
	echo "$me: OpenSSL release fixtures verified in $dest" >&2
	exit 0
fi

if ! command -v apt-cache >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
	die "missing:$missing; apt-get not found: this script takes them from Debian's source packages. Elsewhere, put openssl-X.tar.gz and openssl-X.tar.gz.asc (upstream, see recipes/openssl.toml) in $dest"
fi

sudo=
# As root, apt-get source would try to drop to user _apt, which cannot write
# here, and fall back with a warning: say so up front instead.
sandbox=
if [ "$(id -u)" = 0 ]; then
	sandbox='-oAPT::Sandbox::User=root'
elif command -v sudo >/dev/null 2>&1; then
	sudo=sudo
fi
as_root() {
	if [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; then
		$sudo "$@"
	else
		die "need root for '$*' (not root, no sudo): run it as root, then this script again"
	fi
}

# The awk function union(list, add): the words of list, then those of add
# that it lacks; both of derive_sources' awk programs start with it.
awk_union='
function union(list, add,   a, n, i, seen, out) {
	n = split(list " " add, a, " ")
	out = ""
	for (i = 1; i <= n; i++)
		if (!(a[i] in seen)) { seen[a[i]] = 1; out = out (out == "" ? "" : " ") a[i] }
	return out
}'

derive_sources() {
	# Derive deb-src entries from the binary ones apt already has, so no mirror
	# host is written here: deb822 stanzas of debian.sources (Debian 12 and
	# later), or the Debian lines of a one-line sources.list; the suites that
	# carry the pinned releases are added to each.
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		awk -v main="$archive_suites" -v sec="$security_suites" "$awk_union"'
		function flush(   i, s) {
			if (n && deb && !off) {
				if (printed) print ""
				for (i = 1; i <= n; i++) {
					if (buf[i] ~ /^Types:/) {
						print "Types: deb-src"
					} else if (buf[i] ~ /^Suites:/) {
						s = buf[i]; sub(/^Suites:[ \t]*/, "", s)
						print "Suites: " union(s, s ~ /-security/ ? sec : main)
					} else print buf[i]
				}
				printed = 1
			}
			n = 0; deb = 0; off = 0
		}
		/^[ \t]*$/ { flush(); next }
		{ buf[++n] = $0 }
		/^Types:/ { deb = ($0 ~ /[ \t]deb([ \t]|$)/) }
		/^Enabled:[ \t]*[Nn]o/ { off = 1 }
		END { flush() }' /etc/apt/sources.list.d/debian.sources
	elif [ -f /etc/apt/sources.list ]; then
		awk -v main="$archive_suites" -v sec="$security_suites" "$awk_union"'
		$1 == "deb" {
			i = 2; key = ""
			if ($2 ~ /^\[/) {
				for (; i <= NF; i++) {
					if ($i ~ /signed-by=/) { key = $i; sub(/.*signed-by=/, "", key); sub(/\]$/, "", key) }
					if ($i ~ /\]$/) { i++; break }
				}
			}
			uri = $i; suite = $(i + 1); c = ""
			for (j = i + 2; j <= NF && $j !~ /^#/; j++) c = union(c, $j)
			# Debian archives and mirrors, not third-party repositories
			# that merely have "debian" in their path (they lack "main").
			if (uri !~ /debian/ || (" " c " ") !~ / main /) next
			if (!(uri in suites)) order[++n] = uri
			suites[uri] = union(suites[uri], suite)
			comps[uri] = union(comps[uri], c)
			if (key != "") keys[uri] = key
		}
		END {
			for (k = 1; k <= n; k++) {
				uri = order[k]
				if (k > 1) print ""
				print "Types: deb-src"
				print "URIs: " uri
				print "Suites: " union(suites[uri], suites[uri] ~ /-security/ ? sec : main)
				print "Components: " comps[uri]
				if (uri in keys) print "Signed-By: " keys[uri]
			}
		}' /etc/apt/sources.list
	fi
}

updated=0
apt_update() {
	echo "$me: apt-get update" >&2
	# One unreachable suite should not stop a fetch the others can serve;
	# what is still missing is reported per release below.
	as_root apt-get update -qq || echo "$me: apt-get update reported errors (above); going on with the index apt has" >&2
	updated=1
}

ensure_sources() {
	want=$(derive_sources)
	if [ -z "$want" ]; then
		[ -n "$(showsrc)" ] && return 0
		die "no Debian entries in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list to derive deb-src entries from; add deb-src entries for Debian's suites ($archive_suites $security_suites), or put the fixtures in $dest"
	fi
	if [ -f "$src_list" ] && [ "$(cat "$src_list")" = "$want" ]; then
		[ -n "$(showsrc)" ] || apt_update
		return 0
	fi
	echo "$me: writing $src_list (deb-src entries derived from apt's binary entries)" >&2
	tmp=$(mktemp)
	printf '%s\n' "$want" >"$tmp"
	chmod 0644 "$tmp"
	# Copy next to the target, then rename: apt never sees half a file.
	as_root cp "$tmp" "$src_list.new"
	rm -f "$tmp"
	as_root mv "$src_list.new" "$src_list"
	apt_update
}

fetch() {
	# fetch UPSTREAM SHA256 SIZE: try every listed Debian revision whose orig
	# tarball is the pinned one, newest first; 0 when one was installed in $dest.
	cands=$(showsrc | select_versions "$2" "$3")
	if [ -z "$cands" ]; then
		echo "$me: openssl-$1: no source package in apt's index has an .orig.tar.gz with sha256 $2 and $3 bytes" >&2
		return 1
	fi
	# One directory per release: revisions share the orig tarball, and apt-get
	# source skips files already there with the right digest.
	dir="$work/$1"
	mkdir -p "$dir"
	while read -r dv orig; do
		echo "$me: openssl-$1: apt-get source openssl=$dv (its $orig has the pinned sha256)" >&2
		if ! (cd "$dir" && apt-get source -qq $sandbox --download-only "openssl=$dv" >&2); then
			echo "$me: openssl-$1: openssl=$dv listed but not downloadable; trying the next" >&2
			continue
		fi
		if ! have "$dir/$orig" "$2" "$3"; then
			echo "$me: $dir/$orig: want sha256 $2 and $3 bytes, got $(sha256sum "$dir/$orig" | cut -d' ' -f1) and $(wc -c <"$dir/$orig" | tr -d ' ') bytes; trying the next" >&2
			continue
		fi
		[ -s "$dir/$orig.asc" ] || { echo "$me: $dir/$orig.asc missing or empty; trying the next" >&2; continue; }
		for d in "$dir"/openssl_"$dv".debian.tar.*; do
			[ -f "$d" ] && mv "$d" "$dest/"
		done
		mv "$dir/$orig.asc" "$dest/openssl-$1.tar.gz.asc"
		mv "$dir/$orig" "$dest/openssl-$1.tar.gz"
		echo "$me: openssl-$1: from openssl=$dv" >&2
		return 0
	done <<EOF
$cands
EOF
	return 1
}

served() {
	# What apt's index lists, for the error message.
	showsrc | awk '/^Version:/ { v = $2 } /^Checksums-Sha256:/ { ck = 1; next } /^[^ \t]/ { ck = 0 }
		ck && $3 ~ /\.orig\.tar\.gz$/ { print "  " v ": " $3 " sha256 " $1 " " $2 " bytes" }' | sort -u
}

mkdir -p "$dest"
ensure_sources
work=$(mktemp -d "$dest/.apt.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 1' HUP INT TERM
for v in $missing; do
	line=$(printf '%s\n' "$pins" | awk -v v="$v" '$1 == v')
	# shellcheck disable=SC2086 # "upstream sha256 size", split on purpose
	set -- $line
	fetch "$1" "$2" "$3" && continue
	if [ "$updated" = 0 ]; then
		echo "$me: openssl-$v: apt's index may be stale" >&2
		apt_update
		fetch "$1" "$2" "$3" && continue
	fi
	die "openssl-$v (sha256 $2, $3 bytes): no Debian source package that apt lists and the mirror serves has this tarball. Listed:
$(served)
If Debian no longer serves this release, move the pin (this script, internal/testsupport/testfixture, recipes/openssl.toml) to one it serves, or put openssl-$v.tar.gz and its .asc in $dest."
done
echo "$me: OpenSSL release fixtures verified in $dest" >&2
