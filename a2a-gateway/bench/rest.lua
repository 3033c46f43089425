-- wrk script: echo SendMessage over A2A 1.0 HTTP+JSON, POST to the URL given to wrk (which ends
-- in `/message:send`: the agent's own route, or the gateway's `/a2a/{agent}/v1/message:send`).
-- Same body as a2a-agent/bench/rest.lua. Auth as in send.lua.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/a2a+json"
wrk.headers["A2A-Version"] = "1.0"
local key = os.getenv("A2A_GATEWAY_KEY")
if key and key ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. key
end
body = '{"message":{"messageId":"MESSAGE_ID","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}'

-- A new messageId per request (see unique_ids.lua).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "../../a2a-agent/bench/unique_ids.lua")
