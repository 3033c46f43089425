#!/bin/sh
# Gateway benchmark: echo SendMessage through the gateway vs directly to the same peer (the
# a2a-agent binary, `serve --echo`, its own process), same load generator (wrk + Lua body), same
# run: A2A 1.0 JSON-RPC and HTTP+JSON at 1 and 16 connections, then SendStreamingMessage streams
# (events/s) both ways at 1 connection. Prints the ratios gateway/direct, the added p50 latency
# and the server CPU per request (utime+stime of each process over a run, from /proc/PID/stat,
# divided by wrk's request count). Everything on 127.0.0.1, ports picked by the kernel (port 0).
#
# Usage (from the repository root; `cargo xtask bench [--secs N]` runs this):
#   a2a-gateway/bench/run.sh [seconds per run] [--no-build]
# Environment: CARGO_TARGET_DIR (default target), as for cargo; BENCH_PROFILE (default release;
# `profiling` = release code with debug info and symbols, for `perf record`); BENCH_KEEP=1 keeps the temp dir;
# BENCH_PRELOAD=/path/lib.so runs both servers with LD_PRELOAD (e.g. to compare allocators);
# BENCH_GOVERNANCE=1 turns on a ten-rule policy and PII redaction (docs/benchmarks.md);
# BENCH_GW_ENV="VAR=value ..." sets environment variables of the gateway process only (e.g.
# TOKIO_WORKER_THREADS=1); BENCH_GW_BIN=/path/a2a-gateway runs that gateway binary instead of
# the build's (a saved binary of an earlier commit: before/after in one session).
# Placement (BENCH_PLACEMENT=0 leaves it out): at 1 connection the figures depend on where the
# kernel runs the servers relative to wrk (see a2a-agent/bench/run.sh and docs/benchmarks.md);
# after the unpinned runs the 1-connection unary rows are run again pinned with taskset: "split" =
# agent, gateway and proxy floor on CPU 1, wrk on CPU 0; "shared" = everything on CPU 0.
# First of all (BENCH_SPLIT=0 leaves it out) it runs split.sh: the gateway beside the proxy floor
# with the servers on CPU 1 and wrk on CPU 0, medians of BENCH_ROUNDS rounds (default 3) of
# BENCH_SPLIT_SECS-second runs (default 5), the headline figures of issue 38.
# wrk comes from Debian (`apt-get install -y wrk`); the script installs it when it runs as root.
set -eu
SECS=${1:-10}
DIR=$(dirname "$0")
TARGET=${CARGO_TARGET_DIR:-target}
PROFILE=${BENCH_PROFILE:-release}
if [ "${2:-}" != "--no-build" ]; then
  cargo build --profile "$PROFILE" -p a2ars-gateway --bin a2a-gateway --example proxy_floor -p a2ars-agent --bin a2a-agent
fi
GWBIN=${BENCH_GW_BIN:-$TARGET/$PROFILE/a2a-gateway}
AGBIN=$TARGET/$PROFILE/a2a-agent
PXBIN=$TARGET/$PROFILE/examples/proxy_floor
if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y wrk >/dev/null || { echo "apt-get install -y wrk failed" >&2; exit 1; }
  else
    echo "wrk not found (apt-get install -y wrk)" >&2; exit 1
  fi
fi

# The headline: the gateway beside the proxy floor in the split placement, medians of rounds
# (split.sh; BENCH_SPLIT=0 leaves it out, BENCH_ROUNDS and BENCH_SPLIT_SECS size it).
if [ "${BENCH_SPLIT:-1}" != 0 ]; then
  sh "$DIR/split.sh" "${BENCH_SPLIT_SECS:-5}" "${BENCH_ROUNDS:-3}"
  echo
fi

. "$DIR/servers.sh"

env ${BENCH_PRELOAD:+LD_PRELOAD=$BENCH_PRELOAD} "$AGBIN" serve --echo --host 127.0.0.1 --port 0 >"$TMP/agent.out" 2>"$TMP/agent.err" &
APID=$!; PIDS="$PIDS $APID"
DIRECT=$(wait_listening "$TMP/agent.out" "$TMP/agent.err")
DB=$TMP/gw.db
KEY=$(bench_key "$GWBIN" "$DB" "$DIRECT")
bench_governance "$GWBIN" "$DB"
env ${BENCH_PRELOAD:+LD_PRELOAD=$BENCH_PRELOAD} ${BENCH_GW_ENV:-} "$GWBIN" serve --listen 127.0.0.1:0 --database "$DB" --dev >"$TMP/gw.out" 2>"$TMP/gw.err" &
GPID=$!; PIDS="$PIDS $GPID"
GW=$(wait_listening "$TMP/gw.out" "$TMP/gw.err")/a2a/echo
# The proxy floor (a2a-gateway/examples/proxy_floor.rs): a plain reverse proxy on the gateway's
# HTTP stack in front of the same agent, reading nothing: the cost of any extra HTTP hop here.
env ${BENCH_PRELOAD:+LD_PRELOAD=$BENCH_PRELOAD} "$PXBIN" "$DIRECT" >"$TMP/px.out" 2>"$TMP/px.err" &
PPID_=$!; PIDS="$PIDS $PPID_"
PX=$(wait_listening "$TMP/px.out" "$TMP/px.err")
echo "direct $DIRECT (a2a-agent pid $APID), gateway $GW (pid $GPID), proxy floor $PX (pid $PPID_); $(uptime)"

# sanity: both answer each benchmark body with a result (wrk only sees HTTP statuses)
SEND='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}}'
REST='{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}'
for u in "$DIRECT" "$GW" "$PX"; do
  curl -s "$u" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d "$SEND" \
    | grep -q '"result"' || { echo "no JSON-RPC result from $u" >&2; exit 1; }
done
for u in "$DIRECT/message:send" "$GW/v1/message:send" "$PX/message:send"; do
  curl -s "$u" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/a2a+json' -H 'A2A-Version: 1.0' -d "$REST" \
    | grep -q '"task"\|"message"' || { echo "no HTTP+JSON answer from $u" >&2; exit 1; }
done

TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# ms from a wrk latency figure (12.3us / 1.2ms / 1.5s)
ms() { echo "$1" | awk '{v=$1; if (v ~ /us$/) {sub(/us$/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v*=1000}; printf "%.3f", v}'; }
# run NAME LUA CONNS URL KEY [MIDPID] -> RES file with "rps p50ms p99ms agent_us_per_req
# middle_us_per_req" (the middle process: the gateway, or MIDPID, e.g. the proxy floor)
run() {
  t=$([ "$3" -lt 2 ] && echo 1 || echo 2)
  mid=${6:-$GPID}
  a0=$(cpu "$APID"); g0=$(cpu "$mid")
  A2A_GATEWAY_KEY=$5 ${WRAP:-} wrk -t"$t" -c"$3" -d"${SECS}s" --latency -s "$DIR/$2.lua" "$4" >"$TMP/$1.wrk"
  a1=$(cpu "$APID"); g1=$(cpu "$mid")
  rps=$(awk '/^Requests\/sec/ {print $2}' "$TMP/$1.wrk")
  n=$(awk '/requests in/ {print $1}' "$TMP/$1.wrk")
  p50=$(ms "$(awk '$1=="50%" {print $2}' "$TMP/$1.wrk")")
  p99=$(ms "$(awk '$1=="99%" {print $2}' "$TMP/$1.wrk")")
  err=$(awk '/Non-2xx|Socket errors/ {print}' "$TMP/$1.wrk" | tr '\n' ' ')
  cpus=$(awk -v a="$((a1 - a0))" -v g="$((g1 - g0))" -v n="$n" -v t="$TCK" 'BEGIN {
    if (n < 1) n = 1; printf "%.0f %.0f", a * 1e6 / t / n, g * 1e6 / t / n }')
  echo "$rps $p50 $p99 $cpus" >"$TMP/$1.res"
  echo "  $1: $rps req/s, p50 $p50 ms, p99 $p99 ms, CPU us/req agent gateway: $cpus ${err}" >&2
}

# warm-up (card cache, connection pool, SQLite pages), 2 s each, not reported
SAVE=$SECS; SECS=2
run warm-gw send 1 "$GW" "$KEY"; run warm-direct send 1 "$DIRECT" ""; run warm-proxy send 1 "$PX" "" "$PPID_"
SECS=$SAVE

for c in 1 16; do
  run "direct-jsonrpc-$c" send "$c" "$DIRECT" ""
  run "gw-jsonrpc-$c" send "$c" "$GW" "$KEY"
  run "direct-rest-$c" rest "$c" "$DIRECT/message:send" ""
  run "gw-rest-$c" rest "$c" "$GW/v1/message:send" "$KEY"
  run "proxy-jsonrpc-$c" send "$c" "$PX" "" "$PPID_"
  run "proxy-rest-$c" rest "$c" "$PX/message:send" "" "$PPID_"
done
PLACED=""
if [ "${BENCH_PLACEMENT:-1}" != 0 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  PLACED=1
  pin() { for p in $APID $GPID $PPID_; do taskset -a -p -c "$1" "$p" >/dev/null; done; }
  for pl in split shared; do
    if [ "$pl" = split ]; then pin 1; else pin 0; fi
    WRAP="taskset -c 0"
    for b in jsonrpc rest; do
      if [ "$b" = rest ]; then lua=rest; sfx=/message:send; gsfx=/v1/message:send; else lua=send; sfx=""; gsfx=""; fi
      run "direct-$b-1-$pl" "$lua" 1 "$DIRECT$sfx" ""
      run "gw-$b-1-$pl" "$lua" 1 "$GW$gsfx" "$KEY"
      run "proxy-$b-1-$pl" "$lua" 1 "$PX$sfx" "" "$PPID_"
    done
  done
  pin "0-$(($(nproc) - 1))"; WRAP=""
fi
run stream-direct stream 1 "$DIRECT" ""
run stream-gw stream 1 "$GW" "$KEY"
run stream-proxy stream 1 "$PX" "" "$PPID_"

# events per stream (SSE `data:` lines of one echo stream reply), both ways; messageIds of their
# own (the sanity sends above used m1: a repeat with another message is refused as InvalidParams)
body() { echo '{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"'"$1"'","role":"ROLE_USER","parts":[{"text":"stream hello"}]}}}'; }
EVD=$(curl -sN "$DIRECT" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d "$(body ev-direct)" | grep -c "^data:" || true)
EVG=$(curl -sN "$GW" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d "$(body ev-gateway)" | grep -c "^data:" || true)
rss() { awk '/VmRSS/ {print $2 " kB"}' "/proc/$1/status"; }
echo "RSS after the runs: gateway $(rss "$GPID"), agent $(rss "$APID"); $(uptime)"

echo
echo "| binding | connections | direct req/s | gateway req/s | ratio | direct p50 / p99 | gateway p50 / p99 | added p50 | CPU us/req: agent direct / agent via gw / gateway | proxy floor req/s | proxy/direct | CPU us/req: proxy |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for b in jsonrpc rest; do
  for c in 1 16; do
    read -r drps dp50 dp99 dac _ <"$TMP/direct-$b-$c.res"
    read -r grps gp50 gp99 gac ggc <"$TMP/gw-$b-$c.res"
    read -r prps _ _ _ pgc <"$TMP/proxy-$b-$c.res"
    awk -v b="$b" -v c="$c" -v d="$drps" -v g="$grps" -v dp50="$dp50" -v dp99="$dp99" -v gp50="$gp50" -v gp99="$gp99" \
      -v dac="$dac" -v gac="$gac" -v ggc="$ggc" -v p="$prps" -v pgc="$pgc" 'BEGIN {
      printf "| %s | %d | %.0f | %.0f | **%.2f** | %.2f / %.2f ms | %.2f / %.2f ms | +%.2f ms | %d / %d / %d | %.0f | %.2f | %d |\n",
        (b == "rest" ? "HTTP+JSON" : "JSON-RPC"), c, d, g, g/d, dp50, dp99, gp50, gp99, gp50-dp50, dac, gac, ggc, p, p/d, pgc }'
  done
done
read -r sd sdp50 _ <"$TMP/stream-direct.res"
read -r sg sgp50 _ <"$TMP/stream-gw.res"
read -r sp _ <"$TMP/stream-proxy.res"
echo
awk -v sd="$sd" -v sg="$sg" -v ed="$EVD" -v eg="$EVG" -v dp="$sdp50" -v gp="$sgp50" -v sp="$sp" 'BEGIN {
  printf "stream (JSON-RPC, 1 connection, sequential): direct %.0f streams/s x %d events = %.0f events/s (p50 %.2f ms); gateway %.0f streams/s x %d events = %.0f events/s (p50 %.2f ms); ratio **%.2f**; proxy floor %.0f streams/s, proxy/direct %.2f\n",
    sd, ed, sd*ed, dp, sg, eg, sg*eg, gp, (sg*eg)/(sd*ed), sp, sp/sd }'
if [ -n "$PLACED" ]; then
  echo
  echo "1 connection, pinned (split: agent, gateway and proxy floor on CPU 1, wrk on CPU 0; shared: all on CPU 0):"
  echo
  echo "| binding | placement | direct req/s | gateway req/s | ratio | added p50 | CPU us/req: agent via gw / gateway | proxy floor req/s | proxy/direct |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for b in jsonrpc rest; do
    for pl in split shared; do
      read -r drps dp50 _ _ _ <"$TMP/direct-$b-1-$pl.res"
      read -r grps gp50 _ gac ggc <"$TMP/gw-$b-1-$pl.res"
      read -r prps _ _ _ _ <"$TMP/proxy-$b-1-$pl.res"
      awk -v b="$b" -v pl="$pl" -v d="$drps" -v g="$grps" -v dp50="$dp50" -v gp50="$gp50" -v gac="$gac" -v ggc="$ggc" -v p="$prps" 'BEGIN {
        printf "| %s | %s | %.0f | %.0f | **%.2f** | +%.2f ms | %d / %d | %.0f | %.2f |\n",
          (b == "rest" ? "HTTP+JSON" : "JSON-RPC"), pl, d, g, g/d, gp50-dp50, gac, ggc, p, p/d }'
    done
  done
fi
