-- wrk script: echo SendMessage over 1.0 JSON-RPC (POST /).
wrk.method = "POST"
wrk.path = "/"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}}'
