#!/usr/bin/env bash
# Runs golangci-lint, pinned, with the checked-in .golangci.yml. The binary is
# installed from the Go module proxy into $DMAR_CACHE/bin once (a few
# minutes); a run after that takes about a minute on a warm build cache.
# Arguments go to `golangci-lint run` (default ./...).
set -euo pipefail
cd "$(dirname "$0")/.."
version=v2.15.0
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
bin=$cache/bin/golangci-lint
if ! [ -x "$bin" ] || ! "$bin" version 2>/dev/null | grep -q "version ${version#v} "; then
	echo "lint: installing golangci-lint $version into $cache/bin" >&2
	mkdir -p "$cache/bin"
	GOBIN=$cache/bin go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version"
fi
if [ $# -eq 0 ]; then set -- ./...; fi
"$bin" run "$@"
