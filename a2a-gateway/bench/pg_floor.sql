-- pgbench script of pg_floor.sh: the rows of B echo hops, written as an ideally batched
-- writer would (multi-row statements, two transactions per B hops: the claims with the
-- intents' audit rows before the peer calls; the bindings with their status, the claims'
-- completions and the hops' audit rows before the answers). Values shaped like the gateway's.
\set m random(1, 1000000000000)
BEGIN;
INSERT INTO gateway_sends(workspace_id, agent_id, message_id, digest, created_at) SELECT 'ws1', 'echo', 'm' || :m || '-' || i, 'digest-0123456789abcdef0123456789abcdef', extract(epoch from now())::bigint FROM generate_series(1, :B) i ON CONFLICT DO NOTHING;
INSERT INTO audit(ts, trace_id, workspace_id, key_id, target, operation, client_method, client_version, client_binding, decision, status, latency_ms, phase) SELECT now()::text, md5(random()::text), 'ws1', 'k1', 'echo', 'SendMessage', 'SendMessage', '1.0', 'JSONRPC', 'allowed', 0, 0, 'intent' FROM generate_series(1, :B);
COMMIT;
BEGIN;
INSERT INTO task_owners(endpoint, task_id, workspace_id, agent_id, created_at, context_id, state, status_at, open) SELECT 'http://127.0.0.1:1', md5(random()::text), 'ws1', 'echo', extract(epoch from now())::bigint, md5(random()::text), 'TASK_STATE_COMPLETED', extract(epoch from now())::bigint * 1000, false FROM generate_series(1, :B) ON CONFLICT DO NOTHING;
UPDATE gateway_sends SET task_id = 't' || :m, reply = '{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"x"}}}' WHERE workspace_id = 'ws1' AND agent_id = 'echo' AND message_id = ANY(ARRAY(SELECT 'm' || :m || '-' || i FROM generate_series(1, :B) i));
INSERT INTO audit(ts, trace_id, workspace_id, key_id, target, operation, client_method, client_version, client_binding, decision, status, latency_ms, intent_of, task_id) SELECT now()::text, md5(random()::text), 'ws1', 'k1', 'echo', 'SendMessage', 'SendMessage', '1.0', 'JSONRPC', 'allowed', 200, 1, 1, 't' FROM generate_series(1, :B);
COMMIT;
