#!/bin/sh
# A/B of two gateway binaries in one session: one echo agent (`a2a-agent serve --echo`), gateway
# A and gateway B in front of it (each its own database and intent journal, same registration),
# then ROUNDS alternating wrk runs of echo SendMessage on JSON-RPC 1.0 (send.lua, a new
# messageId per request) at CONNS connections, A then B, SECS seconds each. Alternating keeps a
# machine whose load drifts (other builds) fair to both. Prints each run, then the medians of
# hops/s and of gateway CPU per hop and the ratios B/A.
#
# Usage (from the repository root):
#   a2a-gateway/bench/ab.sh BINARY_A BINARY_B [ROUNDS=6] [SECS=5] [CONNS=16]
# Environment: AGENT_BIN (default $CARGO_TARGET_DIR/release/a2a-agent, CARGO_TARGET_DIR
# default target). wrk: `apt-get install -y wrk`.
set -eu
A=$1; B=$2; ROUNDS=${3:-6}; SECS=${4:-5}; CONNS=${5:-16}
DIR=$(dirname "$0")
AGBIN=${AGENT_BIN:-${CARGO_TARGET_DIR:-target}/release/a2a-agent}
. "$DIR/servers.sh"
"$AGBIN" serve --echo --host 127.0.0.1 --port 0 >"$TMP/agent.out" 2>"$TMP/agent.err" &
PIDS="$PIDS $!"
AGENT=$(wait_listening "$TMP/agent.out" "$TMP/agent.err")
# start NAME BINARY -> sets URL_<NAME>, KEY_<NAME>, PID_<NAME>
start() {
  db=$TMP/$1.db
  key=$(bench_key "$2" "$db" "$AGENT")
  "$2" serve --listen 127.0.0.1:0 --database "$db" --dev >"$TMP/$1.out" 2>"$TMP/$1.err" &
  pid=$!; PIDS="$PIDS $pid"
  url=$(wait_listening "$TMP/$1.out" "$TMP/$1.err")/a2a/echo
  eval "URL_$1=\$url KEY_$1=\$key PID_$1=\$pid"
}
start A "$A"
start B "$B"
echo "agent $AGENT; A $A ($URL_A); B $B ($URL_B); $(uptime)"
TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# run NAME -> appends "rps us_per_hop" to $TMP/NAME.res
run() {
  eval "url=\$URL_$1 key=\$KEY_$1 pid=\$PID_$1"
  t=$([ "$CONNS" -lt 2 ] && echo 1 || echo 2)
  g0=$(cpu "$pid")
  A2A_GATEWAY_KEY=$key wrk -t"$t" -c"$CONNS" -d"$2s" -s "$DIR/send.lua" "$url" >"$TMP/$1.wrk"
  g1=$(cpu "$pid")
  rps=$(awk '/^Requests\/sec/ {print $2}' "$TMP/$1.wrk")
  n=$(awk '/requests in/ {print $1}' "$TMP/$1.wrk")
  err=$(awk '/Non-2xx|Socket errors/ {print}' "$TMP/$1.wrk" | tr '\n' ' ')
  us=$(awk -v g="$((g1 - g0))" -v n="$n" -v t="$TCK" 'BEGIN { if (n < 1) n = 1; printf "%.0f", g * 1e6 / t / n }')
  [ "$2" -gt 2 ] && echo "$rps $us" >>"$TMP/$1.res"
  echo "  $1: $rps hops/s, gateway $us us/hop ${err}"
}
run A 2; run B 2   # warm-up, not counted
for r in $(seq "$ROUNDS"); do run A "$SECS"; run B "$SECS"; done
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
ra=$(cut -d' ' -f1 "$TMP/A.res" | median); rb=$(cut -d' ' -f1 "$TMP/B.res" | median)
ca=$(cut -d' ' -f2 "$TMP/A.res" | median); cb=$(cut -d' ' -f2 "$TMP/B.res" | median)
echo "$(uptime)"
awk -v ra="$ra" -v rb="$rb" -v ca="$ca" -v cb="$cb" -v n="$ROUNDS" -v c="$CONNS" 'BEGIN {
  printf "medians of %d runs at %d connections: A %.0f hops/s, %.0f us/hop; B %.0f hops/s, %.0f us/hop; B/A hops/s **%.3f**, CPU per hop %.3f\n",
    n, c, ra, ca, rb, cb, rb / ra, cb / ca }'
