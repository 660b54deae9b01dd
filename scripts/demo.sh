#!/usr/bin/env bash
# The main job: serve DMAR on the embedded graph and index over the demo data
# (../shared/data/codexm-film unless DMAR_DATA says otherwise), show one query
# answered over REST, print the curl command and the explorer page's address
# for the same question, and keep serving until Ctrl-C.
# DMAR_DEMO_EXIT=1 stops the server after the answer (for scripted checks).
set -euo pipefail
cd "$(dirname "$0")/.."
addr=${1:-127.0.0.1:8080}
bin/dmar serve --addr "$addr" &
pid=$!
# The server stops with the demo. || true: under set -e, a kill of a server
# already gone (as after Ctrl-C) would make the demo's exit status 1.
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
# Ctrl-C (or a TERM) is how the demo ends: dmar serve drains and stops, and
# the demo ends without an error (make would print one for a non-zero exit).
stop() {
	trap - INT TERM
	kill -TERM $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	echo "demo: stopped" >&2
	exit 0
}
trap stop INT TERM
echo "demo: waiting for dmar to load the demo data and become ready on $addr ..." >&2
for _ in $(seq 1 900); do
	if curl -fsS "http://$addr/readyz" >/dev/null 2>&1; then break; fi
	kill -0 $pid 2>/dev/null || { echo "demo: dmar serve exited" >&2; exit 1; }
	sleep 1
done
q='{"query": "Which films did Christopher Nolan direct?"}'
echo "demo: POST /v1/retrieve $q" >&2
curl -fsS -X POST "http://$addr/v1/retrieve" -H 'Content-Type: application/json' -d "$q" | python3 scripts/show_answer.py
page="http://$addr/ui/?q=Which+films+did+Christopher+Nolan+direct%3F"
echo "demo: the same question from a shell:  curl -s http://$addr/v1/retrieve -H 'Content-Type: application/json' -d '$q'" >&2
echo "demo: and in a browser, the explorer:   $page" >&2
if [ "${DMAR_DEMO_EXIT:-}" = 1 ]; then exit 0; fi
echo "demo: dmar is serving on http://$addr (the explorer at /, POST /v1/retrieve, GET /openapi.json); Ctrl-C stops it" >&2
wait $pid || { status=$?; echo "demo: dmar serve exited with status $status" >&2; exit $status; }
