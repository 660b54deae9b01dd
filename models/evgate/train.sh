#!/usr/bin/env bash
# Retrains the evidence-aware gate from scratch, reproducibly (seeded). Run
# from the repository root:  bash models/evgate/train.sh
# Needs Go, python3 (with venv) and the codexm index in the state cache
# (dmar load corpus --data ../shared/data/codexm builds it once); installs
# numpy, onnx and onnxruntime into ${DMAR_CACHE:-$HOME/.cache/dmar}/pyenv.
# SEED and WORK may be set. kgqa/dev is exported for the report only: it is
# never used to fit, stop or select anything; HotpotQA and MuSiQue are not
# exported at all.
set -euo pipefail
cache="${DMAR_CACHE:-$HOME/.cache/dmar}"
seed="${SEED:-1}"
# The encoder whose scores it weighs, and its model's files:
kind=evgate
. models/encoder-files.sh # sets enc, out, metrics
work="${WORK:-$cache/evgate-train/$enc}"
data="${DMAR_DATA_ROOT:-../shared/data}"
. models/pyenv.sh # sets py
mkdir -p "$work"
go build -o "$work/dmar" ./cmd/dmar
# 1. Evidence rows: dmar (the question-aware options, the paper's gate) run
#    whole on every question; every candidate of both scoring stages.
for split in train dev; do
	"$work/dmar" gate evidence --data "$data/codexm" --dataset "kgqa:$data/kgqa/$split.jsonl" --out "$work/kgqa-$split"
done
# 2. Gradient check, training (model shape and early stopping on held-out
#    TRAIN questions), ONNX export and the dev report.
"$py" models/evgate/train.py --train "$work/kgqa-train" --gradcheck --seed "$seed" --encoder "$enc"
"$py" models/evgate/train.py --train "$work/kgqa-train" --eval "$work/kgqa-dev" --seed "$seed" --encoder "$enc" \
	--out "$out" --metrics "$metrics"
# 3. ONNX Runtime outputs on fixed rows, for the Go reference test.
[ "$out" = models/evgate/evgate.onnx ] || exit 0
"$py" models/evgate/check_onnx.py --model models/evgate/evgate.onnx --out internal/scoring/onnx/testdata/evgate_ort.json \
	--other internal/scoring/onnx/testdata/evgate_otherfeatures.onnx
go test ./internal/scoring/onnx/ -run EvidenceGate
