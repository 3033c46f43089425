#!/bin/sh
# Instructions per request, repeatable on a loaded machine (docs/benchmarks.md): the echo agent
# and the gateway as in run.sh, both under `valgrind --tool=callgrind`; a fixed client
# (drive.py: one keep-alive connection, one request at a time) sends W warm-up requests, the
# counters are zeroed, N more requests are sent and the counters dumped. Prints the instructions
# (Ir) per request of the gateway and of the agent behind it, then of the agent called directly,
# on JSON-RPC and HTTP+JSON, and per SendStreamingMessage stream (JSON-RPC, read to its end).
#
# Usage (from the repository root, after `cargo build --profile profiling -p a2ars-gateway
#   --bin a2a-gateway -p a2ars-agent --bin a2a-agent`):
#   a2a-gateway/bench/callgrind.sh [N] [W]        (default N=300, W=50)
# Environment: CARGO_TARGET_DIR (default target), BENCH_PROFILE (default profiling),
# BENCH_KEEP=1 keeps the temp dir with the callgrind.out files (for callgrind_annotate).
set -eu
N=${1:-300}
W=${2:-50}
DIR=$(dirname "$0")
TARGET=${CARGO_TARGET_DIR:-target}
PROFILE=${BENCH_PROFILE:-profiling}
GWBIN=$TARGET/$PROFILE/a2a-gateway
AGBIN=$TARGET/$PROFILE/a2a-agent
. "$DIR/servers.sh"
CG="valgrind --tool=callgrind --dump-instr=no --collect-atstart=yes"

$CG --callgrind-out-file="$TMP/agent.%p.out" "$AGBIN" serve --echo --host 127.0.0.1 --port 0 \
  >"$TMP/agent.out" 2>"$TMP/agent.err" &
APID=$!; PIDS="$PIDS $APID"
DIRECT=$(wait_listening "$TMP/agent.out" "$TMP/agent.err" 60)
DB=$TMP/gw.db
KEY=$(bench_key "$GWBIN" "$DB" "$DIRECT")
$CG --callgrind-out-file="$TMP/gw.%p.out" "$GWBIN" serve --listen 127.0.0.1:0 --database "$DB" --dev \
  >"$TMP/gw.out" 2>"$TMP/gw.err" &
GPID=$!; PIDS="$PIDS $GPID"
GW=$(wait_listening "$TMP/gw.out" "$TMP/gw.err" 60)/a2a/echo
echo "direct $DIRECT, gateway $GW; $(uptime)"

# total Ir of the last dump of PID
ir() { f=$(ls -t "$TMP"/"$1".*.out.* 2>/dev/null | head -1); awk '/^(summary|totals):/ {print $2; exit}' "$f"; }
# measure NAME URL BINDING KEY: warm up, zero, drive N, dump both processes
measure() {
  python3 "$DIR/drive.py" "$2" "$W" "$3" "$4"
  callgrind_control -z "$APID" >/dev/null 2>&1; callgrind_control -z "$GPID" >/dev/null 2>&1
  python3 "$DIR/drive.py" "$2" "$N" "$3" "$4"
  callgrind_control -d "$1-agent" "$APID" >/dev/null 2>&1; callgrind_control -d "$1-gw" "$GPID" >/dev/null 2>&1
  a=$(ir agent); g=$(ir gw)
  echo "$1: Ir per request: agent $((a / N)), gateway $((g / N))"
}
measure gw-jsonrpc "$GW" jsonrpc "$KEY"
measure gw-rest "$GW/v1/message:send" rest "$KEY"
measure direct-jsonrpc "$DIRECT" jsonrpc ""
measure direct-rest "$DIRECT/message:send" rest ""
measure gw-stream "$GW" stream "$KEY"
measure direct-stream "$DIRECT" stream ""
echo "N=$N W=$W; $(uptime)"
