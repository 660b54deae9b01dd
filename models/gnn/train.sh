#!/usr/bin/env bash
# Retrains the Siamese GNN from scratch, reproducibly (seeded), and refreshes
# the ONNX Runtime fixture of the Go reference test. Run from the repository
# root:  bash models/gnn/train.sh
# Needs Go and python3 (with venv); installs numpy, onnx and onnxruntime into
# ${DMAR_CACHE:-$HOME/.cache/dmar}/pyenv. SEED, WORK and EPOCHS (default 4) may be set.
set -euo pipefail
cache="${DMAR_CACHE:-$HOME/.cache/dmar}"
seed="${SEED:-1}"
work="${WORK:-$cache/gnn-train}"
py="$cache/pyenv/bin/python"
if ! "$py" -c 'import numpy, onnx, onnxruntime' 2>/dev/null; then
	python3 -m venv "$cache/pyenv"
	"$cache/pyenv/bin/pip" install -q numpy==2.4.6 onnx==1.23.2 onnxruntime==1.32.0
fi
# One BLAS thread: on a shared, busy machine numpy's threaded BLAS made an
# epoch 10-50x slower (spinning threads) than one thread does.
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
rm -rf "$work" && mkdir -p "$work"
# 1. Triplets from the codexm KG, featurised by internal/scoring/graphfeat.
go run ./models/gnn/traindata -out "$work/data" -seed "$seed"
# 2. numpy training and ONNX export, with held-out metrics.
"$py" models/gnn/train.py --data "$work/data" --out models/gnn/gnn.onnx \
	--metrics models/gnn/metrics.json --seed "$seed" --epochs "${EPOCHS:-4}"
# 3. ONNX Runtime embeddings of the fixed test graphs, for the Go reference test.
go run ./models/gnn/traindata -fixture internal/scoring/gnnref/testdata/graphs.json -out "$work/fixture"
"$py" models/gnn/check_onnx.py --model models/gnn/gnn.onnx --inputs "$work/fixture" \
	--out internal/scoring/gnnref/testdata/ort_embeddings.json
go test ./internal/scoring/gnnref/
