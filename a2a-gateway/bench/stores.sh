#!/bin/sh
# Store benchmark (issue 32): the echo hop (A2A 1.0 JSON-RPC SendMessage, a new messageId per
# request) through one gateway on SQLite and through one gateway on PostgreSQL, in the same run
# against the same a2a-agent echo process, at 1 and 16 connections; then three replicas on
# PostgreSQL behind the loopback load balancer (the example `cluster`, tests/common/lb.rs).
# Prints hops/s, gateway CPU per hop (utime+stime of the gateway process(es) over the run, from
# /proc/PID/stat, divided by wrk's request count) and PostgreSQL CPU per hop (the same over the
# postmaster and every postgres process it forked: live children's utime+stime plus the
# postmaster's own and its reaped children's), and the ratio PostgreSQL/SQLite.
# PostgreSQL is a throwaway cluster (a2a_pg::testing::TempCluster) with fsync=on, so that both
# stores make their writes durable; SQLite runs with the gateway's own settings.
#
# Usage (from the repository root; `cargo xtask bench --store postgres [--secs N]` runs this):
#   a2a-gateway/bench/stores.sh [seconds per run] [--no-build]
# Environment: CARGO_TARGET_DIR (default target); BENCH_KEEP=1 keeps the temp dir;
# BENCH_PROFILE (default release; `dev` checks the script quickly, its figures mean nothing).
set -eu
SECS=${1:-10}
DIR=$(dirname "$0")
TARGET=${CARGO_TARGET_DIR:-target}
PROFILE=${BENCH_PROFILE:-release}
OUT=$([ "$PROFILE" = dev ] && echo debug || echo "$PROFILE")
if [ "${2:-}" != "--no-build" ]; then
  cargo build --profile "$PROFILE" -p a2ars-gateway --bin a2a-gateway --example cluster -p a2ars-agent --bin a2a-agent
fi
GWBIN=$TARGET/$OUT/a2a-gateway
AGBIN=$TARGET/$OUT/a2a-agent
CLBIN=$TARGET/$OUT/examples/cluster
command -v wrk >/dev/null || { echo "wrk not found (apt-get install -y wrk)" >&2; exit 1; }

TMP=$(mktemp -d)
APID=""; GPID=""; CPID=""
cleanup() {
  stop_cluster
  for p in $GPID $APID; do kill "$p" 2>/dev/null || true; done
  for p in $GPID $APID; do wait "$p" 2>/dev/null || true; done
  [ "${BENCH_KEEP:-}" = 1 ] && echo "kept $TMP" >&2 || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP PIPE
. "$DIR/pg_cluster.sh"

"$AGBIN" serve --echo --host 127.0.0.1 --port 0 >"$TMP/agent.out" 2>"$TMP/agent.err" &
APID=$!
AGENT=$(wait_line "$TMP/agent.out" "$TMP/agent.err" "LISTENING ")
DB=$TMP/gw.db
"$GWBIN" admin --database "$DB" workspace-create bench >/dev/null
"$GWBIN" admin --database "$DB" agent-add bench echo "$AGENT" --dev >/dev/null
SQLKEY=$("$GWBIN" admin --database "$DB" key-create bench | tail -n 1)
"$GWBIN" serve --listen 127.0.0.1:0 --database "$DB" --dev >"$TMP/gw.out" 2>"$TMP/gw.err" &
GPID=$!
SQLGW=$(wait_line "$TMP/gw.out" "$TMP/gw.err" "LISTENING ")/a2a/echo
echo "agent $AGENT (pid $APID), SQLite gateway $SQLGW (pid $GPID); $(uptime)"

TCK=$(getconf CLK_TCK)
# cpu PID... -> utime+stime (ticks) summed over the processes
cpu() { for p in "$@"; do awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0; done | awk '{s+=$1} END {print s+0}'; }
# run NAME CONNS URL KEY "GATEWAY PIDS" [POSTMASTER] -> RES file: hops/s, gw us/hop, pg us/hop
run() {
  t=$([ "$2" -lt 2 ] && echo 1 || echo 2)
  g0=$(cpu $5); p0=$([ -n "${6:-}" ] && pgcpu "$6" || echo 0)
  A2A_GATEWAY_KEY=$4 wrk -t"$t" -c"$2" -d"${SECS}s" --latency -s "$DIR/send.lua" "$3" >"$TMP/$1.wrk"
  g1=$(cpu $5); p1=$([ -n "${6:-}" ] && pgcpu "$6" || echo 0)
  rps=$(awk '/^Requests\/sec/ {print $2}' "$TMP/$1.wrk")
  n=$(awk '/requests in/ {print $1}' "$TMP/$1.wrk")
  err=$(awk '/Non-2xx|Socket errors/ {print}' "$TMP/$1.wrk" | tr '\n' ' ')
  cpus=$(awk -v g="$((g1 - g0))" -v p="$((p1 - p0))" -v n="$n" -v t="$TCK" 'BEGIN {
    if (n < 1) n = 1; printf "%.0f %.0f", g * 1e6 / t / n, p * 1e6 / t / n }')
  echo "$rps $cpus" >"$TMP/$1.res"
  echo "  $1: $rps hops/s, CPU us/hop gateway postgres: $cpus ${err}" >&2
}
SEND='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}}'
check() {
  curl -s "$1" -H "Authorization: Bearer $2" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d "$SEND" \
    | grep -q '"result"' || { echo "no JSON-RPC result from $1" >&2; exit 1; }
}

check "$SQLGW" "$SQLKEY"
start_cluster 1
PGGW=$REPLICAS/a2a/echo
check "$PGGW" "$PGKEY"
echo "PostgreSQL gateway $PGGW (pid $RPIDS, postmaster $PGPID)"
# warm-up, 2 s each, not reported
SAVE=$SECS; SECS=2
run warm-sqlite 1 "$SQLGW" "$SQLKEY" "$GPID"; run warm-pg 1 "$PGGW" "$PGKEY" "$RPIDS" "$PGPID"
SECS=$SAVE
for c in 1 16; do
  run "sqlite-$c" "$c" "$SQLGW" "$SQLKEY" "$GPID"
  run "pg-$c" "$c" "$PGGW" "$PGKEY" "$RPIDS" "$PGPID"
done
stop_cluster

start_cluster 3
LBGW=$CLURL/a2a/echo
check "$LBGW" "$PGKEY"
echo "3 replicas (pids $RPIDS) behind the load balancer $LBGW (pid $CPID), postmaster $PGPID"
SAVE=$SECS; SECS=2
run warm-lb 16 "$LBGW" "$PGKEY" "$RPIDS" "$PGPID"
SECS=$SAVE
for c in 1 16; do
  run "lb-$c" "$c" "$LBGW" "$PGKEY" "$RPIDS" "$PGPID"
done
stop_cluster
echo "$(uptime)"

echo
echo "| store | connections | hops/s | gateway CPU us/hop | PostgreSQL CPU us/hop | hops/s vs SQLite |"
echo "| --- | --- | --- | --- | --- | --- |"
for c in 1 16; do
  read -r srps sg _ <"$TMP/sqlite-$c.res"
  read -r prps pg pp <"$TMP/pg-$c.res"
  awk -v c="$c" -v s="$srps" -v sg="$sg" -v p="$prps" -v pg="$pg" -v pp="$pp" 'BEGIN {
    printf "| SQLite | %d | %.0f | %d | - | 1.00 |\n| PostgreSQL | %d | %.0f | %d | %d | **%.2f** |\n", c, s, sg, c, p, pg, pp, p/s }'
done
echo
echo "3 replicas on PostgreSQL behind the load balancer (gateway CPU: the three replicas together):"
echo
echo "| connections | hops/s | gateway CPU us/hop | PostgreSQL CPU us/hop | hops/s vs one SQLite gateway |"
echo "| --- | --- | --- | --- | --- |"
for c in 1 16; do
  read -r srps _ _ <"$TMP/sqlite-$c.res"
  read -r lrps lg lp <"$TMP/lb-$c.res"
  awk -v c="$c" -v s="$srps" -v l="$lrps" -v lg="$lg" -v lp="$lp" 'BEGIN {
    printf "| %d | %.0f | %d | %d | %.2f |\n", c, l, lg, lp, l/s }'
done
