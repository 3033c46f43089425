#!/bin/sh
# The PostgreSQL floor of the echo hop (issue 32, item 4): how many hops per second PostgreSQL
# itself can record on this machine when nothing else runs, against what the whole SQLite
# gateway serves. First the SQLite gateway at 16 connections (the echo agent, the gateway and
# wrk, as in stores.sh); then the gateway's schema on a throwaway cluster (`fsync=on`, the
# example `cluster` with one idle replica) and pgbench alone running pg_floor.sql: a hop's
# rows (the claim, the intent's audit row, the binding with its status, the claim's
# completion, the hop's audit row), B hops per pair of transactions with multi-row
# statements, from 4 clients (the writer's batches in flight). Prints hops/s and PostgreSQL's
# CPU per hop for each B and the ratio to SQLite's hops/s: no gateway, agent or load
# generator shares the CPU with PostgreSQL here, so a ratio below the target says the target
# cannot be reached with these rows on this machine, whatever the gateway does.
#
# Usage (repository root, after `cargo build --release -p a2ars-gateway --bin a2a-gateway
# --example cluster -p a2ars-agent --bin a2a-agent`; needs wrk and PostgreSQL's pgbench):
#   a2a-gateway/bench/pg_floor.sh [seconds per run]
# Environment: CARGO_TARGET_DIR, BENCH_FLOOR_BATCHES (default "1 16 64"), BENCH_FLOOR_CLIENTS (4),
# BENCH_FLOOR_SQL (another pgbench script, e.g. a variant with fewer rows).
set -eu
SECS=${1:-8}
DIR=$(dirname "$0")
T=${CARGO_TARGET_DIR:-target}/release
PGBENCH=$(ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1)
[ -x "$PGBENCH" ] && command -v wrk >/dev/null || { echo "needs wrk and pgbench" >&2; exit 1; }
. "$DIR/servers.sh"
. "$DIR/pg_cluster.sh"
TCK=$(getconf CLK_TCK)

"$T/a2a-agent" serve --echo --host 127.0.0.1 --port 0 >"$TMP/agent.out" 2>"$TMP/agent.err" &
APID=$!; PIDS="$PIDS $APID"
AGENT=$(wait_listening "$TMP/agent.out" "$TMP/agent.err")
KEY=$(bench_key "$T/a2a-gateway" "$TMP/gw.db" "$AGENT")
"$T/a2a-gateway" serve --listen 127.0.0.1:0 --database "$TMP/gw.db" --dev >"$TMP/gw.out" 2>"$TMP/gw.err" &
GPID=$!; PIDS="$PIDS $GPID"
GW=$(wait_listening "$TMP/gw.out" "$TMP/gw.err")/a2a/echo
echo "$(uptime)"
A2A_GATEWAY_KEY=$KEY wrk -t2 -c16 -d2s -s "$DIR/send.lua" "$GW" >/dev/null
A2A_GATEWAY_KEY=$KEY wrk -t2 -c16 -d"${SECS}s" -s "$DIR/send.lua" "$GW" >"$TMP/sqlite.wrk"
SQLITE=$(awk '/^Requests\/sec/ {print $2}' "$TMP/sqlite.wrk")
echo "SQLite gateway, 16 connections: $SQLITE hops/s"
kill "$GPID"; wait "$GPID" 2>/dev/null || true

GWBIN=$T/a2a-gateway
CLBIN=$T/examples/cluster
start_cluster 1
PIDS="$CPID $PIDS"
kill "$APID"
echo "| hops per transaction pair (B) | hops/s | PostgreSQL CPU us/hop | vs SQLite gateway |"
echo "| --- | --- | --- | --- |"
for B in ${BENCH_FLOOR_BATCHES:-1 16 64}; do
  sleep 1
  p0=$(pgcpu "$PGPID")
  "$PGBENCH" -n -h "$PGDIR" -p "$PGPORT" -U postgres -c "${BENCH_FLOOR_CLIENTS:-4}" -j 2 -T "$SECS" \
    -M prepared -D B="$B" -f "${BENCH_FLOOR_SQL:-$DIR/pg_floor.sql}" gateway >"$TMP/pgb" 2>&1 || { cat "$TMP/pgb" >&2; exit 1; }
  sleep 1
  p1=$(pgcpu "$PGPID")
  n=$(awk '/number of transactions actually processed/ {split($NF, a, "/"); print a[1] * '"$B"'}' "$TMP/pgb")
  awk -v n="$n" -v s="$SECS" -v p="$((p1 - p0))" -v t="$TCK" -v b="$B" -v q="$SQLITE" 'BEGIN {
    printf "| %d | %.0f | %.0f | %.2f |\n", b, n / s, p * 1e6 / t / n, n / s / q }'
done
echo "$(uptime)"
