#!/usr/bin/env bash
# Tests of lib.sh's wait_ready against a stand-in service (no real server):
# a start whose child is slow to exec must not be taken for an exit, and a
# child that does exit must be reported at once. Run by scripts/test.sh.
set -euo pipefail
dir=$(mktemp -d)
trap 'kill "$(cat "$dir/pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$dir"' EXIT
pidfile=$dir/pid
logfile=$dir/log
log() { echo "lib_test: $*" >&2; }
ready() { [ -f "$dir/up" ]; }
# As in weaviate.sh and llm.sh: running names the server by its command line.
running() {
	local pid
	pid=$(cat "$pidfile" 2>/dev/null) || return 1
	kill -0 "$pid" 2>/dev/null && grep -q lib-test-server "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
fail=0 pass=0

# 1. The child stays the shell for a second before it execs the server.
(sleep 1 && exec bash -c 'touch "$1/up"; exec sleep 30' lib-test-server "$dir") >"$logfile" 2>&1 &
echo $! >"$pidfile"
if wait_ready 10; then echo "ok   slow exec is waited for"; pass=$((pass + 1)); else echo "FAIL slow exec taken for an exit"; fail=$((fail + 1)); fi
kill "$(cat "$pidfile")" 2>/dev/null || true
rm -f "$dir/up"

# 2. The child exits without ever being ready: wait_ready fails well before its limit.
(echo "boom" && exit 3) >"$logfile" 2>&1 &
echo $! >"$pidfile"
start=$SECONDS
if wait_ready 30 2>/dev/null; then echo "FAIL an exited server was taken for ready"; fail=$((fail + 1))
elif ((SECONDS - start > 5)); then echo "FAIL an exit took $((SECONDS - start)) s to notice"; fail=$((fail + 1))
else echo "ok   an exit is noticed"; pass=$((pass + 1)); fi

# 3. free_port_block passes over a block where something listens. RANDOM
# seeded the same draws the same first block, which a stand-in occupies
# (called in this shell: a subshell reseeds RANDOM).
RANDOM=7
free_port_block 6 >"$dir/block"
first=$(cat "$dir/block")
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(30)' "$((first + 3))" &
holder=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$((first + 3))") 2>/dev/null && break; sleep 0.1; done
RANDOM=7
free_port_block 6 >"$dir/block"
again=$(cat "$dir/block")
kill "$holder" 2>/dev/null || true
if ((again + 5 >= first + 3 && again <= first + 3)); then echo "FAIL free_port_block gave $again-$((again + 5)), which holds the taken port $((first + 3))"; fail=$((fail + 1))
else echo "ok   a taken port is passed over"; pass=$((pass + 1)); fi

echo "lib_test: $pass passed, $fail failed"
((fail == 0))
