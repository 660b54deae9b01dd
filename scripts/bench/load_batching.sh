#!/usr/bin/env bash
# Throughput before and after, side by side in one run (the machine's load
# moves between runs, so only ratios inside one run mean much): serves DATA
# on loopback once per configuration, runs `dmar bench load` against it and
# stops it. A configuration is BUILD:WINDOW[:THREADS[:CALLS[:spin]]]: BUILD
# is "new" (this checkout) or "base" (git revision BASE, default main);
# WINDOW the server.encoder_batch_window (0: off; "-": the build's default);
# THREADS ONNX Runtime's intra-op threads (empty: its choice); CALLS the
# server.encoder_calls (new only); spin sets ort.spin (new only; base
# builds before it always spin). With PROFILE=1 the first configuration is
# also profiled under CONCURRENCY clients (CPU, mutex and block profiles:
# OUT/pprof-*.pb.gz; read them with go tool pprof -top bin/dmar FILE).
#   scripts/bench/load_batching.sh [OUT]  (env: DATA=../shared/data/codexm,
#     RUNS="base:0 new:0 new:2ms", LEVELS=1,2,4,8,16,32, DURATION=10s, PORT=a free one; pprof on PORT+1)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/dmar-load-batching}
data=${DATA:-../shared/data/codexm}
port=${PORT:-$(bash -c ". scripts/services/lib.sh && free_port_block 2")}
pport=$((port + 1))
mkdir -p bin "$out"
go build -o bin/dmar ./cmd/dmar
case " ${RUNS:-base:0 new:0 new:2ms} " in *" base:"*)
	src=$(mktemp -d)
	git archive "${BASE:-main}" | tar -x -C "$src"
	(cd "$src" && go build -o "$OLDPWD/bin/dmar-base" ./cmd/dmar)
	rm -rf "$src" ;;
esac
pid=
stop() { [ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }; pid=; }
trap stop EXIT
first=1
i=0
for run in ${RUNS:-base:0 new:0 new:2ms}; do
	IFS=: read -r build window threads calls spin <<<"$run"
	bin=bin/dmar
	args=(--data "$data" --addr "127.0.0.1:$port" --log-level warn --pprof --pprof-addr "127.0.0.1:$pport")
	[ "$build" = base ] && bin=bin/dmar-base
	[ "$window" != - ] && args+=(--encoder-batch-window "$window")
	[ -n "$threads" ] && args+=(--threads "$threads")
	[ -n "$calls" ] && args+=(--encoder-calls "$calls")
	[ "$spin" = spin ] && args+=(--ort-spin)
	i=$((i + 1))
	name=$i-${run//:/-} # a configuration may run twice
	"$bin" serve "${args[@]}" >"$out/serve-$name.log" 2>&1 &
	pid=$!
	for _ in $(seq 1 900); do
		curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
		kill -0 "$pid" 2>/dev/null || { cat "$out/serve-$name.log" >&2; exit 1; }
		sleep 1
	done
	if [ "${PROFILE:-0}" = 1 ] && [ $first = 1 ]; then
		bin/dmar bench load --addr "127.0.0.1:$port" --levels "${CONCURRENCY:-16}" --duration 25s >"$out/pprof-load-$name.txt" &
		lp=$!
		sleep 3
		curl -s "http://127.0.0.1:$pport/debug/pprof/profile?seconds=20" -o "$out/pprof-cpu-$name.pb.gz"
		curl -s "http://127.0.0.1:$pport/debug/pprof/mutex" -o "$out/pprof-mutex-$name.pb.gz"
		curl -s "http://127.0.0.1:$pport/debug/pprof/block" -o "$out/pprof-block-$name.pb.gz"
		wait "$lp"
	fi
	first=0
	echo "== $run: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), data $data" | tee "$out/env-$name.txt"
	bin/dmar bench load --addr "127.0.0.1:$port" --pid "$pid" --levels "${LEVELS:-1,2,4,8,16,32}" \
		--duration "${DURATION:-10s}" --out "$out/$name" | tee "$out/table-$name.txt"
	stop
done
