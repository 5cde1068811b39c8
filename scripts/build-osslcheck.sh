#!/bin/sh
# build-osslcheck.sh OUTDIR: builds osslcheck for the machines wheel builders
# run on (linux and macOS, amd64 and arm64) into OUTDIR, reproducibly, and
# writes OUTDIR/SHA256SUMS. The release workflow runs it; a test runs it
# twice and compares the bytes.
#
# Reproducible: no cgo, -trimpath (no path of this machine in the binary),
# an empty build ID (-buildid=, which otherwise follows the build cache),
# and the version from the module's build information (vcs.revision), as
# `go install ...@version` records it.
set -eu
out=${1:?usage: scripts/build-osslcheck.sh OUTDIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
# OSSLCHECK_TARGETS narrows the list (the reproducibility test builds one).
for target in ${OSSLCHECK_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}; do
	goos=${target%/*}
	goarch=${target#*/}
	bin="$out/osslcheck-$goos-$goarch"
	CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch GOFLAGS= \
		go build -trimpath -buildvcs=auto -ldflags=-buildid= -o "$bin.tmp" ./cmd/osslcheck
	mv "$bin.tmp" "$bin"
done
(cd "$out" && sha256sum osslcheck-* > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
cat "$out/SHA256SUMS"
