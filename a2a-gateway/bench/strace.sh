#!/bin/sh
# Syscalls per hop of the gateway (docs/benchmarks.md): the echo agent and the gateway as in
# callgrind.sh (no valgrind), 50 warm-up requests, then `strace -c -f -p <gateway pid>` over N
# JSON-RPC hops of drive.py (one keep-alive connection, one request at a time). Prints strace's
# table and the syscalls per hop.
#
# Usage (from the repository root, after the profiling build of a2a-gateway and a2a-agent):
#   a2a-gateway/bench/strace.sh [N]        (default N=300)
# Environment: CARGO_TARGET_DIR (default target), BENCH_PROFILE (default profiling).
set -eu
N=${1:-300}
DIR=$(dirname "$0")
TARGET=${CARGO_TARGET_DIR:-target}
PROFILE=${BENCH_PROFILE:-profiling}
GWBIN=$TARGET/$PROFILE/a2a-gateway
AGBIN=$TARGET/$PROFILE/a2a-agent
. "$DIR/servers.sh"
"$AGBIN" serve --echo --host 127.0.0.1 --port 0 >"$TMP/agent.out" 2>"$TMP/agent.err" &
APID=$!; PIDS="$PIDS $APID"
DIRECT=$(wait_listening "$TMP/agent.out" "$TMP/agent.err" 30)
DB=$TMP/gw.db
KEY=$(bench_key "$GWBIN" "$DB" "$DIRECT")
"$GWBIN" serve --listen 127.0.0.1:0 --database "$DB" --dev >"$TMP/gw.out" 2>"$TMP/gw.err" &
GPID=$!; PIDS="$PIDS $GPID"
GW=$(wait_listening "$TMP/gw.out" "$TMP/gw.err" 30)/a2a/echo
python3 "$DIR/drive.py" "$GW" 50 jsonrpc "$KEY"
strace -c -f -p "$GPID" -o "$TMP/strace.txt" &
SPID=$!; PIDS="$PIDS $SPID"
sleep 1
python3 "$DIR/drive.py" "$GW" "$N" jsonrpc "$KEY"
sleep 0.5
kill -INT "$SPID"; wait "$SPID" 2>/dev/null || true; SPID=""
cat "$TMP/strace.txt"
awk -v n="$N" '/ total$/ {printf "syscalls per hop: %.1f (N=%d)\n", $4 / n, n}' "$TMP/strace.txt"
echo "$(uptime)"
