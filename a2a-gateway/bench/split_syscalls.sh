#!/bin/sh
# The gateway's system calls per hop in the split placement (issue 38): the echo agent and the
# gateway on CPU 1 (one runtime thread each), wrk on CPU 0 at 16 connections (JSON-RPC sends,
# send.lua). During the run, `perf stat` counts the gateway's system calls, context switches
# and CPU over 4 s, then `perf stat --per-thread` splits the next 4 s by thread (CPU, system
# calls by call, context switches; tracepoint counts, no tracing that slows the gateway). Per
# hop: the counts over 4 s of wrk's mean rate.
#
# Usage (repository root, after the release builds run.sh makes; needs perf and wrk):
#   a2a-gateway/bench/split_syscalls.sh
# Environment: CARGO_TARGET_DIR, BENCH_PROFILE (release), BENCH_GW_BIN, BENCH_GOVERNANCE=1, BENCH_KEEP=1.
set -eu
DIR=$(dirname "$0")
TARGET=${CARGO_TARGET_DIR:-target}
PROFILE=${BENCH_PROFILE:-release}
GWBIN=${BENCH_GW_BIN:-$TARGET/$PROFILE/a2a-gateway}
AGBIN=$TARGET/$PROFILE/a2a-agent
command -v perf >/dev/null && command -v wrk >/dev/null || { echo "needs perf and wrk" >&2; exit 1; }
. "$DIR/servers.sh"

pinned_pair "$GWBIN" "$AGBIN"
echo "$(uptime)"
A2A_GATEWAY_KEY=$KEY taskset -c 0 wrk -t2 -c16 -d3s -s "$DIR/send.lua" "$GW" >/dev/null
A2A_GATEWAY_KEY=$KEY taskset -c 0 wrk -t2 -c16 -d10s -s "$DIR/send.lua" "$GW" >"$TMP/w" &
WPID=$!
sleep 1
perf stat -e 'raw_syscalls:sys_enter,context-switches,task-clock' -p "$GPID" -- sleep 4 2>"$TMP/stat"
EV=task-clock,raw_syscalls:sys_enter,context-switches
for c in pwrite64 pread64 fcntl write writev recvfrom futex; do EV="$EV,syscalls:sys_enter_$c"; done
perf stat --per-thread -e "$EV" -p "$GPID" -- sleep 4 2>"$TMP/threads"
wait "$WPID"
grep 'Requests/sec' "$TMP/w"
grep -E 'sys_enter|context-switches|task-clock' "$TMP/stat"
awk -v rps="$(awk '/Requests\/sec/ {print $2}' "$TMP/w")" '
  /sys_enter/ {c = $1} /context-switches/ {x = $1} /task-clock/ {t = $1}
  END {h = rps * 4; printf "per hop (%d hops at wrk\x27s mean rate): %.1f system calls, %.2f context switches, %.0f us CPU\n", h, c / h, x / h, t * 1000 / h}
' "$TMP/stat"
echo "per thread and hop, the next 4 s (threads under 1 us of CPU per hop left out):"
awk -v rps="$(awk '/Requests\/sec/ {print $2}' "$TMP/w")" '
  $2 ~ /^[0-9.,]+$/ && NF >= 3 {
    v = $2; gsub(",", "", v); t = $1; sub(/-[0-9]+$/, "", t); e = $3; sub(/^syscalls:sys_enter_/, "", e)
    sub(/^raw_syscalls:sys_enter$/, "calls", e); if (e == "msec") e = "cpu"
    val[t, e] += v; th[t] = 1; ev[e] = 1 }
  END { h = rps * 4; n = split("cpu calls context-switches pwrite64 pread64 fcntl write writev recvfrom futex", es, " ")
    printf "%-18s %8s", "thread", "us CPU"; for (i = 2; i <= n; i++) printf " %8s", es[i]; printf "\n"
    for (t in th) { if (val[t, "cpu"] * 1000 / h < 1) continue
      printf "%-18s %8.0f", t, val[t, "cpu"] * 1000 / h; for (i = 2; i <= n; i++) printf " %8.2f", val[t, es[i]] / h; printf "\n" } }
' "$TMP/threads"
