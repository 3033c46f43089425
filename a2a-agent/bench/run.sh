#!/bin/sh
# Echo SendMessage benchmark: JSON-RPC and HTTP+JSON at 1/16/64 connections, server RSS after
# each run. Usage: a2a-agent/bench/run.sh [path/to/release/a2a-agent] [seconds per run]
set -eu
BIN=${1:-target/release/a2a-agent}
SECS=${2:-10}
DIR=$(dirname "$0")
OUT=$(mktemp)
"$BIN" serve --echo --port 0 >"$OUT" 2>/dev/null &
PID=$!
trap 'kill $PID 2>/dev/null' EXIT
for _ in $(seq 50); do grep -q LISTENING "$OUT" && break; sleep 0.1; done
URL=$(head -1 "$OUT" | cut -d' ' -f2)
rss() { grep VmRSS /proc/$PID/status | awk '{print $2 " kB"}'; }
echo "server $URL pid $PID, RSS at start: $(rss)"
for b in jsonrpc rest; do
  for c in 1 16 64; do
    t=$([ "$c" -lt 2 ] && echo 1 || echo 2)
    echo "== $b c=$c"
    wrk -t"$t" -c"$c" -d"${SECS}s" --latency -s "$DIR/$b.lua" "$URL" | grep -E "Requests/sec|requests in|^ +(50|99)%"
    echo "RSS: $(rss)"
  done
done
