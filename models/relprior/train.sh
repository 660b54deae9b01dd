#!/usr/bin/env bash
# Retrains the question -> relation prior from scratch (deterministic: no
# randomness). Run from the repository root:  bash models/relprior/train.sh
# Needs Go, python3 (with venv) and the codexm index in the state cache.
# Trains on kgqa/train only; kgqa/dev is exported for the report only.
set -euo pipefail
cache="${DMAR_CACHE:-$HOME/.cache/dmar}"
work="${WORK:-$cache/relprior-train}"
data="${DMAR_DATA_ROOT:-../shared/data}"
. models/pyenv.sh # sets py
mkdir -p "$work"
go build -o "$work/dmar" ./cmd/dmar
# 1. The walk's data: linked entities (context linker), reached entities and
#    the relations on their paths, enc(Q), the relation texts' vectors.
for s in train dev; do
	"$work/dmar" graph features --data "$data/codexm" --dataset "kgqa:$data/kgqa/$s.jsonl" --out "$work/kgqa-$s" --quiet
done
# 2. Fit (tau by leave-one-out on train), export, score dev for the card.
"$py" models/relprior/train.py --train "$work/kgqa-train" --eval "$work/kgqa-dev" \
	--out models/relprior/relprior.onnx --metrics models/relprior/metrics.json
go test ./internal/scoring/onnx/ -run RelPrior
