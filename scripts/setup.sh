#!/bin/sh
# Prepare a Debian or Ubuntu machine (no Mac) for osslbuild: the cross
# toolchain and macOS headers (setup-cross.sh), the OpenSSL release
# tarballs and signatures from Debian's source packages (fetch-fixtures.sh,
# also the offline mirror for builds here), and the real-world binaries
# check's tests audit (fetch-realworld.sh). Each step only checks when what
# it provides is already there.
#
#   setup.sh          all three (what the tests need)
#   setup.sh --build  the toolchain and the release tarballs only (a build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
"$here/setup-cross.sh"
"$here/fetch-fixtures.sh"
case "${1:-}" in
--build) ;;
"") "$here/fetch-realworld.sh" ;;
*)
	echo "setup.sh: unknown argument $1 (want --build or nothing)" >&2
	exit 2
	;;
esac
