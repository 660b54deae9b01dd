#!/usr/bin/env bash
# One-time, idempotent setup: runs scripts/setup/*.sh in order (ONNX Runtime
# library, the sentence encoder's ONNX file, ...). Everything lands in
# $DMAR_CACHE (default ~/.cache/dmar); nothing is fetched at run time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export DMAR_CACHE=${DMAR_CACHE:-$HOME/.cache/dmar}
mkdir -p "$DMAR_CACHE"
for f in "$here"/setup/*.sh; do
	[ -e "$f" ] || continue
	echo "setup: $(basename "$f")" >&2
	bash "$f"
done
