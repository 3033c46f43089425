#!/bin/sh
# Instructions per echo SendMessage of the agent alone (and of the no-A2A floor), repeatable on
# a loaded machine: the "direct" rows of a2a-gateway/bench/callgrind.sh without building the
# gateway. Each server runs under `valgrind --tool=callgrind`; drive.py (one keep-alive
# connection, one request at a time) sends W warm-up requests, the counters are zeroed, N more
# requests are sent and the counters dumped. The agent is also measured per JSON-RPC stream
# (SendStreamingMessage, each answer's SSE stream read to its end: "Ir per stream").
#
# Usage (repository root, after `cargo build --profile profiling -p a2ars-agent --features cli --bin a2a-agent
#   --example floor`): a2a-agent/bench/callgrind.sh [N] [W]        (default N=200, W=30)
# Environment: AGENT_BIN (default target/profiling/a2a-agent), FLOOR_BIN (default beside it in
# examples/; missing: floor rows left out), BENCH_KEEP=1 keeps the callgrind.out files.
set -eu
N=${1:-200}
W=${2:-30}
AGBIN=${AGENT_BIN:-target/profiling/a2a-agent}
FLOOR=${FLOOR_BIN:-$(dirname "$AGBIN")/examples/floor}
DRIVE=$(dirname "$0")/../../a2a-gateway/bench/drive.py
TMP=$(mktemp -d)
PID=""
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  [ "${BENCH_KEEP:-}" = 1 ] && echo "kept $TMP" >&2 || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP PIPE
# measure NAME BINDINGS CMD...: start CMD under callgrind, drive each binding (jsonrpc, rest,
# stream), print Ir per request
measure() {
  name=$1; bindings=$2; shift 2
  valgrind --tool=callgrind --dump-instr=no --callgrind-out-file="$TMP/$name.%p.out" "$@" \
    >"$TMP/$name.stdout" 2>"$TMP/$name.stderr" &
  PID=$!
  for _ in $(seq 600); do grep -q '^LISTENING' "$TMP/$name.stdout" && break; sleep 0.1; done
  url=$(sed -n 's/^LISTENING //p' "$TMP/$name.stdout" | head -1)
  [ -n "$url" ] || { echo "$name did not start" >&2; cat "$TMP/$name.stderr" >&2; exit 1; }
  for b in $bindings; do
    u=$url; [ "$b" = rest ] && u=$url/message:send
    python3 "$DRIVE" "$u" "$W" "$b"
    callgrind_control -z "$PID" >/dev/null 2>&1
    python3 "$DRIVE" "$u" "$N" "$b"
    callgrind_control -d "$name-$b" "$PID" >/dev/null 2>&1
    f=$(ls -t "$TMP"/"$name".*.out.* | head -1)
    ir=$(awk '/^(summary|totals):/ {print $2; exit}' "$f")
    what=request; [ "$b" = stream ] && what=stream
    echo "$name $b: Ir per $what $((ir / N))"
  done
  kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""
}
echo "$(uptime)"
measure agent "jsonrpc rest stream" "$AGBIN" serve --echo --host 127.0.0.1 --port 0
if [ -x "$FLOOR" ]; then measure floor "jsonrpc rest" "$FLOOR"; fi
echo "N=$N W=$W"
