# Sourced by the PostgreSQL bench scripts (stores.sh, pg_floor.sh), after they set TMP, GWBIN,
# CLBIN and AGENT: the example `cluster` (a throwaway PostgreSQL with `fsync=on`, N gateway
# replicas, a load balancer) started and stopped, and PostgreSQL's CPU read from /proc.

# wait_line FILE ERRFILE PREFIX -> prints the rest of the first line starting with PREFIX
wait_line() {
  for _ in $(seq 600); do grep -q "^$3" "$1" && break; sleep 0.1; done
  grep -q "^$3" "$1" || { echo "no $3 line:" >&2; cat "$1" "$2" >&2; exit 1; }
  sed -n "s/^$3//p" "$1" | head -1
}
# start_cluster N -> sets CPID, CLURL (load balancer), REPLICAS (urls), RPIDS, PGKEY, PGDIR
# (the cluster's directory, also its socket's), PGPID and PGPORT
start_cluster() {
  "$CLBIN" --gateway "$GWBIN" --agent-url "$AGENT" --replicas "$1" --fsync >"$TMP/cl$1.out" 2>"$TMP/cl$1.err" &
  CPID=$!
  wait_line "$TMP/cl$1.out" "$TMP/cl$1.err" "READY" >/dev/null
  CLURL=$(sed -n 's/^LOAD_BALANCER //p' "$TMP/cl$1.out")
  REPLICAS=$(awk '/^REPLICA / {print $3}' "$TMP/cl$1.out")
  RPIDS=$(awk '/^REPLICA / {printf "%s ", $4}' "$TMP/cl$1.out")
  PGKEY=$(sed -n 's/^export A2A_GATEWAY_KEY=//p' "$TMP/cl$1.out")
  PGDIR=/tmp/a2a-pg-$CPID-0
  [ -d "$PGDIR" ] || PGDIR=${TMPDIR:-/tmp}/a2a-pg-$CPID-0
  PGPID=$(head -1 "$PGDIR/data/postmaster.pid")
  PGPORT=$(sed -n 4p "$PGDIR/data/postmaster.pid")
}
# stop_cluster: stops the cluster start_cluster started (its replicas and PostgreSQL with it)
stop_cluster() {
  if [ -n "${CPID:-}" ]; then kill "$CPID" 2>/dev/null || true; wait "$CPID" 2>/dev/null || true; CPID=""; fi
}
# pgcpu POSTMASTER -> ticks of the postmaster (with its reaped children) and its live children
pgcpu() {
  own=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat")
  kids=$(for s in /proc/[0-9]*/stat; do awk -v pp="$1" '$4 == pp {print $14 + $15}' "$s" 2>/dev/null; done | awk '{s+=$1} END {print s+0}')
  echo $((own + kids))
}
