-- wrk script: echo SendMessage over 1.0 HTTP+JSON (POST /message:send).
wrk.method = "POST"
wrk.path = "/message:send"
wrk.headers["Content-Type"] = "application/a2a+json"
wrk.headers["A2A-Version"] = "1.0"
body = '{"message":{"messageId":"MESSAGE_ID","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}'

-- A new messageId per request (see unique_ids.lua).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "unique_ids.lua")
