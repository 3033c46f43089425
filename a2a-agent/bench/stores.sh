#!/bin/sh
# Echo SendMessage benchmark of the agent on each task store, in the same run: memory, SQLite
# and PostgreSQL (issue 33). Each store gets its own `a2a-agent serve --echo` process, loaded in
# turn with wrk over JSON-RPC at 1 and 16 connections (BENCH_CONNS to change). Per run: req/s,
# p50/p99, the agent's CPU per request (utime+stime from /proc/PID/stat over the run divided by
# wrk's request count) and, for PostgreSQL, the CPU per request of the cluster's processes (the
# postmaster, its live children, and the children that ended, from /proc), the statements and
# transactions per request (pg_stat_statements' calls and pg_stat_database's xact_commit over the
# run). The ratio column is each store's req/s over SQLite's at the same connection count.
#
# PostgreSQL is a throwaway cluster the script starts as `a2a_pg::testing::TempCluster` does
# (initdb into a temporary directory as the `postgres` user when run as root, pg_ctl on a free
# loopback port, fsync off, trust authentication) and stops (immediate) on exit. SQLite is a file
# in the same temporary directory (WAL, synchronous=NORMAL, as the store opens it). Everything on
# 127.0.0.1.
#
# Usage (repository root): a2a-agent/bench/stores.sh [path/to/release/a2a-agent] [seconds per run]
#   cargo build --release -p a2ars-agent --features cli --bin a2a-agent
# Env: A2A_PG_BIN (directory of initdb/pg_ctl/psql; default the newest /usr/lib/postgresql/*/bin),
# BENCH_CONNS (default "1 16").
set -eu
BIN=${1:-target/release/a2a-agent}
SECS=${2:-10}
CONNS=${BENCH_CONNS:-1 16}
DIR=$(cd "$(dirname "$0")" && pwd)
command -v wrk >/dev/null || { echo "wrk not found (apt-get install -y wrk)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "no agent binary at $BIN" >&2; exit 1; }
PGBIN=${A2A_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PGBIN/initdb" ] || { echo "no initdb (install Debian's postgresql or set A2A_PG_BIN)" >&2; exit 1; }
TMP=$(mktemp -d)
chmod 755 "$TMP"
MPID=""; SPID=""; PPID_AGENT=""; PGUP=""
AS=""
if [ "$(id -u)" = 0 ]; then AS="runuser -u postgres --"; fi
cleanup() {
  for p in $MPID $SPID $PPID_AGENT; do kill "$p" 2>/dev/null || true; done
  [ -n "$PGUP" ] && $AS "$PGBIN/pg_ctl" -D "$TMP/pg/data" -w -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP PIPE

# The cluster.
mkdir "$TMP/pg"
[ -n "$AS" ] && chown postgres: "$TMP/pg"
$AS "$PGBIN/initdb" -D "$TMP/pg/data" -U postgres --auth=trust -E UTF8 --no-locale --no-sync >/dev/null
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
$AS "$PGBIN/pg_ctl" -D "$TMP/pg/data" -l "$TMP/pg/server.log" -w -t 60 -o \
  "-p $PORT -c listen_addresses=127.0.0.1 -k $TMP/pg -c fsync=off -c max_connections=200 -c shared_preload_libraries=pg_stat_statements" \
  start >/dev/null
PGUP=1
URL="postgres://postgres@127.0.0.1:$PORT/postgres"
psql() { "$PGBIN/psql" -X -q -t -A -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -c "$1"; }
psql "CREATE EXTENSION pg_stat_statements" >/dev/null
PM=$(head -1 "$TMP/pg/data/postmaster.pid")

listening() {
  for _ in $(seq 150); do grep -q '^LISTENING' "$1" && break; sleep 0.1; done
  sed -n 's/^LISTENING //p' "$1" | head -1
}
"$BIN" serve --echo --host 127.0.0.1 --port 0 >"$TMP/memory.out" 2>"$TMP/memory.err" &
MPID=$!
"$BIN" serve --echo --host 127.0.0.1 --port 0 --sqlite-path "$TMP/tasks.db" >"$TMP/sqlite.out" 2>"$TMP/sqlite.err" &
SPID=$!
"$BIN" serve --echo --host 127.0.0.1 --port 0 --store "$URL" >"$TMP/postgres.out" 2>"$TMP/postgres.err" &
PPID_AGENT=$!
MURL=$(listening "$TMP/memory.out"); SURL=$(listening "$TMP/sqlite.out"); PURL=$(listening "$TMP/postgres.out")
for s in memory sqlite postgres; do
  grep -q '^LISTENING' "$TMP/$s.out" || { echo "the $s agent did not start:" >&2; cat "$TMP/$s.err" >&2; exit 1; }
done
echo "memory $MURL (pid $MPID), sqlite $SURL (pid $SPID), postgres $PURL (pid $PPID_AGENT, cluster pid $PM port $PORT); $(uptime)"

TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# The cluster's CPU ticks: the postmaster (with its ended children) and its live children.
pgcpu() {
  for f in /proc/[0-9]*/stat; do cat "$f" 2>/dev/null; done |
    awk -v pm="$PM" '{ sub(/^.*\) /, ""); if ($2 == pm) s += $12 + $13 }
                     END { printf "%d\n", s }' >"$TMP/pgc"
  awk '{print $14 + $15 + $16 + $17}' "/proc/$PM/stat" | awk -v c="$(cat "$TMP/pgc")" '{print $1 + c}'
}
pgstats() { psql "SELECT (SELECT COALESCE(sum(calls),0) FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat%'), (SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres')" | tr '|' ' '; }
ms() { echo "$1" | awk '{v=$1; if (v ~ /us$/) {sub(/us$/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v*=1000}; printf "%.3f", v}'; }
# run NAME PID CONNS URL [pg] -> NAME.res "rps p50 p99 cpu_us pg_cpu_us stmts xacts"
run() {
  t=$([ "$3" -lt 2 ] && echo 1 || echo 2)
  c0=$(cpu "$2"); p0=0; s0="0 0"
  if [ -n "${5:-}" ]; then p0=$(pgcpu); s0=$(pgstats); fi
  wrk -t"$t" -c"$3" -d"${SECS}s" --latency -s "$DIR/jsonrpc.lua" "$4" >"$TMP/$1.wrk"
  c1=$(cpu "$2"); p1=0; s1="0 0"
  if [ -n "${5:-}" ]; then p1=$(pgcpu); s1=$(pgstats); fi
  rps=$(awk '/^Requests\/sec/ {print $2}' "$TMP/$1.wrk")
  n=$(awk '/requests in/ {print $1}' "$TMP/$1.wrk")
  p50=$(ms "$(awk '$1=="50%" {print $2}' "$TMP/$1.wrk")")
  p99=$(ms "$(awk '$1=="99%" {print $2}' "$TMP/$1.wrk")")
  awk -v c="$((c1 - c0))" -v p="$((p1 - p0))" -v s0="$s0" -v s1="$s1" -v n="$n" -v t="$TCK" \
    -v rps="$rps" -v p50="$p50" -v p99="$p99" 'BEGIN {
      if (n < 1) n = 1; split(s0, a, " "); split(s1, b, " ");
      printf "%s %s %s %.0f %.0f %.2f %.2f\n", rps, p50, p99, c * 1e6 / t / n, p * 1e6 / t / n,
        (b[1] - a[1]) / n, (b[2] - a[2]) / n }' >"$TMP/$1.res"
  read -r _ _ _ us pus st xa <"$TMP/$1.res"
  echo "  $1: $rps req/s, p50 $p50 ms, p99 $p99 ms, agent CPU $us us/req$([ -n "${5:-}" ] && echo ", postgres CPU $pus us/req, $st statements and $xa commits per request")" >&2
}
# warm-up, not reported
SAVE=$SECS; SECS=2
run warm-memory "$MPID" 1 "$MURL"; run warm-sqlite "$SPID" 1 "$SURL"; run warm-postgres "$PPID_AGENT" 1 "$PURL" pg
SECS=$SAVE
for c in $CONNS; do
  run "memory-$c" "$MPID" "$c" "$MURL"
  run "sqlite-$c" "$SPID" "$c" "$SURL"
  run "postgres-$c" "$PPID_AGENT" "$c" "$PURL" pg
done
echo "after the runs: $(uptime)"
echo
echo "| store | connections | req/s | vs SQLite | p50 / p99 | agent CPU us/req | postgres CPU us/req | statements / commits per req |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for c in $CONNS; do
  read -r srps _ _ _ _ _ _ <"$TMP/sqlite-$c.res"
  for s in memory sqlite postgres; do
    read -r rps p50 p99 us pus st xa <"$TMP/$s-$c.res"
    awk -v s="$s" -v c="$c" -v r="$rps" -v sr="$srps" -v p50="$p50" -v p99="$p99" -v us="$us" \
      -v pus="$pus" -v st="$st" -v xa="$xa" 'BEGIN {
      pg = (s == "postgres");
      printf "| %s | %d | %.0f | **%.2f** | %.2f / %.2f ms | %d | %s | %s |\n", s, c, r, r / sr, p50, p99, us,
        (pg ? sprintf("%d", pus) : "-"), (pg ? sprintf("%.2f / %.2f", st, xa) : "-") }'
  done
done
echo
echo "PostgreSQL statements over the whole run (pg_stat_statements, most called first):"
echo
psql "SELECT calls || ' | ' || regexp_replace(left(query, 110), '\s+', ' ', 'g') FROM pg_stat_statements
      WHERE query NOT LIKE '%pg_stat%' ORDER BY calls DESC LIMIT 8"
