#!/usr/bin/env bash
# Benchmark: the Siamese GNN run by ONNX Runtime beside the naive pure-Go
# float64 reference (internal/scoring/gnnref), on 256 distinct real 64-node
# codexm subgraphs at batch 1, 64 and 256, in one run (BenchmarkGNN in
# internal/scoring/onnx), printed as a table of subgraphs/s with the ratios
# ORT/reference for the model alone (forward, inputs featurised beforehand)
# and end to end (graphfeat featurisation included on both sides).
#   scripts/bench/gnn.sh [go test flags, e.g. -count 3 -benchtime 2s]
# With -count above 1 the table shows each line's best run (on a shared,
# busy machine the fastest run is the least disturbed one).
# Env: DMAR_ORT_THREADS (ORT intra-op threads; unset = ORT's choice), and
# what the onnx tests need (DMAR_ORT_LIB or scripts/setup.sh run once).
set -euo pipefail
cd "$(dirname "$0")/../.."
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "GNN speed, DMAR_ORT_THREADS=${DMAR_ORT_THREADS:-unset = ORT default}, $(nproc) CPUs, load average before: $(load)"
out=$(go test -run '^$' -bench '^BenchmarkGNN$' "$@" ./internal/scoring/onnx/)
if ! grep -q '^BenchmarkGNN/' <<<"$out"; then
	echo "$out" >&2
	echo "gnn.sh: no benchmark lines (skipped? missing ONNX Runtime or data?)" >&2
	exit 1
fi
awk -v after="$(load)" '
/^BenchmarkGNN\/batch=/ {
	split($1, p, "/"); sub(/^batch=/, "", p[2]); sub(/-[0-9]+$/, "", p[4])
	for (i = 2; i <= NF; i++) if ($i == "subgraphs/s" && $(i-1) > rate[p[2], p[3], p[4]]) rate[p[2], p[3], p[4]] = $(i-1)
	if (!(p[2] in seen)) { seen[p[2]] = 1; order[++nb] = p[2] }
}
END {
	printf "| batch | forward ORT | forward reference | forward ratio | end-to-end ORT | end-to-end reference | end-to-end ratio |\n"
	printf "|---|---|---|---|---|---|---|\n"
	for (k = 1; k <= nb; k++) {
		b = order[k]
		fo = rate[b, "forward", "ort"]; fr = rate[b, "forward", "reference"]
		eo = rate[b, "end-to-end", "ort"]; er = rate[b, "end-to-end", "reference"]
		printf "| %s | %.0f | %.0f | %.1fx | %.0f | %.0f | %.1fx |\n", b, fo, fr, (fr > 0 ? fo / fr : 0), eo, er, (er > 0 ? eo / er : 0)
	}
	printf "(subgraphs/s; load average after: %s)\n", after
}' <<<"$out"
