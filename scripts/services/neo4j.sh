#!/usr/bin/env bash
# Neo4j Community 5.26 LTS for dmar, on loopback, without Docker or the tarball.
#
#   neo4j.sh start    install into the cache if needed, start, wait for Bolt,
#                     print bolt://127.0.0.1:7687 (last stdout line)
#   neo4j.sh stop     stop the server started by start
#   neo4j.sh status   say whether it runs (exit 0) or not (exit 3)
#   neo4j.sh import NODES.csv RELS.csv
#                     replace the database with a bulk import of CSV files in
#                     neo4j-admin's header format (loaders/neo4jcsv); stops the
#                     server first and starts it again if it was running
#   neo4j.sh install  only assemble the jars
#
# The server's class path is assembled from Maven Central jars with
# `mvn dependency:copy-dependencies` into $DMAR_CACHE/neo4j/lib, once.
# Environment: DMAR_CACHE (~/.cache/dmar), DMAR_NEO4J_HOME (its data, conf and
# logs; $DMAR_CACHE/neo4j/home), DMAR_NEO4J_BOLT_PORT (7687),
# DMAR_NEO4J_HTTP_PORT (7474), DMAR_NEO4J_HEAP (1g), DMAR_NEO4J_PAGECACHE
# (512m), DMAR_NEO4J_IMPORT_MEMORY (2G, off-heap cap of `import`),
# DMAR_NEO4J_START_TIMEOUT (300 s), DMAR_NEO4J_PASSWORD (unset: auth off, fine on loopback; set: auth on
# for user neo4j with that initial password, applied on a fresh database).
set -euo pipefail

VERSION=5.26.30        # Neo4j LTS line; the last that runs on Java 17
BROWSER_VERSION=5.24.0 # the newest Browser jar on Maven Central
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
base=$cache/neo4j
lib=$base/lib
home=${DMAR_NEO4J_HOME:-$base/home}
bolt_port=${DMAR_NEO4J_BOLT_PORT:-7687}
http_port=${DMAR_NEO4J_HTTP_PORT:-7474}
heap=${DMAR_NEO4J_HEAP:-1g}
pagecache=${DMAR_NEO4J_PAGECACHE:-512m}
pidfile=$home/run/neo4j.pid
console=$home/logs/console.log
uri=bolt://127.0.0.1:$bolt_port

log() { echo "neo4j: $*" >&2; }

# Java 17 flags: Neo4j's off-heap memory and Netty reach into these JDK
# internals; without them Bolt fails at start-up.
jvm_flags=(
	-XX:+UseG1GC -XX:-OmitStackTraceInFastThrow -XX:+DisableExplicitGC
	-Djdk.nio.maxCachedBufferSize=1024 -Dio.netty.tryReflectionSetAccessible=true
	-Dlog4j2.disable.jmx=true -Dfile.encoding=UTF-8
	--add-opens=java.base/java.nio=ALL-UNNAMED
	--add-opens=java.base/sun.nio.ch=ALL-UNNAMED
	--add-opens=java.base/java.io=ALL-UNNAMED
	--add-opens=java.base/java.lang=ALL-UNNAMED
	--add-opens=java.base/java.util.concurrent=ALL-UNNAMED
	--add-opens=java.base/java.util=ALL-UNNAMED
	--add-exports=java.base/sun.nio.ch=ALL-UNNAMED
	--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED
	--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED
)

need() { command -v "$1" >/dev/null || { log "$1 is required ($2)"; exit 1; }; }

# Neo4j 5.26 runs on Java 17 or 21: take $DMAR_JAVA, else java on PATH if it
# is one of those, else Debian's Java 17.
java_bin() {
	local j
	for j in ${DMAR_JAVA:-} java /usr/lib/jvm/java-17-openjdk-*/bin/java /usr/lib/jvm/java-21-openjdk-*/bin/java; do
		command -v "$j" >/dev/null 2>&1 || continue
		case $("$j" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p') in
		17 | 21) echo "$j"; return ;;
		esac
	done
	log "Java 17 or 21 is required (apt-get install openjdk-17-jre-headless, or set DMAR_JAVA)"
	exit 1
}

install() {
	if [ -f "$lib/.installed-$VERSION" ]; then return; fi
	java_bin >/dev/null
	need mvn "apt-get install maven"
	log "assembling Neo4j $VERSION from Maven Central into $lib (once; a few minutes)"
	mkdir -p "$base"
	# One pom naming the server, Bolt, the import tool and Browser; Maven
	# resolves one consistent set of versions (one Netty) for all of them.
	cat >"$base/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dmar.local</groupId>
  <artifactId>neo4j-server-classpath</artifactId>
  <version>$VERSION</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.neo4j.app</groupId><artifactId>neo4j-server</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j-bolt</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j-import-tool</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.neo4j.client</groupId><artifactId>neo4j-browser</artifactId><version>$BROWSER_VERSION</version></dependency>
  </dependencies>
</project>
POM
	rm -rf "$lib.tmp"
	(cd "$base" && mvn -q -B dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory="$lib.tmp" >&2)
	# Two Netty versions on one class path break Bolt: refuse to install them.
	local dup
	dup=$(ls "$lib.tmp" | sed -n 's/^\(netty-[a-z0-9-]*[a-z]\)-\([0-9][0-9.]*Final\).*\.jar$/\1 \2/p' |
		sort -u | awk '{print $1}' | uniq -d)
	if [ -n "$dup" ]; then
		log "several versions of $dup on the class path; refusing"
		exit 1
	fi
	rm -rf "$lib" && mv "$lib.tmp" "$lib"
	touch "$lib/.installed-$VERSION"
	log "installed $(ls "$lib" | wc -l) jars"
}

write_conf() {
	mkdir -p "$home/conf" "$home/data" "$home/logs" "$home/run" "$home/import" "$home/plugins"
	local auth=false
	[ -n "${DMAR_NEO4J_PASSWORD:-}" ] && auth=true
	cat >"$home/conf/neo4j.conf" <<CONF
# Written by scripts/services/neo4j.sh; edits are overwritten on start.
server.default_listen_address=127.0.0.1
server.default_advertised_address=127.0.0.1
server.bolt.enabled=true
server.bolt.listen_address=127.0.0.1:$bolt_port
server.bolt.advertised_address=127.0.0.1:$bolt_port
server.http.enabled=true
server.http.listen_address=127.0.0.1:$http_port
server.http.advertised_address=127.0.0.1:$http_port
server.https.enabled=false
dbms.security.auth_enabled=$auth
# Small, explicit memory: the defaults size the page cache at half the RAM.
server.memory.heap.initial_size=$heap
server.memory.heap.max_size=$heap
server.memory.pagecache.size=$pagecache
dbms.memory.transaction.total.max=0
dbms.usage_report.enabled=false
db.tx_log.rotation.retention_policy=2 files
server.directories.import=import
CONF
}

pid_alive() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

# ready: the database answers RETURN 1 (HTTP query API) and Bolt accepts.
ready() {
	local auth=()
	[ -n "${DMAR_NEO4J_PASSWORD:-}" ] && auth=(-u "neo4j:$DMAR_NEO4J_PASSWORD")
	curl -fsS -m 5 "${auth[@]}" -H 'Content-Type: application/json' \
		-d '{"statements":[{"statement":"RETURN 1 AS ok"}]}' \
		"http://127.0.0.1:$http_port/db/neo4j/tx/commit" 2>/dev/null | grep -q '"row":\[1\]' &&
		(exec 3<>"/dev/tcp/127.0.0.1/$bolt_port") 2>/dev/null
}

classpath() { echo "$lib/*"; }

start() {
	install
	if pid_alive; then
		if ready; then echo "$uri"; return; fi
		log "running (pid $(cat "$pidfile")) but not ready yet; waiting"
	else
		if (exec 3<>"/dev/tcp/127.0.0.1/$bolt_port") 2>/dev/null; then
			log "port $bolt_port is taken by another process (not started by this script)"
			exit 1
		fi
		write_conf
		if [ -n "${DMAR_NEO4J_PASSWORD:-}" ] && [ ! -f "$home/data/dbms/auth.ini" ] && [ ! -d "$home/data/databases/system" ]; then
			admin dbms set-initial-password "$DMAR_NEO4J_PASSWORD" >&2
		fi
		log "starting (home $home, heap $heap, page cache $pagecache; log $console)"
		# setsid: the server survives the shell that started it.
		setsid nohup "$(java_bin)" "${jvm_flags[@]}" -Xms"$heap" -Xmx"$heap" \
			-cp "$(classpath)" org.neo4j.server.CommunityEntryPoint \
			--home-dir="$home" --config-dir="$home/conf" >"$console" 2>&1 </dev/null &
		echo $! >"$pidfile"
	fi
	local wait=${DMAR_NEO4J_START_TIMEOUT:-300} t0=$SECONDS
	while ((SECONDS - t0 < wait)); do
		if ready; then
			log "ready after $((SECONDS - t0))s"
			echo "$uri"
			return
		fi
		if ! pid_alive; then
			log "the server exited; last lines of $console:"
			tail -n 30 "$console" >&2
			rm -f "$pidfile"
			exit 1
		fi
		sleep 1
	done
	log "not ready after ${wait}s; see $console and $home/logs/debug.log"
	exit 1
}

stop() {
	if ! pid_alive; then
		rm -f "$pidfile"
		log "not running"
		return
	fi
	local pid
	pid=$(cat "$pidfile")
	kill "$pid"
	for ((i = 0; i < 120; i++)); do
		kill -0 "$pid" 2>/dev/null || { rm -f "$pidfile"; log "stopped"; return; }
		sleep 1
	done
	log "still running after 120s; killing $pid"
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$pidfile"
}

status() {
	if pid_alive && ready; then
		echo "running (pid $(cat "$pidfile")) at $uri"
	elif pid_alive; then
		echo "starting (pid $(cat "$pidfile"))"
	else
		echo "stopped"
		exit 3
	fi
}

# admin runs neo4j-admin (org.neo4j.cli.AdminTool) against $home.
admin() {
	install
	[ -f "$home/conf/neo4j.conf" ] || write_conf
	NEO4J_HOME="$home" NEO4J_CONF="$home/conf" "$(java_bin)" "${jvm_flags[@]}" -Xmx"$heap" \
		-cp "$(classpath)" org.neo4j.cli.AdminTool "$@"
}

# import NODES RELS: replace database neo4j with the CSV files.
import_csv() {
	[ $# -eq 2 ] || { log "usage: neo4j.sh import NODES.csv RELATIONSHIPS.csv"; exit 2; }
	local nodes rels was_running=false
	nodes=$(realpath "$1") rels=$(realpath "$2")
	pid_alive && was_running=true
	$was_running && stop
	write_conf
	log "importing $nodes and $rels"
	admin database import full --overwrite-destination=true --id-type=string \
		--max-off-heap-memory="${DMAR_NEO4J_IMPORT_MEMORY:-2G}" \
		--array-delimiter=U+001F --skip-bad-relationships=false \
		--nodes="$nodes" --relationships="$rels" \
		--report-file="$home/logs/import.report" neo4j >&2
	if $was_running; then start; fi
}

case "${1:-}" in
install) install ;;
start) start ;;
stop) stop ;;
status) status ;;
import) shift; import_csv "$@" ;;
admin) shift; admin "$@" ;;
*)
	echo "usage: $0 start|stop|status|install|import NODES RELS|admin ARGS..." >&2
	exit 2
	;;
esac
