#!/bin/sh
# What one echo hop asks of PostgreSQL (issue 32, docs/replicas.md "Where the time goes"): starts
# the echo agent and one replica on a throwaway PostgreSQL with fsync=on (the example `cluster`),
# sends N SendMessage hops one after the other (curl, a new messageId each), and prints per hop:
# the transactions (pg_stat_database.xact_commit), the WAL flushes (pg_stat_wal.wal_sync) and
# each statement the server log shows (log_min_duration_statement = 0), most frequent first.
#
# Usage (from the repository root, after a release build of a2a-gateway, its example `cluster`
# and a2a-agent): a2a-gateway/bench/pg_profile.sh [hops, default 50]
# Environment: CARGO_TARGET_DIR (default target); BENCH_KEEP=1 keeps the temp dir (its
# hops.log is the server log of the measured hops).
set -eu
N=${1:-50}
T=${CARGO_TARGET_DIR:-target}/release
command -v psql >/dev/null || { echo "psql not found (Debian's postgresql-client)" >&2; exit 1; }
TMP=$(mktemp -d)
APID=""; CPID=""
cleanup() {
  for p in $CPID $APID; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  [ "${BENCH_KEEP:-}" = 1 ] && echo "kept $TMP" >&2 || rm -rf "$TMP"
}
trap cleanup EXIT
"$T/a2a-agent" serve --echo --host 127.0.0.1 --port 0 >"$TMP/agent.out" 2>&1 &
APID=$!
for _ in $(seq 100); do grep -q '^LISTENING ' "$TMP/agent.out" && break; sleep 0.1; done
AGENT=$(sed -n 's/^LISTENING //p' "$TMP/agent.out" | head -1)
"$T/examples/cluster" --gateway "$T/a2a-gateway" --agent-url "$AGENT" --replicas 1 --fsync \
  >"$TMP/cl.out" 2>"$TMP/cl.err" &
CPID=$!
for _ in $(seq 600); do grep -q READY "$TMP/cl.out" && break; sleep 0.1; done
grep -q READY "$TMP/cl.out" || { cat "$TMP/cl.out" "$TMP/cl.err" >&2; exit 1; }
PGURL=$(sed -n 's/^POSTGRES //p' "$TMP/cl.out")
GWURL=$(awk '/^REPLICA / {print $3}' "$TMP/cl.out")/a2a/echo
KEY=$(sed -n 's/^export A2A_GATEWAY_KEY=//p' "$TMP/cl.out")
LOG=$(ls -d "${TMPDIR:-/tmp}/a2a-pg-$CPID-"*/server.log | head -1)
q() { psql -X -A -t -q "$PGURL" -c "$1"; }
send() {
  curl -s "$GWURL" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    -H 'A2A-Version: 1.0' -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"$1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"hello bench\"}]}}}"
}
send warm-1 >/dev/null
send warm-2 | grep -q '"result"' || { echo "no JSON-RPC result" >&2; exit 1; }
q "ALTER SYSTEM SET log_min_duration_statement = 0"
q "SELECT pg_reload_conf()" >/dev/null
sleep 0.5
L0=$(wc -l <"$LOG")
COMMITS="SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
S0=$(q "$COMMITS"); W0=$(q "SELECT wal_sync FROM pg_stat_wal")
for i in $(seq "$N"); do send "hop-$i" >/dev/null; done
# Backends report their counters when idle, at most once a second.
sleep 1.5
S1=$(q "$COMMITS"); W1=$(q "SELECT wal_sync FROM pg_stat_wal")
tail -n +"$((L0 + 1))" "$LOG" >"$TMP/hops.log"
# The two counter reads between the snapshots are transactions too.
awk -v n="$N" -v c="$((S1 - S0 - 2))" -v w="$((W1 - W0))" 'BEGIN {
  printf "%d hops: %.2f transactions and %.2f WAL flushes per hop\n", n, c / n, w / n }'
echo "statements per hop:"
grep -o 'execute [^:]*: .*' "$TMP/hops.log" | sed 's/execute [^:]*: //; s/[[:space:]]\+/ /g' | cut -c1-90 \
  | sort | uniq -c | sort -rn | awk -v n="$N" '{c = $1; $1 = ""; printf "%6.2f %s\n", c / n, $0}'
grep -o 'statement: .*' "$TMP/hops.log" | grep -v 'pg_stat_\|xact_commit' | sed 's/[[:space:]]\+/ /g' | cut -c1-90 \
  | sort | uniq -c | sort -rn | awk -v n="$N" '{c = $1; $1 = ""; printf "%6.2f %s\n", c / n, $0}'
