-- wrk script: echo SendMessage over 1.0 HTTP+JSON (POST /message:send).
wrk.method = "POST"
wrk.path = "/message:send"
wrk.headers["Content-Type"] = "application/a2a+json"
wrk.headers["A2A-Version"] = "1.0"
wrk.body = '{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}'
