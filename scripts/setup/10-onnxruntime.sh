#!/usr/bin/env bash
# Installs the ONNX Runtime shared library (1.30.0) into the cache from the npm
# package onnxruntime-node, which ships the CPU build for linux/x64. Only
# libonnxruntime.so.1 is kept. Idempotent: does nothing when it is present.
set -euo pipefail
version=1.30.0
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
dest=$cache/onnxruntime
lib=$dest/libonnxruntime.so.1
if [ -s "$lib" ]; then
	echo "onnxruntime: $lib already present" >&2
	exit 0
fi
command -v npm >/dev/null || { echo "onnxruntime: npm is needed to fetch onnxruntime-node@$version" >&2; exit 1; }
mkdir -p "$cache/npm" "$dest"
tgz=$cache/npm/onnxruntime-node-$version.tgz
if [ ! -s "$tgz" ]; then
	tmp=$(mktemp -d "$cache/npm/pack.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && npm pack --silent "onnxruntime-node@$version" >/dev/null)
	mv "$tmp/onnxruntime-node-$version.tgz" "$tgz"
fi
tar -xzf "$tgz" -C "$dest" --strip-components=5 package/bin/napi-v6/linux/x64/libonnxruntime.so.1
[ -s "$lib" ] || { echo "onnxruntime: $lib missing after extracting $tgz" >&2; exit 1; }
echo "onnxruntime: installed $lib (ORT $version)" >&2
