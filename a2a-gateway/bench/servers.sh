# Sourced by the gateway's bench scripts (after they set DIR): a temporary directory ($TMP),
# the processes a script starts ($PIDS: add each with PIDS="$PIDS $!"; all are stopped and
# waited for when the script ends, however it ends) and wait_listening. BENCH_KEEP=1 keeps $TMP.
TMP=$(mktemp -d)
PIDS=""
cleanup() {
  for p in $PIDS; do kill "$p" 2>/dev/null || true; done
  for p in $PIDS; do wait "$p" 2>/dev/null || true; done
  if [ "${BENCH_KEEP:-}" = 1 ]; then echo "kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP PIPE
# wait_listening OUT ERR [SECONDS=10]: the URL a server printed after LISTENING in OUT, or
# exits with its ERR once SECONDS have passed without it.
wait_listening() {
  for _ in $(seq $((${3:-10} * 10))); do grep -q '^LISTENING' "$1" && break; sleep 0.1; done
  grep -q '^LISTENING' "$1" || { echo "server did not start:" >&2; cat "$2" >&2; exit 1; }
  sed -n 's/^LISTENING //p' "$1" | head -1
}
# bench_key GATEWAY_BIN DB AGENT_URL: registers the echo agent at AGENT_URL as `echo` in a new
# workspace `bench` of the database DB and prints an API key of that workspace.
bench_key() {
  "$1" admin --database "$2" workspace-create bench >/dev/null
  "$1" admin --database "$2" agent-add bench echo "$3" >/dev/null
  "$1" admin --database "$2" key-create bench 2>/dev/null | grep -o 'a2agw_[A-Za-z0-9_-]*' | head -1
}
# bench_governance GATEWAY_BIN DB: with BENCH_GOVERNANCE=1, the workspace `bench` gets the
# ten-rule policy of governance-policy.json (none denies the benchmarks' sends, so each hop
# evaluates all ten) and PII redaction of every type (issue 14); nothing otherwise.
bench_governance() {
  [ "${BENCH_GOVERNANCE:-}" = 1 ] || return 0
  "$1" admin --database "$2" policy-set bench "$DIR/governance-policy.json" >/dev/null
  "$1" admin --database "$2" pii-set bench '{"default_action":"redact"}' >/dev/null
  echo "governance: ten-rule policy and PII redaction on"
}
# pinned_pair GATEWAY_BIN AGENT_BIN: the echo agent and the gateway (its database $TMP/gw.db,
# governed per bench_governance) started on CPU 1 for the split placement; sets APID, GPID,
# AGENT (the agent's URL), DB, KEY and GW (the gateway's URL of the agent `echo`).
pinned_pair() {
  taskset -c 1 "$2" serve --echo --host 127.0.0.1 --port 0 >"$TMP/agent.out" 2>"$TMP/agent.err" &
  APID=$!; PIDS="$PIDS $APID"
  AGENT=$(wait_listening "$TMP/agent.out" "$TMP/agent.err")
  DB=$TMP/gw.db
  KEY=$(bench_key "$1" "$DB" "$AGENT")
  bench_governance "$1" "$DB"
  taskset -c 1 "$1" serve --listen 127.0.0.1:0 --database "$DB" --dev >"$TMP/gw.out" 2>"$TMP/gw.err" &
  GPID=$!; PIDS="$PIDS $GPID"
  GW=$(wait_listening "$TMP/gw.out" "$TMP/gw.err")/a2a/echo
}
