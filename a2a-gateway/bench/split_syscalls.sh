#!/bin/sh
# The gateway's system calls per hop in the split placement (issue 38): the echo agent and the
# gateway on CPU 1 (one runtime thread each), wrk on CPU 0 at 16 connections (JSON-RPC sends,
# send.lua). During the run, `perf stat` counts the gateway's system calls, context switches
# and CPU over 4 s, then `perf trace -s` lists them by call over 2 s (tracing slows the gateway:
# read its counts per call as shares). Per hop: the stat counts over 4 s of wrk's mean rate.
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
perf trace -s -p "$GPID" -- sleep 2 2>"$TMP/trace" >/dev/null || true
wait "$WPID"
grep 'Requests/sec' "$TMP/w"
grep -E 'sys_enter|context-switches|task-clock' "$TMP/stat"
awk -v rps="$(awk '/Requests\/sec/ {print $2}' "$TMP/w")" '
  /sys_enter/ {c = $1} /context-switches/ {x = $1} /task-clock/ {t = $1}
  END {h = rps * 4; printf "per hop (%d hops at wrk\x27s mean rate): %.1f system calls, %.2f context switches, %.0f us CPU\n", h, c / h, x / h, t * 1000 / h}
' "$TMP/stat"
echo "system calls over 2 s of perf trace (calls, by call):"
awk '$2 ~ /^[0-9]+$/ && $1 ~ /^[a-z_0-9]+$/ {n[$1] += $2} END {for (k in n) print n[k], k}' "$TMP/trace" \
  | sort -n -r | head -12
