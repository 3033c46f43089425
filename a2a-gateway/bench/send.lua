-- wrk script: echo SendMessage over A2A 1.0 JSON-RPC, POST to the URL given to wrk.
-- Same body as a2a-agent/bench/jsonrpc.lua. With A2A_GATEWAY_KEY set (gateway runs) it adds
-- `Authorization: Bearer <key>`; the direct runs leave it unset.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
local key = os.getenv("A2A_GATEWAY_KEY")
if key and key ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. key
end
body = '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"MESSAGE_ID","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}}'

-- A new messageId per request (see unique_ids.lua).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "../../a2a-agent/bench/unique_ids.lua")
