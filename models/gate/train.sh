#!/usr/bin/env bash
# Retrains the gate from scratch, reproducibly (seeded). Run from the
# repository root:  bash models/gate/train.sh
# Needs Go, python3 (with venv) and the codexm index in the state cache
# (dmar load corpus --data ../shared/data/codexm builds it once); installs
# numpy, onnx and onnxruntime into ${DMAR_CACHE:-$HOME/.cache/dmar}/pyenv.
# SEED and WORK may be set. kgqa/dev is exported for the report only.
# SETS=kgqa (default) trains on kgqa/train only; SETS=all adds the HotpotQA
# and MuSiQue supporting paragraphs (see README.md for why kgqa is default).
set -euo pipefail
cache="${DMAR_CACHE:-$HOME/.cache/dmar}"
seed="${SEED:-1}"
# The encoder whose vectors it reads, and its model's files:
kind=gate
. models/encoder-files.sh # sets enc, out, metrics
work="${WORK:-$cache/gate-train/$enc}"
data="${DMAR_DATA_ROOT:-../shared/data}"
. models/pyenv.sh # sets py
mkdir -p "$work"
go build -o "$work/dmar" ./cmd/dmar
# 1. Features: the pipeline's phases 1-2 (the paper's method: BM25 n=100,
#    the GNN, no gate) for every question; --gate '' so the exported z-scores
#    never depend on a previous gate; --method paper so that the recipe does
#    not follow the service's default method (dmar since 2026-12-02).
#    HotpotQA and MuSiQue bring their own paragraphs (the corpus files and
#    index snapshots dmar eval uses); gold = the supporting paragraphs.
for set in kgqa:kgqa/train.jsonl kgqa:kgqa/dev.jsonl hotpotqa:hotpotqa-100 musique:musique-100; do
	name="${set%%:*}-$(basename "${set#*:}" .jsonl)"
	"$work/dmar" gate features --data "$data/codexm" --gate '' --method paper \
		--dataset "${set%%:*}:$data/${set#*:}" --out "$work/$name"
done
# 2. Gradient check, training, ONNX export and the dev report.
train="$work/kgqa-train"
if [ "${SETS:-kgqa}" = all ]; then
	train="$train,$work/hotpotqa-hotpotqa-100,$work/musique-musique-100"
fi
"$py" models/gate/train.py --train "$work/kgqa-train" --gradcheck --seed "$seed" --encoder "$enc"
"$py" models/gate/train.py --train "$train" --eval "$work/kgqa-dev" --seed "$seed" --encoder "$enc" \
	--out "$out" --metrics "$metrics"
# 3. ONNX Runtime outputs on fixed inputs, for the Go reference test.
[ "$out" = models/gate/gate.onnx ] || exit 0
"$py" models/gate/check_onnx.py --model models/gate/gate.onnx --out internal/scoring/onnx/testdata/gate_ort.json
go test ./internal/scoring/onnx/ -run Gate
