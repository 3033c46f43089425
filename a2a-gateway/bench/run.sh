#!/bin/sh
# Gateway benchmark: echo SendMessage (A2A 1.0 JSON-RPC) through the gateway vs directly to the
# same Rust peer (the a2a-agent echo agent that `a2a-gateway demo` starts and registers), same
# load generator (wrk + Lua body), same run, at 1 and 16 connections; then SendStreamingMessage
# streams (events/s) both ways at 1 connection. Everything on 127.0.0.1, port 0.
#
# Usage (from the repository root):
#   a2a-gateway/bench/run.sh [seconds per run] [--no-build]
# Environment: CARGO_TARGET_DIR (default target), as for cargo.
set -eu
SECS=${1:-10}
DIR=$(dirname "$0")
TARGET=${CARGO_TARGET_DIR:-target}
if [ "${2:-}" != "--no-build" ]; then
  cargo build --release -p a2a-gateway --bin a2a-gateway
fi
BIN=$TARGET/release/a2a-gateway
command -v wrk >/dev/null || { echo "wrk not found (apt-get install -y wrk)" >&2; exit 1; }

TMP=$(mktemp -d)
OUT=$TMP/demo.out
"$BIN" demo --port 0 --database "$TMP/demo.db" >"$OUT" 2>"$TMP/demo.err" &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP PIPE
for _ in $(seq 100); do grep -q '^LISTENING' "$OUT" && break; sleep 0.1; done
grep -q '^LISTENING' "$OUT" || { echo "demo did not start:" >&2; cat "$TMP/demo.err" >&2; exit 1; }
KEY=$(sed -n 's/^export A2A_GATEWAY_KEY=//p' "$OUT")
GW=$(sed -n 's/^LISTENING //p' "$OUT")/a2a/echo
DIRECT=$(sed -n 's/^# The echo agent itself (direct, no gateway): //p' "$OUT")
echo "gateway $GW, direct $DIRECT (one process, pid $PID); $(uptime)"

# sanity: both answer the benchmark body with a JSON-RPC result (wrk only sees HTTP statuses)
SEND='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}}'
for u in "$DIRECT" "$GW"; do
  curl -s "$u" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d "$SEND" \
    | grep -q '"result"' || { echo "no JSON-RPC result from $u" >&2; exit 1; }
done

# ms from a wrk latency figure (12.3us / 1.2ms / 1.5s)
ms() { echo "$1" | awk '{v=$1; if (v ~ /us$/) {sub(/us$/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v*=1000}; printf "%.3f", v}'; }
# run NAME LUA CONNS URL KEY -> RES file with "rps p50ms p99ms errors"
run() {
  t=$([ "$3" -lt 2 ] && echo 1 || echo 2)
  A2A_GATEWAY_KEY=$5 wrk -t"$t" -c"$3" -d"${SECS}s" --latency -s "$DIR/$2.lua" "$4" >"$TMP/$1.wrk"
  rps=$(awk '/^Requests\/sec/ {print $2}' "$TMP/$1.wrk")
  p50=$(ms "$(awk '$1=="50%" {print $2}' "$TMP/$1.wrk")")
  p99=$(ms "$(awk '$1=="99%" {print $2}' "$TMP/$1.wrk")")
  err=$(awk '/Non-2xx|Socket errors/ {print}' "$TMP/$1.wrk" | tr '\n' ' ')
  echo "$rps $p50 $p99" >"$TMP/$1.res"
  echo "  $1: $rps req/s, p50 $p50 ms, p99 $p99 ms ${err}" >&2
}

# warm-up (card cache, connection pool, SQLite pages), 2 s each, not reported
SAVE=$SECS; SECS=2
run warm-gw send 1 "$GW" "$KEY"; run warm-direct send 1 "$DIRECT" ""
SECS=$SAVE

for c in 1 16; do
  run "direct-$c" send "$c" "$DIRECT" ""
  run "gw-$c" send "$c" "$GW" "$KEY"
done
run stream-direct stream 1 "$DIRECT" ""
run stream-gw stream 1 "$GW" "$KEY"

# events per stream (SSE `data:` lines of one echo `stream` reply), both ways
BODY='{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"stream hello"}]}}}'
EVD=$(curl -sN "$DIRECT" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d "$BODY" | grep -c "^data:" || true)
EVG=$(curl -sN "$GW" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d "$BODY" | grep -c "^data:" || true)
echo "RSS of the demo process (gateway + echo peer) after the runs: $(awk '/VmRSS/ {print $2 " kB"}' /proc/$PID/status)"

echo
echo "| connections | direct req/s | gateway req/s | ratio | direct p50 / p99 | gateway p50 / p99 | added p50 / p99 |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for c in 1 16; do
  read -r drps dp50 dp99 <"$TMP/direct-$c.res"
  read -r grps gp50 gp99 <"$TMP/gw-$c.res"
  awk -v c="$c" -v d="$drps" -v g="$grps" -v dp50="$dp50" -v dp99="$dp99" -v gp50="$gp50" -v gp99="$gp99" 'BEGIN {
    printf "| %d | %.0f | %.0f | %.2f | %.2f / %.2f ms | %.2f / %.2f ms | +%.2f / +%.2f ms |\n",
      c, d, g, g/d, dp50, dp99, gp50, gp99, gp50-dp50, gp99-dp99 }'
done
read -r sd sdp50 sdp99 <"$TMP/stream-direct.res"
read -r sg sgp50 sgp99 <"$TMP/stream-gw.res"
echo
awk -v sd="$sd" -v sg="$sg" -v ed="$EVD" -v eg="$EVG" -v dp="$sdp50" -v gp="$sgp50" 'BEGIN {
  printf "stream (1 connection, sequential): direct %.0f streams/s x %d events = %.0f events/s (p50 %.2f ms); gateway %.0f streams/s x %d events = %.0f events/s (p50 %.2f ms); ratio %.2f\n",
    sd, ed, sd*ed, dp, sg, eg, sg*eg, gp, (sg*eg)/(sd*ed) }'
