# Shared parts of the service scripts that run one background process with
# a pid file (weaviate.sh, llm.sh). The sourcing script defines log, ready
# (the service answers), running (prints the live pid), pidfile, logfile,
# url, port and install/start, and may set stop_grace (seconds, default 60).

# alive: the process in the pid file exists. wait_ready asks this, not
# running: right after start forks it, the child is still the shell, whose
# command line does not name the server yet, and taking that for an exit
# stopped a healthy start (CI's failed run of ab2b076).
alive() {
	local pid
	pid=$(cat "$pidfile" 2>/dev/null) || return 1
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# wait_ready LIMIT: until ready, at most LIMIT seconds; fails early, with the
# log's tail, when the process has exited.
wait_ready() {
	local limit=$1 i
	for ((i = 0; i < limit * 4; i++)); do
		ready && return 0
		if ! alive; then
			log "the server exited; last log lines:"
			tail -n 20 "$logfile" >&2 || true
			return 1
		fi
		sleep 0.25
	done
	return 1
}

# stop: SIGTERM, then SIGKILL after stop_grace seconds.
stop() {
	local pid i grace=${stop_grace:-60}
	if ! pid=$(running); then
		rm -f "$pidfile"
		log "not running (on port $port)"
		return 0
	fi
	kill -TERM "$pid"
	for ((i = 0; i < grace * 4; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.25
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "pid $pid ignored SIGTERM for $grace s; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$pidfile"
	log "stopped (pid $pid)"
}

status() {
	if ready; then
		echo "$url"
		return 0
	fi
	log "not running on $url"
	exit 3
}

# service_main ARG: the scripts' one command line.
service_main() {
	case "${1:-}" in
	install) install ;;
	start) start ;;
	stop) stop ;;
	status) status ;;
	*)
		echo "usage: $0 install|start|stop|status" >&2
		exit 2
		;;
	esac
}
