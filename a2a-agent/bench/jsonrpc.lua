-- wrk script: echo SendMessage over 1.0 JSON-RPC (POST /).
wrk.method = "POST"
wrk.path = "/"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
body = '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"MESSAGE_ID","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}}'

-- A new messageId per request (see unique_ids.lua).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "unique_ids.lua")
