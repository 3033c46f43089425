#!/bin/sh
# a2a-agent beside the official Rust SDK (issue 38): `a2a-agent serve --echo` and an echo server
# built on the SDK's public crates (`a2a-lf`, `a2a-server-lf` from crates.io;
# a2a-agent/bench/sdk-rs), both on jemalloc, loaded in the same rounds with wrk over JSON-RPC and
# HTTP+JSON sends at 1, 16 and 64 connections and over JSON-RPC streams.
#
# Placement: both servers on CPU 1 with one runtime thread each, wrk on CPU 0 (BENCH_PLACEMENT=0:
# unpinned, default worker counts). Rounds alternate which server goes first. Per run: req/s and
# the server's CPU per request (utime+stime from /proc/PID/stat over the run / wrk's requests);
# per row the median over the rounds of ours/sdk, with the lowest and highest. Everything on
# 127.0.0.1, port 0.
#
# The agent's no-A2A floor (a2a-agent/examples/floor.rs: axum answering the same bytes without
# reading anything) runs in the same rounds on the sends, also on CPU 1 with one runtime thread:
# floor/sdk bounds what any A2A server on this HTTP stack could reach against the SDK
# (BENCH_FLOOR=0 leaves it out).
#
# Usage (repository root): a2a-agent/bench/vs_sdk.sh [rounds] [seconds per run]   (default 3, 10)
# Builds all three in release first (BENCH_NO_BUILD=1 uses the binaries already built:
# AGENT_BIN, SDK_BIN, FLOOR_BIN, defaults under $CARGO_TARGET_DIR or target/).
set -eu
ROUNDS=${1:-3}
SECS=${2:-10}
DIR=$(dirname "$0")
TARGET=${CARGO_TARGET_DIR:-target}
AGENT=${AGENT_BIN:-$TARGET/release/a2a-agent}
SDK=${SDK_BIN:-$TARGET/release/sdk-rs-echo}
FLOOR=${FLOOR_BIN:-$TARGET/release/examples/floor}
[ "${BENCH_FLOOR:-1}" != 0 ] || FLOOR=
command -v wrk >/dev/null || { echo "wrk not found (apt-get install -y wrk)" >&2; exit 1; }
if [ "${BENCH_NO_BUILD:-0}" != 1 ]; then
  cargo build --release -p a2ars-agent --features cli --bin a2a-agent --example floor
  CARGO_TARGET_DIR=$TARGET cargo build --release --manifest-path "$DIR/sdk-rs/Cargo.toml"
fi
TMP=$(mktemp -d)
APID=""; SPID=""; FPID=""
cleanup() {
  for p in $APID $SPID $FPID; do kill "$p" 2>/dev/null || true; done
  for p in $APID $SPID $FPID; do wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP PIPE
listening() {
  for _ in $(seq 100); do grep -q '^LISTENING' "$1" && break; sleep 0.1; done
  sed -n 's/^LISTENING //p' "$1" | head -1
}
PIN=""; WRAP=""; AW=""; SW=""
if [ "${BENCH_PLACEMENT:-1}" != 0 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  PIN="taskset -c 1"; WRAP="taskset -c 0"; AW="--workers 1"; SW=1
fi
# shellcheck disable=SC2086
$PIN "$AGENT" serve --echo --host 127.0.0.1 --port 0 $AW >"$TMP/agent.out" 2>/dev/null &
APID=$!
WORKERS=${SW:-} $PIN "$SDK" >"$TMP/sdk.out" 2>/dev/null &
SPID=$!
if [ -n "$FLOOR" ]; then
  # shellcheck disable=SC2086
  env ${SW:+TOKIO_WORKER_THREADS=$SW} $PIN "$FLOOR" >"$TMP/floor.out" 2>/dev/null &
  FPID=$!
  FURL=$(listening "$TMP/floor.out")
  [ -n "$FURL" ] || { echo "the floor did not start" >&2; exit 1; }
fi
AURL=$(listening "$TMP/agent.out"); SURL=$(listening "$TMP/sdk.out")
[ -n "$AURL" ] && [ -n "$SURL" ] || { echo "a server did not start" >&2; exit 1; }
echo "ours $AURL (pid $APID), sdk $SURL (pid $SPID), placement ${PIN:-none}; $(uptime)"

# Both answer a send with a completed task, and each stream ends.
for u in "$AURL" "$SURL"; do
  out=$(curl -s -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d \
    '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"check-1","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}}' "$u/")
  echo "$out" | grep -q 'COMPLETED' || { echo "$u: unexpected answer: $out" >&2; exit 1; }
done
events() {
  curl -s -N -H 'Content-Type: application/json' -H 'Accept: text/event-stream' -H 'A2A-Version: 1.0' -d \
    '{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"check-'"$2"'","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}}' \
    "$1/" | grep -c '^data:'
}
AEV=$(events "$AURL" a); SEV=$(events "$SURL" s)
echo "events per stream: ours $AEV, sdk $SEV"

TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# run NAME PID LUA CONNS URL -> appends "rps us_per_req" to NAME.res
run() {
  t=$([ "$4" -lt 2 ] && echo 1 || echo 2)
  c0=$(cpu "$2")
  # shellcheck disable=SC2086
  $WRAP wrk -t"$t" -c"$4" -d"${SECS}s" -s "$DIR/$3.lua" "$5" >"$TMP/$1.wrk"
  c1=$(cpu "$2")
  rps=$(awk '/^Requests\/sec/ {print $2}' "$TMP/$1.wrk")
  n=$(awk '/requests in/ {print $1}' "$TMP/$1.wrk")
  bad=$(awk '/Non-2xx/ {print $NF}' "$TMP/$1.wrk")
  [ -z "$bad" ] || { echo "$1: $bad non-2xx answers" >&2; exit 1; }
  us=$(awk -v c="$((c1 - c0))" -v n="$n" -v t="$TCK" 'BEGIN { if (n < 1) n = 1; printf "%.1f", c * 1e6 / t / n }')
  echo "$rps $us" >>"$TMP/$1.res"
  echo "  $1: $rps req/s, server CPU $us us/req" >&2
}
CASES="jsonrpc:1 jsonrpc:16 jsonrpc:64 rest:1 rest:16 rest:64 stream:1 stream:16"
SAVE=$SECS; SECS=2
run warm-ours "$APID" jsonrpc 16 "$AURL"; run warm-sdk "$SPID" jsonrpc 16 "$SURL"
SECS=$SAVE
r=1
while [ "$r" -le "$ROUNDS" ]; do
  echo "round $r" >&2
  for cs in $CASES; do
    b=${cs%%:*}; c=${cs##*:}
    if [ $((r % 2)) = 1 ]; then
      run "ours-$b-$c" "$APID" "$b" "$c" "$AURL"; run "sdk-$b-$c" "$SPID" "$b" "$c" "$SURL"
    else
      run "sdk-$b-$c" "$SPID" "$b" "$c" "$SURL"; run "ours-$b-$c" "$APID" "$b" "$c" "$AURL"
    fi
    if [ -n "$FLOOR" ] && [ "$b" != stream ]; then run "floor-$b-$c" "$FPID" "$b" "$c" "$FURL"; fi
  done
  r=$((r + 1))
done
rss() { awk '/VmRSS/ {printf "%.0f MB", $2 / 1024}' "/proc/$1/status"; }
echo "RSS after the runs: ours $(rss "$APID"), sdk $(rss "$SPID"); $(uptime)"
echo
echo "| case | connections | ours req/s | sdk req/s | ours/sdk median (min-max) | CPU us/req ours / sdk | floor/sdk median (min-max) |"
echo "| --- | --- | ---: | ---: | --- | --- | --- |"
for cs in $CASES; do
  b=${cs%%:*}; c=${cs##*:}
  f="$TMP/floor-$b-$c.res"; [ -f "$f" ] || { awk '{print "0 0"}' "$TMP/sdk-$b-$c.res" >"$TMP/nofloor"; f="$TMP/nofloor"; }
  paste -d' ' "$TMP/ours-$b-$c.res" "$TMP/sdk-$b-$c.res" "$f" | awk -v b="$b" -v c="$c" '
    function median(a, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { n++; o[n] = $1; s[n] = $3; ou[n] = $2; su[n] = $4; q[n] = $1 / $3; fq[n] = $5 / $3 }
    END {
      lo = q[1]; hi = q[1]; for (i = 1; i <= n; i++) { if (q[i] < lo) lo = q[i]; if (q[i] > hi) hi = q[i] }
      flo = fq[1]; fhi = fq[1]; for (i = 1; i <= n; i++) { if (fq[i] < flo) flo = fq[i]; if (fq[i] > fhi) fhi = fq[i] }
      fl = fhi > 0 ? sprintf("%.2f (%.2f-%.2f)", median(fq, n), flo, fhi) : "-"
      name = b == "rest" ? "HTTP+JSON send" : (b == "stream" ? "JSON-RPC stream" : "JSON-RPC send")
      printf "| %s | %d | %.0f | %.0f | **%.2f** (%.2f-%.2f) | %.1f / %.1f | %s |\n",
        name, c, median(o, n), median(s, n), median(q, n), lo, hi, median(ou, n), median(su, n), fl }'
done
