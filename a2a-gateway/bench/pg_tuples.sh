#!/bin/sh
# What PostgreSQL reads and writes per hop under load (issue 32, docs/replicas.md "Where the
# time goes"): one replica of the example `cluster` (fsync on) on a throwaway cluster, the echo
# hop sent by wrk at 16 connections for SECS seconds after a 3 s warm-up; prints the CPU per hop
# of the busiest PostgreSQL processes and the database's counters (transactions, tuples
# returned and fetched, per index and per table) after the run, to divide by the hops.
#
# Usage (from the repository root, after `cargo build --release -p a2ars-gateway --bin
# a2a-gateway --example cluster -p a2ars-agent --bin a2a-agent`):
#   a2a-gateway/bench/pg_tuples.sh [seconds]
set -eu
SECS=${1:-10}
T=${CARGO_TARGET_DIR:-target}/release
TMP=$(mktemp -d)
APID=""; CPID=""
cleanup() {
  for p in $CPID $APID; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
"$T/a2a-agent" serve --echo --host 127.0.0.1 --port 0 >"$TMP/a.out" 2>"$TMP/a.err" &
APID=$!
for _ in $(seq 100); do grep -q '^LISTENING ' "$TMP/a.out" && break; sleep 0.1; done
AGENT=$(sed -n 's/^LISTENING //p' "$TMP/a.out")
"$T/examples/cluster" --gateway "$T/a2a-gateway" --agent-url "$AGENT" --replicas 1 --fsync \
  >"$TMP/c.out" 2>"$TMP/c.err" &
CPID=$!
for _ in $(seq 300); do grep -q READY "$TMP/c.out" && break; sleep 0.2; done
URL=$(awk '/^REPLICA / {print $3}' "$TMP/c.out")/a2a/echo
KEY=$(sed -n 's/^export A2A_GATEWAY_KEY=//p' "$TMP/c.out")
DATA=${TMPDIR:-/tmp}/a2a-pg-$CPID-0
PG=$(head -1 "$DATA/data/postmaster.pid")
PORT=$(sed -n 4p "$DATA/data/postmaster.pid")
A2A_GATEWAY_KEY=$KEY wrk -t2 -c16 -d3s -s a2a-gateway/bench/send.lua "$URL" >/dev/null
snap() { for s in /proc/[0-9]*/stat; do awk -v pp="$PG" '$4 == pp {print $1, $14, $15}' "$s" 2>/dev/null; done | sort; }
P="psql -X -q -U postgres -h $DATA -p $PORT -d gateway"
$P -c "SELECT pg_stat_reset()" >/dev/null
snap >"$TMP/s0"
A2A_GATEWAY_KEY=$KEY wrk -t2 -c16 -d"${SECS}s" -s a2a-gateway/bench/send.lua "$URL" >"$TMP/w"
snap >"$TMP/s1"
N=$(awk '/requests in/ {print $1}' "$TMP/w")
TCK=$(getconf CLK_TCK)
echo "hops: $N in ${SECS} s"
echo "busiest PostgreSQL processes (user, system CPU us/hop):"
join "$TMP/s0" "$TMP/s1" | while read -r pid u0 s0 u1 s1; do
  echo "$pid $(( (u1 - u0) * 1000000 / TCK / N )) $(( (s1 - s0) * 1000000 / TCK / N )) $(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-50)"
done | sort -k2 -n -r | head -4
$P -c "SELECT xact_commit, tup_returned, tup_fetched, tup_inserted, tup_updated FROM pg_stat_database WHERE datname = 'gateway'"
$P -c "SELECT relname, indexrelname, idx_scan, idx_tup_read FROM pg_stat_user_indexes ORDER BY idx_tup_read DESC LIMIT 6"
$P -c "SELECT relname, seq_scan, seq_tup_read, n_tup_ins, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables ORDER BY n_tup_ins + n_tup_upd DESC LIMIT 5"
