#!/usr/bin/env bash
# The large-graph benchmark in one command: grows codexm into a seeded
# Wikidata-shaped graph of EDGES edges under $DMAR_CACHE/biggraph (never in
# the repository; gengraph), then measures the embedded graph on it
# (graphbench: bundle read and build, snapshot save and load, heap per edge,
# subgraph p50/p95 for 300 seeds with the hub cap on and off, linking).
# With BASE=REV the same measurement also runs with memkg as of that git
# revision (e.g. main before the CSR change), side by side. Snapshots are
# built with graphbench -lean (bundle.Read needs about 8 GB for 20M edges;
# graphbench -check-lean shows both give the same graph).
#   scripts/bench/biggraph.sh   (env: EDGES=20000000, SEED=16, BASE=, GOMEMLIMIT=8GiB)
set -euo pipefail
cd "$(dirname "$0")/../.."
edges=${EDGES:-20000000}
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
dir=$cache/biggraph/e$edges-s${SEED:-16}
mkdir -p bin
go build -o bin/gengraph ./scripts/bench/gengraph
go build -o bin/graphbench ./scripts/bench/graphbench
[ -f "$dir/triples.tsv" ] || bin/gengraph -in ../shared/data/codexm -out "$dir" -edges "$edges" -seed "${SEED:-16}"
export GOMEMLIMIT=${GOMEMLIMIT:-8GiB}
echo "== memkg of this checkout: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f "wall_s=%e max_rss_mib=%M(KiB)" bin/graphbench -bundle "$dir" -snapshot "$dir/kg-new.gob" -lean ${REBUILD:+-rebuild}
if [ -n "${BASE:-}" ]; then
	src=$(mktemp -d)
	git archive "$BASE" | tar -x -C "$src"
	mkdir -p "$src/scripts/bench/graphbench"
	cp scripts/bench/graphbench/main.go "$src/scripts/bench/graphbench/"
	(cd "$src" && go build -o "$OLDPWD/bin/graphbench-base" ./scripts/bench/graphbench)
	rm -rf "$src"
	echo "== memkg of $BASE: load average $(cut -d' ' -f1-3 /proc/loadavg)"
	/usr/bin/time -f "wall_s=%e max_rss_mib=%M(KiB)" bin/graphbench-base -bundle "$dir" -snapshot "$dir/kg-base.gob" -lean ${REBUILD:+-rebuild}
fi
