#!/usr/bin/env bash
# The tests of what users reach dmar through besides Go (issue 37), against a
# dmar serve this script starts on codexm-film and stops:
#   1. MCP: the official Python mcp client over stdio (dmar mcp) and over
#      streamable HTTP (POST /mcp): tools by key, retrieve, refusals; a
#      malformed stdio line, a batch over the limit.
#   2. The Python package: built as a wheel, installed in a fresh venv,
#      its pytest (clients and their errors, LangChain and LlamaIndex
#      retrievers with LangChain's standard retriever tests from
#      langchain-tests and LlamaIndex's engines, models against
#      /openapi.json).
#   3. The contract: Schemathesis generates requests from /openapi.json for
#      DMAR_CONTRACT_TIME seconds (150) with every check on; any failure
#      fails the run. /v1/answer and /v1/verify are left out (their requests
#      are /v1/retrieve's, the claim in the query's place, and a generator's
#      answer or verdict takes up to a minute) and /mcp (its messages
#      are MCP's, tested in 1). With a generator, reformulator=chat requests
#      wait for the model (chat.timeout, 10 s), hence a client limit of 60 s.
#   4. A Go client generated from the spec (oapi-codegen) compiles.
# Python packages come from PyPI into $DMAR_CACHE/pyclients: a tools venv and a
# wheelhouse, each rebuilt when its requirements file changes.
# Env: DMAR_CACHE (~/.cache/dmar), DMAR_CLIENTS_PORT (18480), DMAR_CONTRACT_TIME (150),
# DMAR_SHARED_DATA (../shared/data), DMAR_CLIENTS_ONLY (e.g. "mcp python": a subset).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
home=$cache/pyclients
port=${DMAR_CLIENTS_PORT:-18480}
data=${DMAR_SHARED_DATA:-$repo/../shared/data}/codexm-film
only=${DMAR_CLIENTS_ONLY:-mcp python contract codegen}
log() { echo "clients: $*" >&2; }
want() { [[ " $only " == *" $1 "* ]]; }

# venv DIR REQUIREMENTS: a venv with the pinned requirements, kept while they are unchanged.
venv() {
	local dir=$1 req=$2 sum
	sum=$(sha256sum "$req" | cut -c1-16)
	if [ ! -x "$dir/bin/python" ] || [ "$(cat "$dir/.requirements" 2>/dev/null)" != "$sum" ]; then
		log "installing $req into $dir"
		rm -rf "$dir"
		python3 -m venv "$dir"
		nice -n 10 "$dir/bin/pip" install -q --disable-pip-version-check -r "$req" >&2
		echo "$sum" >"$dir/.requirements"
	fi
}

tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o bin/dmar ./cmd/dmar
tools=$home/tools
venv "$tools" scripts/clients/requirements.txt

# Two API keys: a read-only one and one that may write.
read_key=reader-$RANDOM$RANDOM write_key=writer-$RANDOM$RANDOM
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
cat >"$tmp/dmar.yaml" <<YAML
server:
  auth:
    keys:
      - {name: reader, sha256: $(sha "$read_key")}
      - {name: writer, sha256: $(sha "$write_key"), write: true}
YAML
url=http://127.0.0.1:$port
# With a model server (scripts/test.sh starts the small one), /v1/answer and
# the answer tool are tested too; a call takes up to a minute on 2 busy cores.
gen=()
if [ -n "${DMAR_CHAT_URL:-}" ]; then
	model=$(curl -fsS "$DMAR_CHAT_URL/models" | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"][0]["id"])')
	gen=(--chat-url "$DMAR_CHAT_URL" --chat-model "$model" --request-timeout 120s)
	export DMAR_TEST_GENERATOR=1
fi
log "dmar serve on $url (codexm-film, a fresh state folder${gen:+, generator $DMAR_CHAT_URL})"
bin/dmar serve --config "$tmp/dmar.yaml" --addr "127.0.0.1:$port" --data "$data" --state "$tmp/state" --quiet "${gen[@]}" >"$tmp/serve.log" 2>&1 &
pid=$!
for _ in $(seq 240); do
	curl -fsS "$url/healthz" >/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || { tail -n 20 "$tmp/serve.log" >&2; log "dmar serve exited"; exit 1; }
	sleep 0.5
done
curl -fsS "$url/healthz" >/dev/null || { tail -n 20 "$tmp/serve.log" >&2; log "dmar serve did not answer"; exit 1; }

status=0
if want mcp; then
	log "MCP: the Python mcp client over stdio and HTTP"
	# dmar mcp gets a state folder of its own: serve holds the document log of its.
	cp -r "$tmp/state" "$tmp/state-mcp" && rm -rf "$tmp/state-mcp/documents"
	DMAR_URL=$url DMAR_BIN=$repo/bin/dmar DMAR_CONFIG=$tmp/dmar.yaml DMAR_REPO=$repo \
		DMAR_MCP_ARGS="--data $data --state $tmp/state-mcp" DMAR_READ_KEY=$read_key DMAR_WRITE_KEY=$write_key \
		"$tools/bin/pytest" -q -p no:cacheprovider scripts/clients/test_mcp.py || status=1
fi
if want python; then
	log "Python package: wheel, fresh venv, pytest"
	wheels=$home/wheels
	sum=$(sha256sum scripts/clients/package-requirements.txt | cut -c1-16)
	if [ "$(cat "$wheels/.requirements" 2>/dev/null)" != "$sum" ]; then
		rm -rf "$wheels"
		nice -n 10 "$tools/bin/pip" wheel -q --disable-pip-version-check -w "$wheels" -r scripts/clients/package-requirements.txt httpx pydantic >&2
		echo "$sum" >"$wheels/.requirements"
	fi
	# Built from a copy: setuptools leaves build/ and *.egg-info beside the sources.
	cp -r clients/python "$tmp/src"
	"$tools/bin/pip" wheel -q --disable-pip-version-check --no-deps --no-index --find-links "$wheels" -w "$tmp/dist" "$tmp/src" >&2
	whl=$(ls "$tmp"/dist/dmar_client-*.whl)
	log "built $(basename "$whl")"
	python3 -m venv "$tmp/venv"
	"$tmp/venv/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$wheels" "$whl[test]" >&2
	(cd clients/python && DMAR_URL=$url DMAR_API_KEY=$write_key "$tmp/venv/bin/pytest" -q -p no:cacheprovider tests) || status=1
fi
if want contract; then
	log "contract: Schemathesis for ${DMAR_CONTRACT_TIME:-150} s, every check"
	# One worker: with two, Python 3.11's ast.parse, which Hypothesis calls to
	# describe its filters, can fail in both threads at once ("AST constructor
	# recursion depth mismatch"), ending an operation's tests with an error.
	(cd scripts/clients && SCHEMATHESIS_HOOKS=hooks PYTHONPATH=. "$tools/bin/st" --config-file schemathesis.toml run "$url/openapi.json" \
		--checks all --max-time "${DMAR_CONTRACT_TIME:-150}" --workers 1 --continue-on-failure --request-timeout 60 \
		--exclude-path /v1/answer --exclude-path /v1/verify --exclude-path /mcp -H "Authorization: Bearer $write_key" --no-color >"$tmp/contract.log" 2>&1) || {
		grep -v '^ *$' "$tmp/contract.log" | tail -n 80 >&2
		status=1
	}
	tail -n 6 "$tmp/contract.log" >&2
fi
if want codegen; then
	log "a Go client generated from the spec (oapi-codegen) compiles"
	scripts/clients/codegen.sh "$tmp/gen" || status=1
fi
exit $status
