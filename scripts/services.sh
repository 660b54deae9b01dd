#!/usr/bin/env bash
# Start or stop the real backends dmar's tests and users talk to, on loopback.
#   scripts/services.sh start neo4j|weaviate|weaviate-cluster|virtuoso|llm ...
#   scripts/services.sh stop  neo4j|weaviate|weaviate-cluster|virtuoso|llm ...
# Each service lives in scripts/services/NAME.sh (install once into the cache
# directory, start, wait until ready, print its URL; or stop). The cache is
# $DMAR_CACHE, default ~/.cache/dmar.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
action=${1:-}
shift || true
case "$action" in
start | stop | status) ;;
*)
	echo "usage: $0 start|stop|status SERVICE..." >&2
	exit 2
	;;
esac
[ $# -gt 0 ] || { echo "name a service: neo4j, weaviate, weaviate-cluster, virtuoso, llm" >&2; exit 2; }
for svc in "$@"; do
	f="$here/services/$svc.sh"
	[ -f "$f" ] || { echo "unknown service: $svc" >&2; exit 2; }
	bash "$f" "$action"
done
