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
# Fuzz every decoder (the request bodies, the bounded JSON check, the
# Wikidata line parser, bundle lines) and the document log's reader and
# repair under random damage, each for a bounded time (DMAR_FUZZTIME,
# default 10s); the targets assert their own resource bounds (FuzzCheck:
# bytes allocated per input byte). A failing input is saved under the
# package's testdata/fuzz and fails the run. The last 8 lines are kept, so
# that a failure says why (a saved input, or a worker the fuzzer took for hung
# while a loaded machine stalled it).
#
# Go before 1.27 can fail a run whose -fuzztime ends while a worker is in the
# middle of an input (golang/go#75804): "context deadline exceeded", and the
# input the worker held is saved as if it had failed. Such a run is retried
# once, and only after the inputs it saved replay clean as ordinary tests
# (they are then removed); any other failure, a saved input that fails
# again, or a second failure fails the run.
fuzz() { # name pkg
	go test -run '^$' -fuzz "^$1\$" -fuzztime "${DMAR_FUZZTIME:-10s}" "./$2" >/tmp/dmar-fuzz.log 2>&1
	local rc=$?
	tail -n 8 /tmp/dmar-fuzz.log | tee -a /tmp/dmar-test.log
	return $rc
}
for target in internal/server:FuzzDecodeRetrieve internal/server:FuzzDecodeLink internal/server:FuzzDecodeAnswer \
	internal/server:FuzzDecodePutDocuments internal/server:FuzzDecodeDeleteDocuments internal/jsonlimit:FuzzCheck \
	internal/docstore:FuzzLogCorruption internal/kg/bundle:FuzzParseLines loaders/wikidata:FuzzParseLine loaders/wikidata:FuzzParseRef; do
	name=${target#*:} pkg=${target%%:*}
	# A renamed or moved target must fail the run, not fuzz nothing.
	listed=$(go test -list "^${name}\$" "./${pkg}")
	grep -qx "${name}" <<<"$listed" || { echo "test: fuzz target ${target} not found" >&2; exit 1; }
	corpus=$pkg/testdata/fuzz/$name
	before=$(ls "$corpus" 2>/dev/null || true)
	fuzz "$name" "$pkg" && continue
	grep -q 'context deadline exceeded' /tmp/dmar-fuzz.log || exit 1
	saved=$(comm -13 <(echo "$before") <(ls "$corpus" 2>/dev/null || true) | sed '/^$/d')
	go test -count=1 -run "^${name}\$" "./${pkg}" >>/tmp/dmar-test.log 2>&1 || { echo "test: ${target}: a saved input fails when replayed" >&2; exit 1; }
	for f in $saved; do rm -f "$corpus/$f"; done
	echo "test: ${target}: the fuzz time ended with a worker mid-input (golang/go#75804); the saved input replays clean; fuzzing again" | tee -a /tmp/dmar-test.log
	fuzz "$name" "$pkg" || exit 1
done
