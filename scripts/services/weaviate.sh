#!/usr/bin/env bash
# Weaviate for dmar's tests and users, on loopback, built from the Go module
# proxy (no Docker here).
#   scripts/services/weaviate.sh install|start|stop|status
# install: go install weaviate-server into $DMAR_CACHE/weaviate/bin (once; about
#          2 minutes on 2 cores, run with nice).
# start:   install if needed, start (anonymous access, no modules, telemetry off,
#          single node, no auto-schema: dmar creates its collections itself, and
#          a write to a missing one must fail, not invent a schema), wait for
#          /v1/.well-known/ready, print the URL as the last stdout line. Already
#          running -> print the URL.
# stop:    SIGTERM (clean shutdown, data flushed), SIGKILL after 60 s.
# status:  print the URL and exit 0 if it is up, else exit 3.
# Env (defaults): DMAR_CACHE (~/.cache/dmar), DMAR_WEAVIATE_DATA
# ($DMAR_CACHE/weaviate/data), DMAR_WEAVIATE_PORT (8080), DMAR_WEAVIATE_GRPC_PORT
# (50051), DMAR_WEAVIATE_GOSSIP_PORT (7946), DMAR_WEAVIATE_DATA_PORT (7947),
# DMAR_WEAVIATE_RAFT_PORT (8300), DMAR_WEAVIATE_RAFT_RPC_PORT (8301).
# gRPC and the cluster ports bind on every interface (Weaviate takes a port,
# not an address, for them); HTTP binds 127.0.0.1 only.
set -euo pipefail

version=1.35.2
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
home=$cache/weaviate
bin=$home/bin/weaviate-server
stamp=$home/bin/weaviate-server.version
port=${DMAR_WEAVIATE_PORT:-8080}
grpc_port=${DMAR_WEAVIATE_GRPC_PORT:-50051}
gossip_port=${DMAR_WEAVIATE_GOSSIP_PORT:-7946}
data_port=${DMAR_WEAVIATE_DATA_PORT:-7947}
raft_port=${DMAR_WEAVIATE_RAFT_PORT:-8300}
raft_rpc_port=${DMAR_WEAVIATE_RAFT_RPC_PORT:-8301}
data=${DMAR_WEAVIATE_DATA:-$home/data}
# One pid and log file per HTTP port, so that two instances can run side by side.
pidfile=$home/run/weaviate-$port.pid
logfile=$home/log/weaviate-$port.log
url=http://127.0.0.1:$port

log() { echo "weaviate: $*" >&2; }

ready() { curl -fsS -o /dev/null --max-time 2 "$url/v1/.well-known/ready" 2>/dev/null; }

# running prints the pid of the server this script started on $port, if alive.
running() {
	[ -f "$pidfile" ] || return 1
	local pid
	pid=$(cat "$pidfile")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
	# The pid may have been reused by another program after a crash.
	grep -q weaviate-server "/proc/$pid/cmdline" 2>/dev/null || return 1
	echo "$pid"
}

install() {
	if [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
		return 0
	fi
	command -v go >/dev/null || { log "go is needed to build weaviate-server"; exit 1; }
	mkdir -p "$home/bin"
	log "building weaviate-server v$version into $home/bin (about 2 minutes on 2 cores)"
	GOBIN=$home/bin GOFLAGS=-buildvcs=false nice -n 10 \
		go install "github.com/weaviate/weaviate/cmd/weaviate-server@v$version" >&2
	echo "$version" >"$stamp"
}

start() {
	if running >/dev/null; then
		if wait_ready 60; then
			echo "$url"
			return 0
		fi
		log "pid $(cat "$pidfile") is running but not ready; see $logfile"
		exit 1
	fi
	if ready; then
		# Something we did not start answers on the port: use it rather than fail.
		log "a Weaviate not started by this script already answers on $url"
		echo "$url"
		return 0
	fi
	install
	mkdir -p "$data" "$home/run" "$home/log"
	log "starting on $url (data $data, log $logfile)"
	(
		cd "$home"
		env PERSISTENCE_DATA_PATH="$data" \
			AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED=true \
			DEFAULT_VECTORIZER_MODULE=none ENABLE_MODULES= API_BASED_MODULES_DISABLED=true \
			DISABLE_TELEMETRY=true GO_PROFILING_DISABLE=true PROMETHEUS_MONITORING_ENABLED=false \
			CLUSTER_HOSTNAME=node1 CLUSTER_IN_LOCALHOST=true \
			CLUSTER_BIND_ADDR=127.0.0.1 CLUSTER_ADVERTISE_ADDR=127.0.0.1 \
			CLUSTER_GOSSIP_BIND_PORT="$gossip_port" CLUSTER_DATA_BIND_PORT="$data_port" \
			RAFT_PORT="$raft_port" RAFT_INTERNAL_RPC_PORT="$raft_rpc_port" \
			RAFT_BOOTSTRAP_EXPECT=1 RAFT_JOIN="node1:$raft_rpc_port" RAFT_TIMEOUTS_MULTIPLIER=1 \
			GRPC_PORT="$grpc_port" \
			PERSISTENCE_MEMTABLES_FLUSH_DIRTY_AFTER_SECONDS=5 \
			AUTOSCHEMA_ENABLED=false \
			nohup "$bin" --scheme http --host 127.0.0.1 --port "$port" >>"$logfile" 2>&1 </dev/null &
		echo $! >"$pidfile"
	)
	if ! wait_ready 120; then
		log "not ready after 120 s; last log lines:"
		tail -n 20 "$logfile" >&2 || true
		stop
		exit 1
	fi
	echo "$url"
}

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
service_main "$@"
