#!/usr/bin/env bash
# Neo4j on the large graph in one command, after scripts/bench/biggraph.sh has
# generated the bundle: writes it as neo4j-admin CSV (dmar load kg --to csv:),
# imports it into a private Neo4j (its own home and ports, never the default
# ones), finishes with --after-import, then runs dmar bench subgraphs beside the
# embedded graph on the same roots (all entities and real ones only, hub cap
# on and off, one root and 300 per call, radius 2; linking of the kgqa dev
# questions). Each step's wall time is printed. The server is stopped at the
# end; its home and the CSV are deleted unless KEEP=1.
# The embedded side loads the graph through the state folder STATE; the first
# run reads the bundle text there once (about 8 GB and 6 minutes at 20M edges).
#   scripts/bench/bigneo4j.sh   (env: EDGES=20000000, SEED=16, BOLT=7717,
#   HTTP=7497, HEAP=8g: the name-token recount of --after-import needs it at
#   20M, PAGECACHE=4g, STATE=$DMAR_CACHE/state-big, KEEP=)
set -euo pipefail
cd "$(dirname "$0")/../.."
edges=${EDGES:-20000000}
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
dir=$cache/biggraph/e$edges-s${SEED:-16}
csv=$dir-csv
state=${STATE:-$cache/state-big}
export DMAR_NEO4J_HOME=${DMAR_NEO4J_HOME:-$cache/neo4j/big-e$edges-home}
export DMAR_NEO4J_BOLT_PORT=${BOLT:-7717} DMAR_NEO4J_HTTP_PORT=${HTTP:-7497}
export DMAR_NEO4J_HEAP=${HEAP:-8g} DMAR_NEO4J_PAGECACHE=${PAGECACHE:-4g} DMAR_NEO4J_IMPORT_MEMORY=${IMPORT_MEMORY:-4G}
[ -f "$dir/triples.tsv" ] || { echo "bigneo4j: no bundle in $dir; run EDGES=$edges scripts/bench/biggraph.sh first" >&2; exit 1; }
mkdir -p bin "$state"
go build -o bin/dmar ./cmd/dmar

finish() {
	bash scripts/services.sh stop neo4j || true
	[ -n "${KEEP:-}" ] || rm -rf "$DMAR_NEO4J_HOME" "$csv"
}
trap finish EXIT

step() {
	echo "== $1 ($(date -u +%T), load average $(cut -d' ' -f1-3 /proc/loadavg))"
	shift
	/usr/bin/time -f "wall_s=%e max_rss_kib=%M" "$@"
}
echo "== $(nproc) cores; heap $DMAR_NEO4J_HEAP, page cache $DMAR_NEO4J_PAGECACHE, Bolt port $DMAR_NEO4J_BOLT_PORT"
step "bundle to CSV" bin/dmar load kg --kg "$dir" --to "csv:$csv"
step "neo4j-admin import" bash scripts/services/neo4j.sh import "$csv/nodes.csv" "$csv/relationships.csv"
echo "store after import: $(du -sh "$DMAR_NEO4J_HOME/data/databases/neo4j" | cut -f1)"
step "start" bash scripts/services.sh start neo4j
step "after-import" bin/dmar load kg --graph "bolt://127.0.0.1:$DMAR_NEO4J_BOLT_PORT" --after-import --quiet
echo "store: $(du -sh "$DMAR_NEO4J_HOME/data/databases/neo4j" | cut -f1), transaction logs: $(du -sh "$DMAR_NEO4J_HOME/data/transactions/neo4j" | cut -f1)"

bench=(bin/dmar bench subgraphs --data "$dir" --state "$state" --graph "neo4j://127.0.0.1:$DMAR_NEO4J_BOLT_PORT" --quiet)
real=(--roots-below 1000000000) # gengraph's synthetic QIDs start at Q1000000000
step "subgraphs, 300 roots, hub cap 500; linking" "${bench[@]}" --seeds 300 --questions ../shared/data/kgqa/dev.jsonl
step "subgraphs, 300 roots, no hub cap" "${bench[@]}" --seeds 300 --hub-degree 0
step "subgraphs, 1 root" "${bench[@]}" --seeds 1 --rounds 300
step "subgraphs, 1 root, no hub cap" "${bench[@]}" --seeds 1 --rounds 300 --hub-degree 0
step "subgraphs, 300 real roots" "${bench[@]}" "${real[@]}" --seeds 300
step "subgraphs, 300 real roots, no hub cap" "${bench[@]}" "${real[@]}" --seeds 300 --hub-degree 0
step "subgraphs, 1 real root" "${bench[@]}" "${real[@]}" --seeds 1 --rounds 300
step "subgraphs, 1 real root, no hub cap" "${bench[@]}" "${real[@]}" --seeds 1 --rounds 300 --hub-degree 0
step "subgraphs, 5 real roots, radius 2, 4000 nodes" "${bench[@]}" "${real[@]}" --seeds 5 --hops 2 --max-nodes 4000
