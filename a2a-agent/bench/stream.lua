-- wrk script: echo SendStreamingMessage over 1.0 JSON-RPC (POST /), each answer an SSE stream
-- read to its end; wrk counts streams. The text has no echo keyword, so each server sends what
-- its plain echo turn makes (vs_sdk.sh counts the events per stream of each once, with curl).
wrk.method = "POST"
wrk.path = "/"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "text/event-stream"
wrk.headers["A2A-Version"] = "1.0"
body = '{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"MESSAGE_ID","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}}'

-- A new messageId per request (see unique_ids.lua).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "unique_ids.lua")
