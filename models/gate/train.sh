#!/usr/bin/env bash
# Retrains the gate from scratch, reproducibly (seeded). Run from the
# repository root:  bash models/gate/train.sh
# Needs Go, python3 (with venv) and the codexm index in the state cache
# (dmar load corpus --data ../shared/data/codexm builds it once); installs
# numpy, onnx and onnxruntime into ${DMAR_CACHE:-$HOME/.cache/dmar}/pyenv.
# SEED and WORK may be set. kgqa/dev is exported for the report only.
set -euo pipefail
cache="${DMAR_CACHE:-$HOME/.cache/dmar}"
seed="${SEED:-1}"
work="${WORK:-$cache/gate-train}"
data="${DMAR_DATA_ROOT:-../shared/data}"
py="$cache/pyenv/bin/python"
if ! "$py" -c 'import numpy, onnx, onnxruntime' 2>/dev/null; then
	python3 -m venv "$cache/pyenv"
	"$cache/pyenv/bin/pip" install -q numpy==2.4.6 onnx==1.23.2 onnxruntime==1.32.0
fi
mkdir -p "$work"
go build -o "$work/dmar" ./cmd/dmar
# 1. Features: the pipeline's phases 1-2 (default options, the GNN, no gate)
#    for every question; --gate '' so the exported z-scores never depend on
#    a previous gate.
for split in train dev; do
	"$work/dmar" gate features --data "$data/codexm" --gate '' \
		--questions "$data/kgqa/$split.jsonl" --out "$work/$split"
done
# 2. Gradient check, training, ONNX export and the dev report.
"$py" models/gate/train.py --train "$work/train" --gradcheck --seed "$seed"
"$py" models/gate/train.py --train "$work/train" --eval "$work/dev" --seed "$seed" \
	--out models/gate/gate.onnx --metrics models/gate/metrics.json
# 3. ONNX Runtime outputs on fixed inputs, for the Go reference test.
"$py" models/gate/check_onnx.py --model models/gate/gate.onnx --out internal/scoring/onnx/testdata/gate_ort.json
go test ./internal/scoring/onnx/ -run Gate
