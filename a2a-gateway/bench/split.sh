#!/bin/sh
# The gateway beside the proxy floor, split placement (issue 38; `run.sh` prints this first):
# the echo agent, the gateway and the proxy floor (a2a-gateway/examples/proxy_floor.rs, a
# reverse proxy on the gateway's HTTP stack that reads nothing) all started on CPU 1, so each
# runs one runtime thread, and wrk on CPU 0. ROUNDS rounds (default 3); each round sends
# JSON-RPC and HTTP+JSON SendMessage at 1 and 16 connections and SendStreamingMessage streams
# at 1 connection through the gateway and through the proxy floor, one after the other (the
# order alternates between rounds). Prints per row the median over the rounds of
# gateway/proxy-floor (lowest and highest beside it), the CPU per request of each middle
# process and of the agent behind each (medians; utime+stime from /proc/PID/stat over the run
# divided by wrk's request count).
#
# Usage (from the repository root, after the builds `run.sh` makes):
#   a2a-gateway/bench/split.sh [seconds per run] [rounds]
# Environment as run.sh: CARGO_TARGET_DIR, BENCH_PROFILE, BENCH_GW_BIN, BENCH_GOVERNANCE=1
# (the ten-rule policy and PII redaction of run.sh), BENCH_KEEP=1.
set -eu
SECS=${1:-5}
ROUNDS=${2:-3}
DIR=$(dirname "$0")
TARGET=${CARGO_TARGET_DIR:-target}
PROFILE=${BENCH_PROFILE:-release}
GWBIN=${BENCH_GW_BIN:-$TARGET/$PROFILE/a2a-gateway}
AGBIN=$TARGET/$PROFILE/a2a-agent
PXBIN=$TARGET/$PROFILE/examples/proxy_floor
[ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null || {
  echo "split placement needs taskset and two CPUs" >&2; exit 1; }

. "$DIR/servers.sh"

pinned_pair "$GWBIN" "$AGBIN"
taskset -c 1 "$PXBIN" "$AGENT" >"$TMP/px.out" 2>"$TMP/px.err" &
PPID_=$!; PIDS="$PIDS $PPID_"
PX=$(wait_listening "$TMP/px.out" "$TMP/px.err")
echo "split placement: agent (pid $APID, $(sed -n 's/^WORKERS //p' "$TMP/agent.out") worker), gateway (pid $GPID, $(sed -n 's/^WORKERS //p' "$TMP/gw.out") worker) and proxy floor (pid $PPID_) on CPU 1, wrk on CPU 0; $ROUNDS rounds of ${SECS} s runs; $(uptime)"

TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# run NAME LUA CONNS URL KEY MIDPID -> NAME.res: "rps agent_us_per_req middle_us_per_req"
run() {
  t=$([ "$3" -lt 2 ] && echo 1 || echo 2)
  a0=$(cpu "$APID"); m0=$(cpu "$6")
  A2A_GATEWAY_KEY=$5 taskset -c 0 wrk -t"$t" -c"$3" -d"${SECS}s" -s "$DIR/$2.lua" "$4" >"$TMP/$1.wrk"
  a1=$(cpu "$APID"); m1=$(cpu "$6")
  n=$(awk '/requests in/ {print $1}' "$TMP/$1.wrk")
  awk -v r="$(awk '/^Requests\/sec/ {print $2}' "$TMP/$1.wrk")" -v a="$((a1 - a0))" \
    -v m="$((m1 - m0))" -v n="$n" -v t="$TCK" 'BEGIN {
    if (n < 1) n = 1; printf "%s %.1f %.1f\n", r, a * 1e6 / t / n, m * 1e6 / t / n }' >"$TMP/$1.res"
  if grep -q 'Non-2xx\|Socket errors' "$TMP/$1.wrk"; then
    echo "  $1: $(grep 'Non-2xx\|Socket errors' "$TMP/$1.wrk" | tr '\n' ' ')" >&2
  fi
}
# case NAME LUA CONNS SUFFIX GW_SUFFIX ROUND: the gateway and the proxy floor, in the round's order
case_() {
  if [ $(($6 % 2)) = 1 ]; then
    run "gw-$1-$6" "$2" "$3" "$GW$5" "$KEY" "$GPID"
    run "px-$1-$6" "$2" "$3" "$PX$4" "" "$PPID_"
  else
    run "px-$1-$6" "$2" "$3" "$PX$4" "" "$PPID_"
    run "gw-$1-$6" "$2" "$3" "$GW$5" "$KEY" "$GPID"
  fi
}

SAVE=$SECS; SECS=2
case_ jsonrpc-16 send 16 "" "" 0
SECS=$SAVE
CASES="jsonrpc-1 jsonrpc-16 rest-1 rest-16 stream-1"
r=1
while [ "$r" -le "$ROUNDS" ]; do
  case_ jsonrpc-1 send 1 "" "" "$r"
  case_ jsonrpc-16 send 16 "" "" "$r"
  case_ rest-1 rest 1 /message:send /v1/message:send "$r"
  case_ rest-16 rest 16 /message:send /v1/message:send "$r"
  case_ stream-1 stream 1 "" "" "$r"
  echo "  round $r of $ROUNDS done; $(uptime)" >&2
  r=$((r + 1))
done

echo
echo "| sends / streams | connections | gateway/proxy floor, median (low-high) | req/s gateway / proxy | CPU us/req gateway / proxy | agent CPU us/req behind the gateway / behind the proxy | agent behind gateway / behind proxy |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for c in $CASES; do
  r=1
  while [ "$r" -le "$ROUNDS" ]; do
    read -r grps gac gmc <"$TMP/gw-$c-$r.res"
    read -r prps pac pmc <"$TMP/px-$c-$r.res"
    echo "$grps $prps $gmc $pmc $gac $pac"
    r=$((r + 1))
  done >"$TMP/$c.rounds"
  # Medians of each column over the rounds (the ratio's median from the per-round ratios).
  med() { awk "{print $1}" "$TMP/$c.rounds" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
  ratio=$(med '$1/$2'); lo=$(awk '{print $1/$2}' "$TMP/$c.rounds" | sort -g | head -1)
  hi=$(awk '{print $1/$2}' "$TMP/$c.rounds" | sort -g | tail -1)
  awk -v c="$c" -v r="$ratio" -v lo="$lo" -v hi="$hi" -v g="$(med '$1')" -v p="$(med '$2')" \
    -v gm="$(med '$3')" -v pm="$(med '$4')" -v ga="$(med '$5')" -v pa="$(med '$6')" 'BEGIN {
    split(c, k, "-"); name = (k[1] == "rest" ? "HTTP+JSON" : (k[1] == "stream" ? "JSON-RPC streams" : "JSON-RPC"))
    printf "| %s | %s | **%.2f** (%.2f-%.2f) | %.0f / %.0f | %.0f / %.0f | %.0f / %.0f | %.2f |\n",
      name, k[2], r, lo, hi, g, p, gm, pm, ga, pa, (pa > 0 ? ga / pa : 0) }'
done
echo
echo "Streams: per stream (6 events through the gateway, the same bytes through the proxy)."
