#!/usr/bin/env bash
# The project's Go benchmarks (make bench): every package with a
# `func Benchmark...` in its tests, found afresh each run, with
#   go test -run '^$' -bench PATTERN -benchmem -benchtime T -timeout D
# then the GNN table of scripts/bench/gnn.sh (BenchmarkGNN is left to it, so
# it runs once). Figures are go test's own lines; a summary follows.
#
#   scripts/bench.sh [PACKAGE ...]          default: every package with benchmarks
#
# Env: DMAR_BENCHTIME (go test -benchtime, default 1s; e.g. 100ms or 1x for a
# quick pass), DMAR_BENCH_TIMEOUT (go test -timeout per package, default 10m),
# DMAR_ORT_THREADS (for the ONNX Runtime benchmarks). Benchmarks that need a
# backend run only when it is configured and skip otherwise, in CI too:
# DMAR_NEO4J_URI (internal/kg/neo4jkg), DMAR_PARITY=1 and DMAR_WEAVIATE_URL
# (internal/retrieval/weaviate; use DMAR_BENCHTIME=1x there). The ONNX ones
# need scripts/setup.sh (make bench runs it). Exit status 1 if a package fails.
# End-to-end query latency is not here: `dmar bench latency` (README, "Performance").
set -euo pipefail
cd "$(dirname "$0")/.."
export DMAR_CACHE=${DMAR_CACHE:-$HOME/.cache/dmar}
benchtime=${DMAR_BENCHTIME:-1s}
timeout=${DMAR_BENCH_TIMEOUT:-10m}
gnn=scripts/bench/gnn.sh

if [ $# -gt 0 ]; then
	pkgs=("$@")
else
	mapfile -t pkgs < <(grep -rl --include='*_test.go' '^func Benchmark' . | grep -v '^\./\.git/' | xargs -n1 dirname | sort -u)
fi

echo "dmar benchmarks: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(go version | cut -d' ' -f3-4), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "benchtime $benchtime, timeout $timeout per package, DMAR_ORT_THREADS=${DMAR_ORT_THREADS:-unset}"

summary=()
failed=0
run_gnn=0
for pkg in "${pkgs[@]}"; do
	pkg=./${pkg#./}
	mapfile -t names < <(grep -ho '^func Benchmark[A-Za-z0-9_]*' "$pkg"/*_test.go | cut -d' ' -f2 | sort -u)
	if [ -x "$gnn" ] && [ "$pkg" = ./internal/scoring/onnx ]; then
		keep=()
		for n in "${names[@]}"; do
			if [ "$n" = BenchmarkGNN ]; then run_gnn=1; else keep+=("$n"); fi
		done
		names=("${keep[@]}")
	fi
	[ ${#names[@]} -gt 0 ] || continue
	pattern="^($(
		IFS='|'
		echo "${names[*]}"
	))\$"
	echo
	echo "== $pkg  ${names[*]}"
	start=$SECONDS
	set +e
	# -v shows why a benchmark skipped; the bare name lines it adds are dropped.
	out=$(env -u CI go test -v -run '^$' -bench "$pattern" -benchmem -benchtime "$benchtime" -timeout "$timeout" "$pkg" 2>&1)
	rc=$?
	set -e
	grep -v -e '^\(goos\|goarch\|pkg\|cpu\): ' -e '^Benchmark[^[:space:]]*$' <<<"$out" || true
	lines=$(grep -c '^Benchmark.*ns/op' <<<"$out" || true)
	skips=$(grep -c '^[[:space:]]*--- SKIP' <<<"$out" || true)
	if [ $rc -ne 0 ]; then
		status=FAILED
		failed=1
	else
		status="$lines results"
		if [ "$skips" -gt 0 ]; then
			why=$(grep -m1 -A1 '^Benchmark[^[:space:]]*$' <<<"$out" | grep -m1 -o '_test.go:[0-9]*: .*' | cut -d' ' -f2- | cut -c1-70 || true)
			status="$status, $skips skipped${why:+ ($why)}"
		fi
	fi
	summary+=("$(printf '%-36s %4ds  %s' "$pkg" $((SECONDS - start)) "$status")")
done

if [ $run_gnn -eq 1 ]; then
	echo
	echo "== $gnn -benchtime $benchtime"
	start=$SECONDS
	if env -u CI "$gnn" -benchtime "$benchtime" -timeout "$timeout"; then
		status=ok
	else
		status="FAILED or skipped (see above)"
		failed=1
	fi
	summary+=("$(printf '%-36s %4ds  %s' "BenchmarkGNN ($gnn)" $((SECONDS - start)) "$status")")
fi

echo
echo "== summary (load average now $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%s\n' "${summary[@]}"
exit $failed
