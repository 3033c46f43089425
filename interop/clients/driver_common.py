"""Scenario runner shared by the SDK client drivers (no a2a-sdk imports here).

A scenario is a JSON list of operations read from stdin (or `--scenario FILE`;
with `--interactive`, one op object per stdin line, each run as it arrives):

    [{"op": "send", "text": "echo hi"},
     {"op": "get", "taskId": "$last.task_id"}]

Every operation prints JSON lines on stdout (flushed immediately):

    {"i": 0, "op": "send", "ok": true, "result": {...}, "task_id": "...", "context_id": "..."}
    {"i": 1, "op": "get", "ok": false, "error": {"type": "TaskNotFoundError", "code": -32001, "message": "..."}}

Streaming operations (`stream`, `subscribe`) print one line per event, as it
arrives, then a closing line:

    {"i": 2, "op": "stream", "event": {...}, "n": 0, "task_id": "..."}
    {"i": 2, "op": "stream", "done": true, "ok": true, "events": 6, "task_id": "..."}

On a stream error the closing line has `"ok": false` and an `"error"`.

References: any string value of the form `$last.PATH`, `$N.PATH` (N = index of
an earlier operation) or `$NAME.PATH` (an earlier op with `"as": "NAME"`) is
replaced before the op runs. `$last.PATH` takes the most recent closing record
(not stream events) in which PATH resolves. PATH is dotted: `task_id`,
`result.task.id`, `result.artifacts.0.parts.0.text`.

Common op options:
* `"background": true` on `stream`/`subscribe`: run concurrently, the next op
  starts at once; `{"op": "wait"}` waits for all background ops.
* `"maxEvents": N` on `stream`/`subscribe`: stop reading after N events.
* `"timeout": seconds` (default 60) on any op.
Runner ops: `headers` {headers: {name: value|null}} sets/removes extra HTTP
headers for every later op; `sleep` {seconds}; `wait`; `echo` {value};
`until_events` {stream: NAME|N, count?: 1}: wait until that (background) stream
has printed `count` events (fails when it ends with fewer, or at `timeout`),
e.g. to act on a task only once a subscription to it is open.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

DEFAULT_TIMEOUT_S = 60.0


def emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record, default=str) + '\n')
    sys.stdout.flush()


def parse_args(description: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=description)
    p.add_argument('--url', required=True, help='base URL of the agent (card host)')
    p.add_argument('--binding', choices=['jsonrpc', 'rest', 'grpc'], default='jsonrpc')
    p.add_argument(
        '--protocol-version',
        default=None,
        help='only use card interfaces of this protocol version (e.g. 1.0, 0.3)',
    )
    p.add_argument('--card-path', default=None, help='card path relative to --url')
    p.add_argument('--scenario', default=None, help='read the scenario from FILE, not stdin')
    p.add_argument(
        '--interactive',
        action='store_true',
        help='read one op (a JSON object) per stdin line and run it at once; EOF ends',
    )
    p.add_argument('--debug', action='store_true', help='tracebacks on stderr')
    p.add_argument(
        '--trace',
        action='store_true',
        help='log every HTTP request/response (headers + JSON bodies) to stderr',
    )
    return p.parse_args()


def trace_hooks(enabled: bool) -> dict[str, list[Any]]:
    """httpx event hooks that print the wire traffic to stderr (for --trace)."""
    if not enabled:
        return {}

    async def on_request(request: Any) -> None:
        body = request.content.decode('utf-8', 'replace') if request.content else ''
        hdrs = {k: v for k, v in request.headers.items() if k.lower() not in ('host', 'accept-encoding', 'connection', 'user-agent', 'content-length')}
        print(f'>>> {request.method} {request.url} {json.dumps(hdrs)}\n>>> {body}', file=sys.stderr, flush=True)

    async def on_response(response: Any) -> None:
        ctype = response.headers.get('content-type', '')
        hdrs = {k: v for k, v in response.headers.items() if k.lower() not in ('date', 'server', 'content-length')}
        print(f'<<< {response.status_code} {json.dumps(hdrs)}', file=sys.stderr, flush=True)
        if 'event-stream' not in ctype:
            await response.aread()
            print(f'<<< {response.text}', file=sys.stderr, flush=True)

    return {'request': [on_request], 'response': [on_response]}


def read_scenario(args: argparse.Namespace) -> list[dict[str, Any]]:
    raw = open(args.scenario).read() if args.scenario else sys.stdin.read()
    data = json.loads(raw)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(o, dict) for o in data):
        raise SystemExit('scenario must be a JSON list of objects')
    return data


_MISSING = object()


def walk(value: Any, path: list[str]) -> Any:
    for key in path:
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.lstrip('-').isdigit() and -len(value) <= int(key) < len(value):
            value = value[int(key)]
        else:
            return _MISSING
    return value


def find_ids(obj: Any) -> dict[str, str]:
    """Pull task/context ids out of any dumped A2A object (either version)."""
    out: dict[str, str] = {}

    def visit(o: Any, depth: int) -> None:
        if depth > 3 or not isinstance(o, dict):
            return
        kind = o.get('kind')
        if 'task_id' not in out:
            if kind == 'task' or ('status' in o and 'id' in o and 'contextId' in o):
                out['task_id'] = o['id']
            elif isinstance(o.get('taskId'), str) and o.get('taskId'):
                out['task_id'] = o['taskId']
        if 'context_id' not in out and isinstance(o.get('contextId'), str) and o['contextId']:
            out['context_id'] = o['contextId']
        for key in ('task', 'message', 'statusUpdate', 'artifactUpdate', 'result'):
            if isinstance(o.get(key), dict):
                visit(o[key], depth + 1)

    visit(obj, 0)
    return out


class Runner:
    """Runs scenario ops against version-specific handlers."""

    def __init__(
        self,
        unary: dict[str, Callable[[dict[str, Any], 'Runner'], Awaitable[Any]]],
        streams: dict[str, Callable[[dict[str, Any], 'Runner'], AsyncIterator[Any]]],
        error_to_json: Callable[[BaseException], dict[str, Any]],
        debug: bool = False,
    ) -> None:
        self.unary = unary
        self.streams = streams
        self.error_to_json = error_to_json
        self.debug = debug
        self.headers: dict[str, str] = {}
        self.records: list[dict[str, Any]] = []  # closing record per op index
        self.named: dict[str, dict[str, Any]] = {}
        self.background: list[asyncio.Task[None]] = []
        self.seen: dict[int, int] = {}  # events printed so far per stream op index
        self.index_of: dict[str, int] = {}  # `as` name -> op index

    # -- references -------------------------------------------------------
    def resolve(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if not (isinstance(value, str) and value.startswith('$') and '.' in value):
            return value
        head, *path = value[1:].split('.')
        if head == 'last':
            for rec in reversed(self.records):
                if rec is None:
                    continue
                got = walk(rec, path)
                if got is not _MISSING:
                    return got
            raise ValueError(f'reference {value!r}: no earlier result has it')
        rec = None
        if head.isdigit() and int(head) < len(self.records):
            rec = self.records[int(head)]
        elif head in self.named:
            rec = self.named[head]
        if rec is None:
            raise ValueError(f'reference {value!r}: unknown op {head!r}')
        got = walk(rec, path)
        if got is _MISSING:
            raise ValueError(f'reference {value!r}: path not found')
        return got

    def error_record(self, exc: BaseException) -> dict[str, Any]:
        if self.debug:
            traceback.print_exception(exc, file=sys.stderr)
        try:
            return self.error_to_json(exc)
        except Exception:  # noqa: BLE001
            return {'type': type(exc).__name__, 'code': None, 'message': str(exc)}

    # -- running ------------------------------------------------------------
    def _close(self, i: int, spec: dict[str, Any], rec: dict[str, Any]) -> None:
        while len(self.records) <= i:
            self.records.append(None)  # type: ignore[arg-type]
        self.records[i] = rec
        if isinstance(spec.get('as'), str):
            self.named[spec['as']] = rec
        emit(rec)

    async def run_stream(self, i: int, name: str, spec: dict[str, Any]) -> None:
        n = 0
        ids: dict[str, str] = {}
        max_events = spec.get('maxEvents')
        timeout = float(spec.get('timeout', DEFAULT_TIMEOUT_S))
        done: dict[str, Any] = {'i': i, 'op': name, 'done': True, 'ok': True}
        gen = self.streams[name](spec, self)
        try:
            async with asyncio.timeout(timeout):
                async for event in gen:
                    for k, v in find_ids(event).items():
                        ids.setdefault(k, v)
                    emit({'i': i, 'op': name, 'event': event, 'n': n, **ids})
                    n += 1
                    self.seen[i] = n
                    if max_events is not None and n >= int(max_events):
                        break
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            done['ok'] = False
            done['error'] = self.error_record(exc)
        finally:
            try:
                await gen.aclose()  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001
                pass
        done['events'] = n
        done.update(ids)
        self._close(i, spec, done)

    async def run(self, ops: list[dict[str, Any]]) -> int:
        failures = 0
        for i, raw in enumerate(ops):
            if not await self.run_one(i, raw):
                failures += 1
        await self.drain()
        return failures

    async def run_interactive(self) -> int:
        """One op per stdin line, each run as soon as it arrives; EOF ends."""
        loop = asyncio.get_running_loop()
        failures = 0
        i = 0
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                break
            line = line.strip()
            if not line:
                continue
            try:
                raw = json.loads(line)
                if not isinstance(raw, dict):
                    raise ValueError('an op must be a JSON object')
            except ValueError as exc:
                self._close(i, {}, {'i': i, 'op': None, 'ok': False,
                                    'error': {'type': 'ScenarioError', 'code': None, 'message': str(exc)}})
                i += 1
                failures += 1
                continue
            if not await self.run_one(i, raw):
                failures += 1
            i += 1
        await self.drain()
        return failures

    async def until_events(self, spec: dict[str, Any]) -> tuple[bool, str | None]:
        target = spec.get('stream')
        j = self.index_of.get(target) if isinstance(target, str) else target
        if not isinstance(j, int):
            return False, f'until_events: unknown stream {target!r}'
        count = int(spec.get('count', 1))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + float(spec.get('timeout', DEFAULT_TIMEOUT_S))
        while self.seen.get(j, 0) < count:
            if j < len(self.records) and self.records[j] is not None:
                return False, f'until_events: stream {target!r} ended after {self.seen.get(j, 0)} events'
            if loop.time() > deadline:
                return False, f'until_events: timed out waiting for {count} events of {target!r}'
            await asyncio.sleep(0.01)
        return True, None

    async def drain(self) -> None:
        if self.background:
            await asyncio.gather(*self.background, return_exceptions=True)
            self.background.clear()

    async def run_one(self, i: int, raw: dict[str, Any]) -> bool:
        """Run op number i; False when it failed (stream failures are reported on their line)."""
        name = str(raw.get('op', ''))
        if isinstance(raw.get('as'), str):
            self.index_of[raw['as']] = i
        try:
            spec = self.resolve(raw)
        except ValueError as exc:
            self._close(i, raw, {'i': i, 'op': name, 'ok': False,
                                 'error': {'type': 'ScenarioError', 'code': None, 'message': str(exc)}})
            return False
        if name == 'headers':
            for k, v in (spec.get('headers') or {}).items():
                if v is None:
                    self.headers.pop(k, None)
                else:
                    self.headers[k] = str(v)
            self._close(i, spec, {'i': i, 'op': name, 'ok': True, 'result': dict(self.headers)})
        elif name == 'sleep':
            await asyncio.sleep(float(spec.get('seconds', 1)))
            self._close(i, spec, {'i': i, 'op': name, 'ok': True})
        elif name == 'wait':
            await self.drain()
            self._close(i, spec, {'i': i, 'op': name, 'ok': True})
        elif name == 'until_events':
            ok, error = await self.until_events(spec)
            rec = {'i': i, 'op': name, 'ok': ok}
            if error:
                rec['error'] = {'type': 'ScenarioError', 'code': None, 'message': error}
            self._close(i, spec, rec)
            return ok
        elif name == 'echo':
            self._close(i, spec, {'i': i, 'op': name, 'ok': True, 'result': spec.get('value')})
        elif name in self.streams:
            if spec.get('background'):
                self.background.append(asyncio.ensure_future(self.run_stream(i, name, spec)))
                await asyncio.sleep(0)
            else:
                await self.run_stream(i, name, spec)
        elif name in self.unary:
            timeout = float(spec.get('timeout', DEFAULT_TIMEOUT_S))
            try:
                async with asyncio.timeout(timeout):
                    result = await self.unary[name](spec, self)
                rec = {'i': i, 'op': name, 'ok': True, 'result': result, **find_ids(result)}
            except Exception as exc:  # noqa: BLE001
                rec = {'i': i, 'op': name, 'ok': False, 'error': self.error_record(exc)}
            self._close(i, spec, rec)
            return bool(rec['ok'])
        else:
            known = sorted([*self.unary, *self.streams, 'headers', 'sleep', 'wait', 'echo', 'until_events'])
            self._close(i, spec, {'i': i, 'op': name, 'ok': False,
                                  'error': {'type': 'UnknownOp', 'code': None,
                                            'message': f'unknown op {name!r}; known: {known}'}})
            return False
        return True
