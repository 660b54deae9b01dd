#!/usr/bin/env bash
# A Weaviate cluster of N nodes on loopback, for dmar's cluster tests, its
# failover benchmark and users who want to try replication on one machine.
#   scripts/services/weaviate-cluster.sh start|stop|status
# start:  build weaviate-server if needed (weaviate.sh install), start node 0,
#         wait for its gossip port, start the others, and wait until every node
#         answers /v1/.well-known/ready and /v1/nodes lists all N as HEALTHY.
#         Prints each node's URL, then as the last stdout line the index
#         setting dmar takes for the cluster (--index / DMAR_INDEX):
#         weaviate://127.0.0.1:P0,127.0.0.1:P1,.../Document?grpc=G0,G1,...
#         Already running -> the same lines.
# stop:   SIGTERM every node (clean shutdown), SIGKILL after 60 s.
# status: the same lines as start and exit 0 when every node is ready and
#         healthy, else exit 3.
# Env (defaults): DMAR_CACHE (~/.cache/dmar), DMAR_WEAVIATE_CLUSTER_NODES (3,
# at most 10), DMAR_WEAVIATE_CLUSTER_PORT (8180, the first node's HTTP port;
# every other port derives from it, node i of n: HTTP base+i, gRPC base+10+i,
# gossip base+20+2i, data base+21+2i, raft base+40+2i, raft RPC base+41+2i;
# so 8180-8222 by default, none of weaviate.sh's), DMAR_WEAVIATE_CLUSTER_DATA
# ($DMAR_CACHE/weaviate-cluster/data-BASE; node i keeps its data in node-i),
# DMAR_WEAVIATE_CLUSTER_TIMEOUT (180 s for the whole cluster to be healthy).
#
# Asynchronous replication (on for the collections dmar creates with
# replicas) compares replicas every 5 s instead of Weaviate's 30 s, so that a
# node that was down catches up sooner; objects written in the last 30 s are
# left to the writes themselves (Weaviate's propagation delay).
#
# Every node is told to join every node's gossip port (CLUSTER_JOIN; joining
# succeeds when one answers, itself included), so that a node restarted on
# its own, the first one too, finds the others again. Raft names all nodes
# (RAFT_JOIN, RAFT_BOOTSTRAP_EXPECT=N). The first node is started alone and
# the others only once its gossip port is open: a node whose join finds no
# one exits ("join cluster: ... connection refused"). A node's environment
# and command line are all it needs to start again, so `dmar bench failover`
# restarts a node it killed by running them again.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
bin=$cache/weaviate/bin/weaviate-server
nodes=${DMAR_WEAVIATE_CLUSTER_NODES:-3}
base=${DMAR_WEAVIATE_CLUSTER_PORT:-8180}
home=$cache/weaviate-cluster
data=${DMAR_WEAVIATE_CLUSTER_DATA:-$home/data-$base}
limit=${DMAR_WEAVIATE_CLUSTER_TIMEOUT:-180}

log() { echo "weaviate-cluster: $*" >&2; }

# service_main; its stop and status are replaced by the cluster's below.
# shellcheck source=lib.sh
. "$here/lib.sh"

case "$nodes" in
[1-9] | 10) ;;
*)
	log "DMAR_WEAVIATE_CLUSTER_NODES=$nodes: want 1 to 10"
	exit 2
	;;
esac

http_port() { echo $((base + $1)); }
grpc_port() { echo $((base + 10 + $1)); }
gossip_port() { echo $((base + 20 + 2 * $1)); }
data_port() { echo $((base + 21 + 2 * $1)); }
raft_port() { echo $((base + 40 + 2 * $1)); }
raft_rpc_port() { echo $((base + 41 + 2 * $1)); }
pidfile() { echo "$home/run/node-$base-$1.pid"; }
logfile() { echo "$home/log/node-$base-$1.log"; }
node_url() { echo "http://127.0.0.1:$(http_port "$1")"; }

node_ready() { curl -fsS -o /dev/null --max-time 2 "$(node_url "$1")/v1/.well-known/ready" 2>/dev/null; }

# node_running I prints the pid of node I if this script started it and it lives.
node_running() {
	local f pid
	f=$(pidfile "$1")
	[ -f "$f" ] || return 1
	pid=$(cat "$f")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
	grep -q weaviate-server "/proc/$pid/cmdline" 2>/dev/null || return 1
	echo "$pid"
}

# healthy: node 0 (else any node) lists all nodes as HEALTHY.
healthy() {
	local i out
	for ((i = 0; i < nodes; i++)); do
		out=$(curl -fsS --max-time 3 "$(node_url "$i")/v1/nodes" 2>/dev/null) || continue
		[ "$(grep -o '"status":"HEALTHY"' <<<"$out" | wc -l)" -eq "$nodes" ] && return 0
		return 1
	done
	return 1
}

all_ready() {
	local i
	for ((i = 0; i < nodes; i++)); do node_ready "$i" || return 1; done
	healthy
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

index_setting() {
	local hosts="" grpc="" i
	for ((i = 0; i < nodes; i++)); do
		hosts+="${hosts:+,}127.0.0.1:$(http_port "$i")"
		grpc+="${grpc:+,}$(grpc_port "$i")"
	done
	echo "weaviate://$hosts/Document?grpc=$grpc"
}

print_urls() {
	local i
	for ((i = 0; i < nodes; i++)); do node_url "$i"; done
	index_setting
}

start_node() {
	local i=$1 join="" raft="" j
	for ((j = 0; j < nodes; j++)); do
		join+="${join:+,}localhost:$(gossip_port "$j")"
		raft+="${raft:+,}wv-$j:$(raft_port "$j")"
	done
	mkdir -p "$data/node-$i" "$home/run" "$home/log"
	log "starting node $i on $(node_url "$i") (data $data/node-$i, log $(logfile "$i"))"
	(
		cd "$home"
		env PERSISTENCE_DATA_PATH="$data/node-$i" \
			AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED=true \
			DEFAULT_VECTORIZER_MODULE=none ENABLE_MODULES= API_BASED_MODULES_DISABLED=true \
			DISABLE_TELEMETRY=true GO_PROFILING_DISABLE=true PROMETHEUS_MONITORING_ENABLED=false \
			CLUSTER_HOSTNAME="wv-$i" CLUSTER_IN_LOCALHOST=true \
			CLUSTER_BIND_ADDR=127.0.0.1 CLUSTER_ADVERTISE_ADDR=127.0.0.1 \
			CLUSTER_GOSSIP_BIND_PORT="$(gossip_port "$i")" CLUSTER_DATA_BIND_PORT="$(data_port "$i")" \
			CLUSTER_JOIN="$join" \
			RAFT_PORT="$(raft_port "$i")" RAFT_INTERNAL_RPC_PORT="$(raft_rpc_port "$i")" \
			RAFT_JOIN="$raft" RAFT_BOOTSTRAP_EXPECT="$nodes" RAFT_TIMEOUTS_MULTIPLIER=1 \
			GRPC_PORT="$(grpc_port "$i")" \
			PERSISTENCE_MEMTABLES_FLUSH_DIRTY_AFTER_SECONDS=5 ASYNC_REPLICATION_FREQUENCY=5s \
			AUTOSCHEMA_ENABLED=false DMAR_PIDFILE="$(pidfile "$i")" \
			nohup "$bin" --scheme http --host 127.0.0.1 --port "$(http_port "$i")" >>"$(logfile "$i")" 2>&1 </dev/null &
		echo $! >"$(pidfile "$i")"
	)
}

# wait_for LIMIT WHAT CMD...: until CMD succeeds, at most LIMIT seconds; fails
# early when a node this script started has exited.
wait_for() {
	local limit=$1 what=$2 t i
	shift 2
	for ((t = 0; t < limit * 4; t++)); do
		"$@" && return 0
		for ((i = 0; i < nodes; i++)); do
			# kill -0, not node_running: a node just forked may not have
			# exec'd weaviate-server yet.
			if [ -f "$(pidfile "$i")" ] && ! kill -0 "$(cat "$(pidfile "$i")")" 2>/dev/null; then
				log "node $i exited while waiting for $what; last log lines:"
				tail -n 20 "$(logfile "$i")" >&2 || true
				return 1
			fi
		done
		sleep 0.25
	done
	log "$what: not after $limit s"
	return 1
}

start() {
	if all_ready; then
		print_urls
		return 0
	fi
	install
	local i started=0
	for ((i = 0; i < nodes; i++)); do
		if node_running "$i" >/dev/null; then
			continue
		fi
		local p
		for p in "$(http_port "$i")" "$(grpc_port "$i")" "$(gossip_port "$i")" "$(data_port "$i")" "$(raft_port "$i")" "$(raft_rpc_port "$i")"; do
			if port_open "$p"; then
				log "port $p of node $i is taken by something this script did not start; set DMAR_WEAVIATE_CLUSTER_PORT"
				exit 1
			fi
		done
		rm -f "$(pidfile "$i")"
		start_node "$i"
		started=1
		if ((i == 0)); then
			wait_for 60 "node 0's gossip port" port_open "$(gossip_port 0)" || {
				stop
				exit 1
			}
		fi
	done
	((started)) || log "every node was running; waiting for them"
	if ! wait_for "$limit" "every node ready and HEALTHY" all_ready; then
		curl -sS --max-time 3 "$(node_url 0)/v1/nodes" >&2 || true
		stop
		exit 1
	fi
	print_urls
}

stop_node() {
	local i=$1 pid t
	if ! pid=$(node_running "$i"); then
		rm -f "$(pidfile "$i")"
		return 0
	fi
	kill -TERM "$pid"
	for ((t = 0; t < 240; t++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.25
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "node $i (pid $pid) ignored SIGTERM for 60 s; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$(pidfile "$i")"
	log "stopped node $i (pid $pid)"
}

stop() {
	local i
	# The others first: the last to go finds no one to hand raft over to.
	for ((i = nodes - 1; i >= 0; i--)); do stop_node "$i"; done
}

status() {
	if all_ready; then
		print_urls
		return 0
	fi
	log "not every node is ready and HEALTHY (base port $base, $nodes nodes)"
	exit 3
}

install() { bash "$here/weaviate.sh" install; }

service_main "$@"
