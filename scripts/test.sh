#!/usr/bin/env bash
# The whole test suite: starts the real backends the integration tests need
# (each scripts/services/NAME.sh present), runs every Go test, stops them.
set -euo pipefail
cd "$(dirname "$0")/.."
export DMAR_CACHE=${DMAR_CACHE:-$HOME/.cache/dmar}
started=()
stop_all() {
	for s in "${started[@]}"; do scripts/services.sh stop "$s" >/dev/null 2>&1 || true; done
}
trap stop_all EXIT
start() { # start SERVICE ENVVAR: export ENVVAR=<the URL the service prints>
	local url
	url=$(scripts/services.sh start "$1" | tail -n 1)
	started+=("$1")
	export "$2=$url"
	echo "test: $1 at $url" >&2
}
# The service scripts' shared start-up wait, against a stand-in (a second).
scripts/services/lib_test.sh
[ -f scripts/services/neo4j.sh ] && start neo4j DMAR_NEO4J_URI
[ -f scripts/services/weaviate.sh ] && start weaviate DMAR_WEAVIATE_URL
[ -f scripts/services/virtuoso.sh ] && start virtuoso DMAR_SPARQL_URL
# The small (0.5B) model: CI's tests of the chat reformulator, /v1/answer and the
# reader talk to it; tests skip when DMAR_CHAT_URL is unset. Its first install
# downloads about 0.5 GB; a cached start takes a few seconds.
[ -f scripts/services/llm.sh ] && DMAR_LLM_MODEL=0.5b start llm DMAR_CHAT_URL
# `docker compose config` checks docker-compose.yml (no Docker engine is needed).
scripts/install-compose.sh >/dev/null 2>&1 || echo "test: Compose v2 plugin not installed; the compose test uses docker-compose or skips" >&2
go vet ./...
go test -count=1 -timeout 45m ./... 2>&1 | tee /tmp/dmar-test.log
# The live-document index and store under the race detector: their tests run
# writers and searchers together (docs/documents.md).
go test -race -count=1 ./internal/retrieval/memindex/ ./internal/docstore/... 2>&1 | tee -a /tmp/dmar-test.log
# Fuzz the request decoders and the Wikidata line parser, each for a bounded
# time (DMAR_FUZZTIME, default 20s); a failing input is saved under the
# package's testdata/fuzz and fails the run. The last 8 lines are kept, so
# that a failure says why (a saved input, or a worker the fuzzer took for hung
# while a loaded machine stalled it).
for target in internal/server:FuzzDecodeRetrieve internal/server:FuzzDecodeLink loaders/wikidata:FuzzParseLine loaders/wikidata:FuzzParseRef; do
	# A renamed or moved target must fail the run, not fuzz nothing.
	listed=$(go test -list "^${target#*:}\$" "./${target%%:*}")
	grep -qx "${target#*:}" <<<"$listed" || { echo "test: fuzz target ${target} not found" >&2; exit 1; }
	go test -run '^$' -fuzz "^${target#*:}\$" -fuzztime "${DMAR_FUZZTIME:-20s}" "./${target%%:*}" 2>&1 | tail -n 8 | tee -a /tmp/dmar-test.log
done
