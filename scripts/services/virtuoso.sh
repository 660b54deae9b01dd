#!/usr/bin/env bash
# Virtuoso Open Source (Debian's virtuoso-opensource 7.2) as a local SPARQL
# endpoint for the SPARQL loader's tests.
#   virtuoso.sh start   install if needed, start on loopback, wait, print the endpoint URL last
#   virtuoso.sh stop    stop it (checkpoint, then exit)
#   virtuoso.sh status  print the URL if running, exit 1 if not
# Everything lives in $DMAR_CACHE/virtuoso (default ~/.cache/dmar/virtuoso):
# virtuoso.ini, the database, the log and the pid file. Ports (loopback only):
# HTTP $DMAR_VIRTUOSO_HTTP_PORT (8890), SQL/isql $DMAR_VIRTUOSO_SQL_PORT (1111).
# The database's dba password is Virtuoso's default (dba): it is reachable
# from this machine only; the tests load data through /sparql-auth with it.
set -euo pipefail

cache=${DMAR_CACHE:-$HOME/.cache/dmar}
home=$cache/virtuoso
http_port=${DMAR_VIRTUOSO_HTTP_PORT:-8890}
sql_port=${DMAR_VIRTUOSO_SQL_PORT:-1111}
url="http://127.0.0.1:$http_port/sparql"
pidfile=$home/virtuoso.pid

log() { echo "virtuoso: $*" >&2; }

running() {
	[ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

ready() {
	curl -fsS -o /dev/null --max-time 5 -G "$url" --data-urlencode 'query=ASK { ?s ?p ?o }' \
		-H 'Accept: application/sparql-results+json' 2>/dev/null
}

install() {
	if command -v virtuoso-t >/dev/null && command -v isql-vt >/dev/null; then
		return
	fi
	log "installing virtuoso-opensource (apt)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y virtuoso-opensource >&2 || { apt-get update >&2 && apt-get install -y virtuoso-opensource >&2; }
	# The package may start its own system instance; ours has its own ports,
	# database and ini, so it does not matter, but stop it to free memory.
	if [ -x /etc/init.d/virtuoso-opensource-7 ]; then
		/etc/init.d/virtuoso-opensource-7 stop >&2 2>&1 || true
	fi
}

write_ini() {
	mkdir -p "$home/db"
	local vsp=/var/lib/virtuoso-opensource-7/vsp
	[ -d "$vsp" ] || vsp=$home/db
	cat >"$home/virtuoso.ini" <<EOF
; Written by scripts/services/virtuoso.sh; rewritten at each start.
[Database]
DatabaseFile       = $home/db/virtuoso.db
ErrorLogFile       = $home/db/virtuoso.log
LockFile           = $home/db/virtuoso.lck
TransactionFile    = $home/db/virtuoso.trx
xa_persistent_file = $home/db/virtuoso.pxa
ErrorLogLevel      = 7
FileExtend         = 200
MaxCheckpointRemap = 2000
Striping           = 0
TempStorage        = TempDatabase

[TempDatabase]
DatabaseFile       = $home/db/virtuoso-temp.db
TransactionFile    = $home/db/virtuoso-temp.trx
MaxCheckpointRemap = 2000
Striping           = 0

[Parameters]
ServerPort               = 127.0.0.1:$sql_port
ServerThreads            = 8
CheckpointInterval       = 60
NumberOfBuffers          = 20000
MaxDirtyBuffers          = 15000
DirsAllowed              = ., $home, /usr/share/virtuoso-opensource-7/vad
VADInstallDir            = /usr/share/virtuoso-opensource-7/vad/
ThreadCleanupInterval    = 1
ResourcesCleanupInterval = 1

[HTTPServer]
ServerPort           = 127.0.0.1:$http_port
ServerRoot           = $vsp
MaxClientConnections = 8
ServerThreads        = 8
EnabledDavVSP        = 0

[SPARQL]
ResultSetMaxRows        = 1000000
MaxQueryCostEstimationTime = 0
MaxQueryExecutionTime   = 120
DefaultQuery            = ASK { ?s ?p ?o }
EOF
}

start() {
	if running && ready; then
		echo "$url"
		return
	fi
	install
	write_ini
	if ! running; then
		rm -f "$home/db/virtuoso.lck"
		log "starting (log: $home/db/virtuoso.log)"
		# Started directly (no wrapping subshell), so $! is virtuoso-t itself
		# and nothing holds the caller's stdout: `url=$(... start)` returns.
		cd "$home/db"
		setsid virtuoso-t +foreground +configfile "$home/virtuoso.ini" \
			>"$home/db/stdout.log" 2>&1 </dev/null &
		echo $! >"$pidfile"
		cd - >/dev/null
	fi
	for _ in $(seq 1 120); do
		if ready; then
			echo "$url"
			return
		fi
		if ! running; then
			log "exited during start-up; last log lines:"
			tail -n 20 "$home/db/virtuoso.log" "$home/db/stdout.log" >&2 || true
			exit 1
		fi
		sleep 1
	done
	log "not ready after 120 s"
	exit 1
}

stop() {
	if ! running; then
		rm -f "$pidfile"
		log "not running"
		return
	fi
	local pid
	pid=$(cat "$pidfile")
	# A clean shutdown checkpoints the database; fall back on signals.
	isql-vt "127.0.0.1:$sql_port" dba dba -K >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 30); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "still running after 30 s: killing $pid"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$pidfile"
	log "stopped"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status)
	if running && ready; then echo "$url"; else
		echo "virtuoso: not running" >&2
		exit 1
	fi
	;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
