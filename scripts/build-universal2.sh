#!/bin/sh
# The main job on a Debian or Ubuntu machine, in one command: prepare the
# machine for a build (setup.sh --build: the cross toolchain, the macOS
# headers, the OpenSSL release tarballs and signatures from Debian's source
# packages), then go tool mage build:universal2 with those tarballs as its
# mirror, so that a machine without openssl.org builds too. The mirror is
# only where the bytes come from: each tarball is still held to the
# recipe's sha256, size and OpenPGP signature. Arguments go to the target
# (-version=3.5.7, -jobs=4, ...).
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh --build
OSSLBUILD_MIRROR=${OSSLBUILD_MIRROR:-${OSSLBUILD_FIXTURES:-.fixtures/releases}} exec go tool mage build:universal2 "$@"
