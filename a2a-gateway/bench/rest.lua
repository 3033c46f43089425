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

-- A new messageId per request (`b<start time>-<thread>-<n>`): the agent answers a repeated
-- messageId from the first send without running it again (idempotent sends), which is not what
-- this benchmark measures.
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local started = os.time()
local n = 0
function request()
  n = n + 1
  local id = string.format("b%d-%d-%d", started, tid or 0, n)
  return wrk.format(nil, nil, nil, (string.gsub(body, "MESSAGE_ID", id)))
end
