#!/usr/bin/env python3
"""A small fixed client for instruction counts: N echo SendMessage requests, one at a time, over
one keep-alive HTTP/1.1 connection (the same bodies and headers as send.lua / rest.lua, a new
messageId each). Exits non-zero on the first answer that is not 200 with a result.

Usage: drive.py URL N [jsonrpc|rest|stream] [KEY]   (rest: URL ends in /message:send; stream:
SendStreamingMessage on JSON-RPC, each answer an SSE stream read to its end)
"""
import http.client
import sys
import time
import urllib.parse


def main():
    url, n = sys.argv[1], int(sys.argv[2])
    binding = sys.argv[3] if len(sys.argv) > 3 else "jsonrpc"
    key = sys.argv[4] if len(sys.argv) > 4 else ""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    headers = {"A2A-Version": "1.0"}
    if key:
        headers["Authorization"] = "Bearer " + key
    if binding == "rest":
        headers["Content-Type"] = "application/a2a+json"
        tmpl = '{"message":{"messageId":"%s","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}'
        want = b'"task"'
    elif binding == "stream":
        headers["Content-Type"] = "application/json"
        headers["Accept"] = "text/event-stream"
        tmpl = ('{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":'
                '{"messageId":"%s","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}}')
        want = b'data:'
    else:
        headers["Content-Type"] = "application/json"
        tmpl = ('{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
                '{"messageId":"%s","role":"ROLE_USER","parts":[{"text":"hello bench"}]}}}')
        want = b'"result"'
    stamp = "d%d" % time.time_ns()
    for i in range(n):
        conn.request("POST", u.path or "/", body=tmpl % ("%s-%d" % (stamp, i)), headers=headers)
        r = conn.getresponse()
        body = r.read()
        if r.status != 200 or (want not in body and b'"message"' not in body):
            sys.exit("request %d: HTTP %d %r" % (i, r.status, body[:300]))
    conn.close()


if __name__ == "__main__":
    main()
