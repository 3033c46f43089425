-- wrk script: SendStreamingMessage over A2A 1.0 JSON-RPC (the echo agent's `stream` reply, an
-- SSE response that ends with the task). wrk counts whole responses (= streams); run.sh
-- multiplies by the events per stream it counts once with curl. Auth as in send.lua.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
local key = os.getenv("A2A_GATEWAY_KEY")
if key and key ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. key
end
body = '{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"MESSAGE_ID","role":"ROLE_USER","parts":[{"text":"stream hello"}]}}}'

-- A new messageId per request (see unique_ids.lua).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "../../a2a-agent/bench/unique_ids.lua")
