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

# free_port_block N: prints a port B such that nothing listens on loopback
# ports B..B+N-1, for services and servers that a test run starts for itself
# (fixed ports fail wherever another program holds one). The block is drawn
# from 20000-32000, below Linux's ephemeral range, where outgoing
# connections take their local ports. Nothing is reserved: a port taken
# between this check and the bind fails that service's start.
free_port_block() {
	local n=$1 base i try
	for ((try = 0; try < 200; try++)); do
		base=$((20000 + RANDOM % (12000 - n)))
		for ((i = 0; i < n; i++)); do
			(exec 3<>"/dev/tcp/127.0.0.1/$((base + i))") 2>/dev/null && continue 2
		done
		echo "$base"
		return 0
	done
	echo "no $n free loopback ports in a row in 20000-32000" >&2
	return 1
}
