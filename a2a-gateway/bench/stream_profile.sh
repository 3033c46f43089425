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
TMP=$(mktemp -d)
APID=""; GPID=""
cleanup() {
  for p in $GPID $APID; do kill "$p" 2>/dev/null || true; done
  for p in $GPID $APID; do wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
wait_listening() {
  for _ in $(seq 100); do grep -q '^LISTENING' "$1" && break; sleep 0.1; done
  sed -n 's/^LISTENING //p' "$1" | head -1
}
"$AGBIN" serve --echo --host 127.0.0.1 --port 0 >"$TMP/agent.out" 2>"$TMP/agent.err" &
APID=$!
DIRECT=$(wait_listening "$TMP/agent.out")
DB=$TMP/gw.db
"$GWBIN" admin --database "$DB" workspace-create bench >/dev/null
"$GWBIN" admin --database "$DB" agent-add bench echo "$DIRECT" >/dev/null
KEY=$("$GWBIN" admin --database "$DB" key-create bench 2>/dev/null | grep -o 'a2agw_[A-Za-z0-9_-]*' | head -1)
if [ "${BENCH_GOVERNANCE:-}" = 1 ]; then
  # run.sh's policy document, verbatim.
  sed -n "/<<'POLICY'/,/^POLICY/p" "$DIR/run.sh" | sed '1d;$d' >"$TMP/policy.json"
  "$GWBIN" admin --database "$DB" policy-set bench "$TMP/policy.json" >/dev/null
  "$GWBIN" admin --database "$DB" pii-set bench '{"default_action":"redact"}' >/dev/null
  echo "governance: ten-rule policy and PII redaction on"
fi
"$GWBIN" serve --listen 127.0.0.1:0 --database "$DB" --dev >"$TMP/gw.out" 2>"$TMP/gw.err" &
GPID=$!
GW=$(wait_listening "$TMP/gw.out")/a2a/echo
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
