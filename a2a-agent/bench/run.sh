#!/bin/sh
# Echo SendMessage benchmark of the agent beside its no-A2A floor, in the same run.
#
# The `a2a-agent serve --echo` binary and the `floor` example (a plain axum server that answers
# the same bytes without parsing anything, see a2a-agent/examples/floor.rs) are each loaded with
# wrk over JSON-RPC and HTTP+JSON at 1, 16 and 64 connections. Per run: req/s, p50/p99, server CPU
# per request (utime+stime from /proc/PID/stat over the run divided by wrk's request count) and
# the ratio agent/floor; RSS of the agent after all runs. Everything on 127.0.0.1, port 0.
#
# gRPC (issue 17): the agent also serves gRPC on the same port (--grpc true), loaded by the
# `grpc_load` example (closed loop, one request in flight per HTTP/2 connection, a new messageId
# per request, like the wrk scripts) at 1, 16 and 64 connections; there is no gRPC floor.
#
# Placement (BENCH_PLACEMENT=0 leaves it out): at 1 connection the figures depend on where the
# kernel runs the server relative to wrk. On a small machine (2 vCPUs here) it sometimes runs both
# on one CPU (each request is a plain context switch, caches stay warm, throughput is decided by
# CPU per request) and sometimes on two (each request wakes an idle CPU: 15-20 us per wake-up on
# this VM, which dominates a short request), and a run can mix both. After the unpinned runs the
# 1-connection rows are run again with both servers pinned (taskset): "split" = servers on CPU 1,
# wrk on CPU 0 (a client elsewhere: every request crosses a wake-up); "shared" = servers and wrk on
# CPU 0 (no wake-ups: CPU per request only). See docs/benchmarks.md.
#
# Usage (repository root): a2a-agent/bench/run.sh [path/to/release/a2a-agent] [seconds per run]
# The floor and grpc_load binaries are expected beside the agent (target/release/examples/); build
#   cargo build --release -p a2ars-agent --features cli --bin a2a-agent --example floor --example grpc_load
# (without grpc_load the gRPC rows are left out).
set -eu
BIN=${1:-target/release/a2a-agent}
SECS=${2:-10}
FLOOR=${FLOOR_BIN:-$(dirname "$BIN")/examples/floor}
GLOAD=${GRPC_LOAD_BIN:-$(dirname "$BIN")/examples/grpc_load}
DIR=$(dirname "$0")
command -v wrk >/dev/null || { echo "wrk not found (apt-get install -y wrk)" >&2; exit 1; }
[ -x "$FLOOR" ] || { echo "floor not found at $FLOOR (cargo build --release -p a2ars-agent --example floor)" >&2; exit 1; }
TMP=$(mktemp -d)
APID=""; FPID=""
cleanup() {
  for p in $APID $FPID; do kill "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP PIPE
listening() {
  for _ in $(seq 100); do grep -q '^LISTENING' "$1" && break; sleep 0.1; done
  sed -n 's/^LISTENING //p' "$1" | head -1
}
"$BIN" serve --echo --grpc true --host 127.0.0.1 --port 0 >"$TMP/agent.out" 2>/dev/null &
APID=$!
"$FLOOR" >"$TMP/floor.out" 2>/dev/null &
FPID=$!
AURL=$(listening "$TMP/agent.out"); FURL=$(listening "$TMP/floor.out")
[ -n "$AURL" ] && [ -n "$FURL" ] || { echo "a server did not start" >&2; exit 1; }
echo "agent $AURL (pid $APID), floor $FURL (pid $FPID); $(uptime)"

TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ms() { echo "$1" | awk '{v=$1; if (v ~ /us$/) {sub(/us$/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v*=1000}; printf "%.3f", v}'; }
# run NAME PID LUA CONNS URL -> NAME.res "rps p50 p99 cpu_us_per_req"
run() {
  t=$([ "$4" -lt 2 ] && echo 1 || echo 2)
  c0=$(cpu "$2")
  ${WRAP:-} wrk -t"$t" -c"$4" -d"${SECS}s" --latency -s "$DIR/$3.lua" "$5" >"$TMP/$1.wrk"
  c1=$(cpu "$2")
  rps=$(awk '/^Requests\/sec/ {print $2}' "$TMP/$1.wrk")
  n=$(awk '/requests in/ {print $1}' "$TMP/$1.wrk")
  p50=$(ms "$(awk '$1=="50%" {print $2}' "$TMP/$1.wrk")")
  p99=$(ms "$(awk '$1=="99%" {print $2}' "$TMP/$1.wrk")")
  us=$(awk -v c="$((c1 - c0))" -v n="$n" -v t="$TCK" 'BEGIN { if (n < 1) n = 1; printf "%.0f", c * 1e6 / t / n }')
  echo "$rps $p50 $p99 $us" >"$TMP/$1.res"
  echo "  $1: $rps req/s, p50 $p50 ms, p99 $p99 ms, server CPU $us us/req" >&2
}
# run_grpc NAME PID CONNS HOST:PORT -> NAME.res (same columns, from grpc_load)
run_grpc() {
  c0=$(cpu "$2")
  "$GLOAD" "$4" "$3" "$SECS" >"$TMP/$1.out"
  c1=$(cpu "$2")
  read -r _ rps p50 p99 n errs <"$TMP/$1.out"
  us=$(awk -v c="$((c1 - c0))" -v n="$n" -v t="$TCK" 'BEGIN { if (n < 1) n = 1; printf "%.0f", c * 1e6 / t / n }')
  echo "$rps $p50 $p99 $us" >"$TMP/$1.res"
  echo "  $1: $rps req/s, p50 $p50 ms, p99 $p99 ms, server CPU $us us/req, $errs errors" >&2
}
# warm-up, not reported
SAVE=$SECS; SECS=2
run warm-agent "$APID" jsonrpc 1 "$AURL"; run warm-floor "$FPID" jsonrpc 1 "$FURL"
SECS=$SAVE
for b in jsonrpc rest; do
  for c in 1 16 64; do
    run "agent-$b-$c" "$APID" "$b" "$c" "$AURL"
    run "floor-$b-$c" "$FPID" "$b" "$c" "$FURL"
  done
done
GRPC=""
if [ -x "$GLOAD" ]; then
  GRPC=1
  AHOST=${AURL#http://}; AHOST=${AHOST%%/*}
  for c in 1 16 64; do run_grpc "agent-grpc-$c" "$APID" "$c" "$AHOST"; done
else
  echo "no grpc_load at $GLOAD: gRPC rows left out" >&2
fi
PLACED=""
if [ "${BENCH_PLACEMENT:-1}" != 0 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  PLACED=1
  pin() { for p in $APID $FPID; do taskset -a -p -c "$1" "$p" >/dev/null; done; }
  for pl in split shared; do
    if [ "$pl" = split ]; then pin 1; else pin 0; fi
    WRAP="taskset -c 0"
    for b in jsonrpc rest; do
      run "agent-$b-1-$pl" "$APID" "$b" 1 "$AURL"
      run "floor-$b-1-$pl" "$FPID" "$b" 1 "$FURL"
    done
  done
  pin "0-$(($(nproc) - 1))"; WRAP=""
fi
echo "agent RSS after the runs: $(awk '/VmRSS/ {print $2 " kB"}' "/proc/$APID/status"); $(uptime)"
echo
echo "| binding | connections | floor req/s | agent req/s | agent/floor | agent p50 / p99 | CPU us/req floor / agent |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for b in jsonrpc rest; do
  for c in 1 16 64; do
    read -r frps _ _ fus <"$TMP/floor-$b-$c.res"
    read -r arps ap50 ap99 aus <"$TMP/agent-$b-$c.res"
    awk -v b="$b" -v c="$c" -v f="$frps" -v a="$arps" -v p50="$ap50" -v p99="$ap99" -v fus="$fus" -v aus="$aus" 'BEGIN {
      printf "| %s | %d | %.0f | %.0f | **%.2f** | %.2f / %.2f ms | %d / %d |\n",
        (b == "rest" ? "HTTP+JSON" : "JSON-RPC"), c, f, a, a/f, p50, p99, fus, aus }'
  done
done
if [ -n "$GRPC" ]; then
  for c in 1 16 64; do
    read -r arps ap50 ap99 aus <"$TMP/agent-grpc-$c.res"
    awk -v c="$c" -v a="$arps" -v p50="$ap50" -v p99="$ap99" -v aus="$aus" 'BEGIN {
      printf "| gRPC | %d | - | %.0f | - | %.2f / %.2f ms | - / %d |\n", c, a, p50, p99, aus }'
  done
fi
if [ -n "$PLACED" ]; then
  echo
  echo "1 connection, pinned (split: servers on CPU 1, wrk on CPU 0; shared: all on CPU 0):"
  echo
  echo "| binding | placement | floor req/s | agent req/s | agent/floor | agent p50 / p99 | CPU us/req floor / agent |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  for b in jsonrpc rest; do
    for pl in split shared; do
      read -r frps _ _ fus <"$TMP/floor-$b-1-$pl.res"
      read -r arps ap50 ap99 aus <"$TMP/agent-$b-1-$pl.res"
      awk -v b="$b" -v pl="$pl" -v f="$frps" -v a="$arps" -v p50="$ap50" -v p99="$ap99" -v fus="$fus" -v aus="$aus" 'BEGIN {
        printf "| %s | %s | %.0f | %.0f | **%.2f** | %.2f / %.2f ms | %d / %d |\n",
          (b == "rest" ? "HTTP+JSON" : "JSON-RPC"), pl, f, a, a/f, p50, p99, fus, aus }'
    done
  done
fi
