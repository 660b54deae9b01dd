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

echo "lib_test: $pass passed, $fail failed"
((fail == 0))
