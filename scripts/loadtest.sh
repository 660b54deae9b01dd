#!/usr/bin/env bash
# Load test of dmar serve on loopback, bounded in time: builds dmar, serves
# DATA (default ../shared/data/codexm-film; codexm once its index is built),
# runs the concurrency levels with `dmar bench load` and stops the server.
#   scripts/loadtest.sh [OUT_DIR]   (env: DATA, LEVELS=1,2,4,8,16,32, DURATION=15s,
#                                    QUESTIONS=JSONL with a question field, PORT=a free one,
#                                    OPTIONS=extra JSON members of each request, e.g. '"k":5,"method":"paper"')
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/dmar-loadtest}
data=${DATA:-../shared/data/codexm-film}
port=${PORT:-$(bash -c ". scripts/services/lib.sh && free_port_block 1")}
mkdir -p bin "$out"
go build -o bin/dmar ./cmd/dmar
bin/dmar serve --data "$data" --addr "127.0.0.1:$port" --log-level warn >"$out/serve.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
	curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
	kill -0 "$pid" 2>/dev/null || { cat "$out/serve.log" >&2; exit 1; }
	sleep 1
done
echo "load test: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), data $data" | tee "$out/env.txt"
args=(--addr "127.0.0.1:$port" --pid "$pid" --levels "${LEVELS:-1,2,4,8,16,32}" --duration "${DURATION:-15s}" --out "$out")
[ -n "${QUESTIONS:-}" ] && args+=(--questions "$QUESTIONS")
[ -n "${OPTIONS:-}" ] && args+=(--options "$OPTIONS")
bin/dmar bench load "${args[@]}" | tee "$out/table.txt"
