#!/usr/bin/env bash
# Benchmark: `dmar load wikidata --to csv` on a gzip dump beside `gzip -dc`
# on the same file, in one run. The dump is synthetic volume made from real
# records: the 49 real entities of ../shared/data/wikidata-dump-sample
# repeated COPIES times (default 100, ~370 MB uncompressed), copy k with each
# entity's own id renumbered Q<n> -> Q<n + k*1000000> (scripts/bench/mkvolume).
#   scripts/bench/load_wikidata.sh [COPIES]
# Env: GOMAXPROCS (default 2: the target is set on 2 cores), DMAR_CACHE.
set -euo pipefail
cd "$(dirname "$0")/../.."
copies=${1:-100}
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
printf '%-52s %10s %14s %8s %8s\n' "" "MB/s" "entities/s" "wall s" "CPU s"

gzipdc() { gzip -dc "$dump" >/dev/null; }
timed gzipdc
gz=$(calc "$raw_bytes / $wall / 1000000")
printf '%-52s %10.1f %14s %8.2f %8.2f\n' "gzip -dc FILE > /dev/null" "$gz" "-" "$wall" "$cpu"

run() { # label, extra flags
	local label=$1
	shift
	timed "$bin" load wikidata --dump "$dump" --to "csv:$out/csv" --quiet --relations none "$@"
	grep -q "bad 0" "$out/stdout.txt" || { cat "$out/stdout.txt" "$out/stderr.txt"; exit 1; }
	local mbs
	mbs=$(calc "$raw_bytes / $wall / 1000000")
	printf '%-52s %10.1f %14.0f %8.2f %8.2f   %.2f of gzip -dc\n' "$label" "$mbs" "$(calc "$((49 * copies)) / $wall")" "$wall" "$cpu" "$(calc "$mbs / $gz")"
}
run "dmar load wikidata --to csv (Go gzip reader)"
run "dmar load wikidata --to csv --external-decompress" --external-decompress
