#!/usr/bin/env bash
# The explorer page's parts (docs/ui.md):
# - cytoscape.js, the graph drawing library that `go build` embeds in the
#   page (internal/ui/static/vendor/cytoscape.min.js, not committed): the
#   npm package's tarball, checked against the pinned integrity, is kept in
#   the cache and its dist/cytoscape.min.js copied into the source tree.
# - under CI=true (or DMAR_INSTALL_CHROMIUM=1), Debian's chromium, which the
#   browser test (internal/ui, TestExplorerInBrowser) drives headless.
# Idempotent: does nothing when the file matches its pinned sha256 and
# chromium is present.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
version=3.35.0
integrity=sha512-sMvBIXiGMnhkCaWz2R06FwF/27MNlS+Tqvi17foO9UhnUg3XGZccKjxsvEqQFAQYMSSZmN5SxYzUYlQ0DOJJ3g==
file_sha256=71fa9ebec21a7ca2c40cff6aacc30d1f6464e363662ad4b2c197e1adc770cd94
dest=$here/internal/ui/static/vendor/cytoscape.min.js

if [ -s "$dest" ] && [ "$(sha256sum "$dest" | cut -d' ' -f1)" = "$file_sha256" ]; then
	echo "ui: $dest already present (cytoscape $version)" >&2
else
	command -v npm >/dev/null || { echo "ui: npm is needed to fetch cytoscape@$version" >&2; exit 1; }
	mkdir -p "$cache/npm"
	tgz=$cache/npm/cytoscape-$version.tgz
	if [ ! -s "$tgz" ]; then
		tmp=$(mktemp -d "$cache/npm/pack.XXXXXX")
		trap 'rm -rf "$tmp"' EXIT
		(cd "$tmp" && npm pack --silent "cytoscape@$version" >/dev/null)
		mv "$tmp/cytoscape-$version.tgz" "$tgz"
		rm -rf "$tmp"
		trap - EXIT
	fi
	got=sha512-$(python3 -c 'import base64, hashlib, sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$tgz")
	if [ "$got" != "$integrity" ]; then
		rm -f "$tgz"
		echo "ui: cytoscape-$version.tgz has integrity $got, want $integrity; removed it" >&2
		exit 1
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	tar -xzf "$tgz" -C "$tmp" package/dist/cytoscape.min.js
	[ "$(sha256sum "$tmp/package/dist/cytoscape.min.js" | cut -d' ' -f1)" = "$file_sha256" ] ||
		{ echo "ui: dist/cytoscape.min.js in $tgz is not the pinned file" >&2; exit 1; }
	mv "$tmp/package/dist/cytoscape.min.js" "$dest"
	rm -rf "$tmp"
	trap - EXIT
	echo "ui: installed $dest (cytoscape $version, MIT)" >&2
fi

if [ "${CI:-}" = true ] || [ "${DMAR_INSTALL_CHROMIUM:-}" = 1 ]; then
	if command -v chromium >/dev/null; then
		echo "ui: $(chromium --version 2>/dev/null || echo chromium) already installed" >&2
	else
		command -v apt-get >/dev/null || { echo "ui: the browser test needs Debian's chromium, and apt-get is missing" >&2; exit 1; }
		echo "ui: installing Debian's chromium for the browser test" >&2
		log=$(mktemp)
		if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >"$log" 2>&1; then
			tail -n 20 "$log" >&2
			echo "ui: apt-get install chromium failed" >&2
			exit 1
		fi
		rm -f "$log"
		command -v chromium >/dev/null || { echo "ui: chromium missing after apt-get install" >&2; exit 1; }
		echo "ui: installed $(chromium --version 2>/dev/null)" >&2
	fi
fi
