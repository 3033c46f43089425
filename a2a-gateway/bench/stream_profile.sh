#!/bin/sh
# Stream-only companion of run.sh, for profiling the gateway on streams: the same servers (the
# a2a-agent echo peer, the gateway over a fresh database, BENCH_GOVERNANCE=1 for run.sh's
# ten-rule policy and PII redaction), then stream.lua at 1 connection for SECS seconds directly
# and through the gateway. Prints streams/s and the CPU per stream of both processes; with
# PERF=1 also records the gateway with `perf record -g` during its run (PERF_OUT, default
# perf.data; PERF_ARGS e.g. "--call-graph dwarf,16384 -F 500").
#
# Usage (from the repository root, after `cargo build --profile profiling -p a2ars-gateway
# --bin a2a-gateway -p a2ars-agent --bin a2a-agent`):
#   [BENCH_GOVERNANCE=1] [PERF=1] a2a-gateway/bench/stream_profile.sh [seconds]
set -eu
SECS=${1:-5}
DIR=$(dirname "$0")
TARGET=${CARGO_TARGET_DIR:-target}
PROFILE=${BENCH_PROFILE:-profiling}
GWBIN=$TARGET/$PROFILE/a2a-gateway
AGBIN=$TARGET/$PROFILE/a2a-agent
. "$DIR/servers.sh"
"$AGBIN" serve --echo --host 127.0.0.1 --port 0 >"$TMP/agent.out" 2>"$TMP/agent.err" &
APID=$!; PIDS="$PIDS $APID"
DIRECT=$(wait_listening "$TMP/agent.out" "$TMP/agent.err")
DB=$TMP/gw.db
KEY=$(bench_key "$GWBIN" "$DB" "$DIRECT")
bench_governance "$GWBIN" "$DB"
"$GWBIN" serve --listen 127.0.0.1:0 --database "$DB" --dev >"$TMP/gw.out" 2>"$TMP/gw.err" &
GPID=$!; PIDS="$PIDS $GPID"
GW=$(wait_listening "$TMP/gw.out" "$TMP/gw.err")/a2a/echo
A2A_GATEWAY_KEY=$KEY wrk -t1 -c1 -d2s -s "$DIR/stream.lua" "$GW" >/dev/null
TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
for target in direct gateway; do
  url=$DIRECT; key=""
  [ "$target" = gateway ] && { url=$GW; key=$KEY; }
  g0=$(cpu "$GPID"); a0=$(cpu "$APID")
  PP=""
  if [ "${PERF:-}" = 1 ] && [ "$target" = gateway ]; then
    # shellcheck disable=SC2086
    perf record ${PERF_ARGS:--g -F 2000} -p "$GPID" -o "${PERF_OUT:-perf.data}" -- sleep "$SECS" >/dev/null 2>&1 &
    PP=$!
  fi
  A2A_GATEWAY_KEY=$key wrk -t1 -c1 -d"${SECS}s" -s "$DIR/stream.lua" "$url" >"$TMP/$target.wrk"
  [ -n "$PP" ] && wait "$PP"
  g1=$(cpu "$GPID"); a1=$(cpu "$APID")
  n=$(awk '/requests in/ {print $1}' "$TMP/$target.wrk")
  awk -v t="$target" -v r="$(awk '/^Requests\/sec/ {print $2}' "$TMP/$target.wrk")" -v n="$n" \
    -v g="$((g1 - g0))" -v a="$((a1 - a0))" -v k="$TCK" 'BEGIN {
    printf "%s: %.0f streams/s; CPU us/stream: gateway %.0f, agent %.0f\n", t, r, g*1e6/k/n, a*1e6/k/n }'
done
echo "$(uptime)"
