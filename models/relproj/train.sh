#!/usr/bin/env bash
# Retrains the relation projection from scratch (deterministic: seeded draws,
# a closed-form fit). Run from the repository root:  bash models/relproj/train.sh
# Needs Go, python3 (with venv) and the encoders (scripts/setup.sh). Trains on
# kgqa/train's questions and 12,000 seeded codexm sentences; kgqa/dev is
# exported for the model card only. About ten minutes on 2 cores.
set -euo pipefail
cache="${DMAR_CACHE:-$HOME/.cache/dmar}"
work="${WORK:-$cache/relproj-train}"
data="${DMAR_DATA_ROOT:-../shared/data}"
encoder="${DMAR_ENCODER:-bge-small-en-v1.5-int8}"
target="${DMAR_RELATION_ENCODER:-all-MiniLM-L6-v2}"
. models/pyenv.sh # sets py
mkdir -p "$work"
go build -o "$work/dmar" ./cmd/dmar
# 1. Features under the encoder and the relation encoder's vectors of the
#    same texts (the projection itself off, so nothing reads an old one).
"$work/dmar" graph relproj-features --data "$data/codexm" --dataset "kgqa:$data/kgqa/train.jsonl" \
	--sentences 12000 --seed 1 --relation-projection '' --out "$work/train" --quiet
"$work/dmar" graph relproj-features --data "$data/codexm" --dataset "kgqa:$data/kgqa/dev.jsonl" \
	--sentences 0 --relation-projection '' --out "$work/dev" --quiet
# 2. Fit, export, score dev for the card.
"$py" models/relproj/train.py --train "$work/train" --eval "$work/dev" --encoder "$encoder" --target "$target" \
	--out models/relproj/relproj.onnx --metrics models/relproj/metrics.json
go test ./internal/scoring/onnx/ -run RelProjection
