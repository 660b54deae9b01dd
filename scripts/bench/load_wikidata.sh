#!/usr/bin/env bash
# Benchmark: `dmar load wikidata --to csv` on a gzip dump beside `gzip -dc`
# on the same file, in one run. The dump is synthetic volume made from real
# records: the 49 real entities of ../shared/data/wikidata-dump-sample
# repeated COPIES times (default 100, ~370 MB uncompressed), copy k with each
# entity's own id renumbered Q<n> -> Q<n + k*1000000> (scripts/bench/mkvolume).
#   scripts/bench/load_wikidata.sh [COPIES]
# Each command runs ROUNDS times (default 3), alternating; the fastest round counts.
# Env: GOMAXPROCS (default 2: the target is set on 2 cores), DMAR_CACHE.
set -euo pipefail
cd "$(dirname "$0")/../.."
copies=${1:-100}
rounds=${ROUNDS:-3}
cache=${DMAR_CACHE:-$HOME/.cache/dmar}/bench
mkdir -p "$cache"
sample=${DMAR_SHARED_DATA:-../shared/data}/wikidata-dump-sample/latest-all-first50.json
dump=$cache/wikidata-sample-x$copies.json.gz
bin=$cache/dmar
go build -o "$bin" ./cmd/dmar
[ -f "$dump" ] || go run ./scripts/bench/mkvolume -in "$sample" -out "$dump" -copies "$copies"
export GOMAXPROCS=${GOMAXPROCS:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

calc() { awk "BEGIN { print $1 }"; }
# timed LABEL CMD...: runs CMD, sets wall and cpu (user+sys seconds).
TIMEFORMAT='%R %U %S'
timed() {
	local tf
	tf=$(mktemp)
	{ time "$@" >"$out/stdout.txt" 2>"$out/stderr.txt"; } 2>"$tf"
	read -r wall user sys <"$tf"
	rm -f "$tf"
	cpu=$(calc "$user + $sys")
}
raw_bytes=$(gzip -dc "$dump" | wc -c)
echo "dump: $dump ($(du -m "$dump" | cut -f1) MB gzip, $((raw_bytes / 1000000)) MB uncompressed, $((49 * copies)) entities)"
echo "machine: $(nproc) cores, GOMAXPROCS=$GOMAXPROCS, load average $(cut -d' ' -f1-3 /proc/loadavg)"
gzipdc() { gzip -dc "$dump" >/dev/null; }
dmarload() { "$bin" load wikidata --dump "$dump" --to "csv:$out/csv" --quiet --relations none "$@"; }
names=("gzip -dc FILE > /dev/null" "dmar load wikidata --to csv --decompress go" "dmar load wikidata --to csv (default: external gzip)")
cmds=("gzipdc" "dmarload --decompress go" "dmarload")
declare -a best_wall best_cpu
# Rounds alternate the three commands so that load from other jobs hits all
# of them alike; each keeps its fastest round.
for round in $(seq 1 "$rounds"); do
	for i in 0 1 2; do
		# shellcheck disable=SC2086
		timed ${cmds[$i]}
		if [ "$i" -gt 0 ]; then
			grep -q "bad 0" "$out/stdout.txt" || { cat "$out/stdout.txt" "$out/stderr.txt"; exit 1; }
		fi
		if [ -z "${best_wall[$i]:-}" ] || [ "$(calc "$wall < ${best_wall[$i]}")" = 1 ]; then
			best_wall[$i]=$wall best_cpu[$i]=$cpu
		fi
	done
done
printf '%-52s %10s %14s %8s %8s\n' "best of $rounds rounds" "MB/s" "entities/s" "wall s" "CPU s"
gz=$(calc "$raw_bytes / ${best_wall[0]} / 1000000")
printf '%-52s %10.1f %14s %8.2f %8.2f\n' "${names[0]}" "$gz" "-" "${best_wall[0]}" "${best_cpu[0]}"
for i in 1 2; do
	mbs=$(calc "$raw_bytes / ${best_wall[$i]} / 1000000")
	printf '%-52s %10.1f %14.0f %8.2f %8.2f   %.2f of gzip -dc\n' "${names[$i]}" "$mbs" \
		"$(calc "$((49 * copies)) / ${best_wall[$i]}")" "${best_wall[$i]}" "${best_cpu[$i]}" "$(calc "$mbs / $gz")"
done
