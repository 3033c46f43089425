"""Shared process plumbing for the reference agents (no a2a-sdk imports here).

Both agents:
* bind 127.0.0.1:PORT themselves (`--port 0` = any free port), build the app
  knowing the real port, serve it with uvicorn on that socket;
* print exactly one line `LISTENING http://127.0.0.1:PORT` on stdout once
  uvicorn has started;
* exit on SIGTERM/SIGINT (uvicorn's handlers) and when stdin reaches EOF, so
  a test process that dies (closing our stdin pipe) never leaks an agent.
  A hard `os._exit` follows a few seconds later in case open SSE streams hold
  the graceful shutdown.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

HARD_EXIT_AFTER_S = 3.0


def parse_args(description: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=description)
    p.add_argument('--port', type=int, default=0, help='0 = pick a free port')
    p.add_argument('--host', default='127.0.0.1')
    p.add_argument(
        '--no-stdin-watch',
        action='store_true',
        help='do not exit when stdin closes (for manual runs in a shell)',
    )
    p.add_argument(
        '--log-level', default=os.environ.get('A2A_AGENT_LOG', 'warning')
    )
    p.add_argument(
        '--api-key',
        default=None,
        help='require header X-API-Key: KEY on every path except /.well-known/* '
        '(401 otherwise) and declare the apiKey scheme in the card',
    )
    p.add_argument('--no-streaming', action='store_true', help='capabilities.streaming = false')
    p.add_argument('--no-push', action='store_true', help='capabilities.pushNotifications = false, no push store')
    p.add_argument('--no-extended-card', action='store_true', help='no extended card')
    p.add_argument(
        '--no-compat',
        action='store_true',
        help='(sdk1 agent) serve only protocol 1.0, not the SDK 0.3 compat layer',
    )
    p.add_argument(
        '--grpc',
        choices=['both', 'only'],
        default=None,
        help='(sdk1 agent) also serve gRPC on a second port: listed first in the card (both), '
        'or alone (only)',
    )
    return p.parse_args()


def bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


API_KEY_HEADER = 'X-API-Key'
EXTENSION_URI = 'urn:a2a-rs:interop:echo-ext'


# The reference behaviour of the SDK check table (a2a-agent/tests/common/reference.rs), next to
# the script above; its texts do not clash with the script's commands.
REPORT_ARTIFACT = 'report.txt'
REPORT_STEPS = ('reading the request', 'report written')
REPORT_QUESTION = 'Which format do you want (csv or md)?'
SUMMARY_ARTIFACT = 'summary'


def is_quick(text: str) -> bool:
    """`quick ...`: a direct Message `quick answer to: <text>`, no task."""
    return text.startswith('quick')


def is_report(text: str) -> bool:
    """A text with the word `report`: progress, a `report.txt` artifact, INPUT_REQUIRED."""
    return 'report' in text.split()


def report_body(text: str) -> bytes:
    return f'Report for: {text}\n'.encode()


def api_key_guard(app: Any, key: str) -> Any:
    """Pure-ASGI wrapper: 401 unless `X-API-Key: key`; the card paths stay public."""
    want = key.encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope['type'] == 'http' and not scope['path'].startswith('/.well-known/'):
            got = dict(scope.get('headers') or []).get(API_KEY_HEADER.lower().encode())
            if got != want:
                await send({
                    'type': 'http.response.start',
                    'status': 401,
                    'headers': [
                        (b'content-type', b'application/json'),
                        (b'www-authenticate', f'ApiKey header="{API_KEY_HEADER}"'.encode()),
                    ],
                })
                await send({
                    'type': 'http.response.body',
                    'body': b'{"error":"missing or invalid API key"}',
                })
                return
        await app(scope, receive, send)

    return guarded


def _hard_exit_later() -> None:
    t = threading.Timer(HARD_EXIT_AFTER_S, lambda: os._exit(0))
    t.daemon = True
    t.start()


def serve(
    build_app: Callable[[str], Any],  # base URL -> ASGI app
    args: argparse.Namespace,
) -> None:
    """Bind, build the ASGI app for the base URL, serve until told to stop."""
    import uvicorn

    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    sock = bind(args.host, args.port)
    port = sock.getsockname()[1]
    base_url = f'http://{args.host}:{port}'
    app = build_app(base_url)
    if getattr(args, 'api_key', None):
        app = api_key_guard(app, args.api_key)
    config = uvicorn.Config(
        app,
        log_level=args.log_level,
        timeout_graceful_shutdown=1,
        lifespan='on',
        access_log=args.log_level in ('debug', 'info'),
    )
    server = uvicorn.Server(config)

    def stop(*_: Any) -> None:
        server.should_exit = True
        _hard_exit_later()

    if not args.no_stdin_watch:

        def watch_stdin() -> None:
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            except Exception:  # noqa: BLE001
                pass
            stop()

        threading.Thread(target=watch_stdin, daemon=True).start()

    async def main() -> None:
        async def announce() -> None:
            while not server.started:
                if server.should_exit:
                    return
                await asyncio.sleep(0.01)
            sys.stdout.write(f'LISTENING {base_url}\n')
            sys.stdout.flush()

        announcer = asyncio.ensure_future(announce())
        try:
            await server.serve(sockets=[sock])
        finally:
            announcer.cancel()

    signal.signal(signal.SIGTERM, stop)
    asyncio.run(main())
    # uvicorn returned: make sure lingering threads don't keep us alive.
    sys.stdout.flush()
    os._exit(0)
