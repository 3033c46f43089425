#!/usr/bin/env python3
"""Client driver built on the official Python SDK 1.x (a2a-sdk 1.3.0).

    echo '[{"op":"card"},{"op":"send","text":"echo hi"}]' | \
      .venv/sdk1/bin/python interop/clients/sdk1_client.py --url http://127.0.0.1:PORT --binding rest

`--binding grpc` uses the SDK's gRPC transport (the `grpc` extra) on the card's GRPC interface.

Fetches the card with the SDK's A2ACardResolver, keeps only the interfaces of
the chosen binding (and `--protocol-version`, if given), and lets the SDK's
ClientFactory pick one and build its transport. A 0.3 interface makes the
SDK use its compat transports (CompatJsonRpcTransport / CompatRestTransport),
so this driver also talks to 0.3 agents. Results are the SDK's protobuf
objects dumped with `MessageToDict` (camelCase, enums as `TASK_STATE_*`).

Ops (see driver_common.py for the runner, refs and output format):
  card                      {}                        -> AgentCard
  send                      {text, blocking?, taskId?, contextId?, historyLength?,
                             messageId?, metadata?, pushUrl?, pushToken?}
                                                      -> {"task":..} | {"message":..}
  stream                    {text, taskId?, contextId?} -> StreamResponse events
  get                       {taskId, historyLength?}  -> Task
  list                      {pageSize?, pageToken?, contextId?, status?,
                             historyLength?, includeArtifacts?} -> ListTasksResponse
  cancel                    {taskId}                  -> Task
  subscribe                 {taskId}                  -> StreamResponse events
  push_set                  {taskId, url, token?, id?} -> TaskPushNotificationConfig
  push_get                  {taskId, id}              -> TaskPushNotificationConfig
  push_list                 {taskId, pageSize?, pageToken?} -> ListTaskPushNotificationConfigsResponse
  push_delete               {taskId, id}              -> null
  extended_card             {}                        -> AgentCard
  raw                       {body, path?, method?, contentType?, headers?}
                            sends `body` (a string, as is) to the chosen interface's URL (+ path)
                            and lets the SDK transport judge the answer: an error status or a
                            JSON-RPC error raises the SDK's own mapped error (malformed JSON,
                            unknown method, unsupported version ...); else -> the JSON body
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import httpx  # noqa: E402
from google.protobuf.json_format import MessageToDict  # noqa: E402

from a2a.client import A2ACardResolver, ClientCallContext, ClientConfig, ClientFactory  # noqa: E402
from a2a.types.a2a_pb2 import (  # noqa: E402
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.client.transports.http_helpers import send_http_request  # noqa: E402
from a2a.utils.errors import A2A_ERROR_MAPPING, JSON_RPC_ERROR_CODE_MAP  # noqa: E402

from driver_common import Runner, parse_args, read_scenario, trace_hooks  # noqa: E402

BINDINGS = {'jsonrpc': 'JSONRPC', 'rest': 'HTTP+JSON', 'grpc': 'GRPC'}


def grpc_channel(url: str) -> Any:
    """An insecure (h2c) gRPC channel to a card's GRPC interface url: `host:port` as the 1.0
    proto asks, or a URL (`http://host:port`), whose scheme and path are dropped."""
    import grpc  # the `grpc` extra; only needed with --binding grpc

    target = url.split('://', 1)[-1].split('/', 1)[0]
    return grpc.aio.insecure_channel(target)


def dump(obj: Any) -> Any:
    if obj is None:
        return None
    return MessageToDict(obj)


def error_to_json(exc: BaseException) -> dict[str, Any]:
    code = None
    http_status = None
    for cls in type(exc).__mro__:
        if cls in JSON_RPC_ERROR_CODE_MAP and code is None:
            code = JSON_RPC_ERROR_CODE_MAP[cls]
        if cls in A2A_ERROR_MAPPING and http_status is None:
            http_status = A2A_ERROR_MAPPING[cls].http_code
    out: dict[str, Any] = {
        'type': type(exc).__name__,
        'code': code,
        'message': getattr(exc, 'message', None) or str(exc),
    }
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, httpx.HTTPStatusError):
            # the status actually received (the SDK's own mapping may differ)
            http_status = cause.response.status_code
            break
        cause = cause.__cause__
    if http_status is not None:
        out['httpStatus'] = http_status
    data = getattr(exc, 'data', None)
    if data is not None:
        out['data'] = data
    if isinstance(exc, TimeoutError):
        out['type'] = 'Timeout'
    return out


class Sdk1Driver:
    def __init__(self, url: str, binding: str, version: str | None, card_path: str | None, trace: bool = False):
        self.url = url.rstrip('/')
        self.binding = BINDINGS[binding]
        self.version = version
        self.card_path = card_path
        self.http = httpx.AsyncClient(
            timeout=httpx.Timeout(60.0, connect=10.0), event_hooks=trace_hooks(trace)
        )
        self.card: AgentCard | None = None
        self.clients: dict[bool, Any] = {}
        self.runner: Runner | None = None

    def ctx(self, spec: dict[str, Any]) -> ClientCallContext:
        assert self.runner is not None
        return ClientCallContext(
            service_parameters=dict(self.runner.headers),
            timeout=float(spec.get('timeout', 60)),
        )

    async def fetch_card(self) -> AgentCard:
        assert self.runner is not None
        resolver = A2ACardResolver(self.http, self.url)
        return await resolver.get_agent_card(
            relative_card_path=self.card_path,
            http_kwargs={'headers': dict(self.runner.headers)},
        )

    async def client(self, streaming: bool) -> Any:
        if streaming in self.clients:
            return self.clients[streaming]
        if self.card is None:
            self.card = await self.fetch_card()
        card = AgentCard()
        card.CopyFrom(self.card)
        keep = [
            i
            for i in self.card.supported_interfaces
            if i.protocol_binding == self.binding
            and (self.version is None or i.protocol_version.startswith(self.version))
        ]
        if not keep:
            offered = [(i.protocol_binding, i.protocol_version, i.url) for i in self.card.supported_interfaces]
            raise ValueError(
                f'card offers no {self.binding} interface'
                + (f' at version {self.version}' if self.version else '')
                + f'; offered: {offered}'
            )
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(keep)
        factory = ClientFactory(
            ClientConfig(
                streaming=streaming,
                httpx_client=self.http,
                supported_protocol_bindings=[self.binding],
                grpc_channel_factory=grpc_channel if self.binding == 'GRPC' else None,
            )
        )
        c = factory.create(card)
        self.clients[streaming] = c
        return c

    @staticmethod
    def message(spec: dict[str, Any]) -> Message:
        m = Message(
            role=Role.ROLE_USER,
            message_id=spec.get('messageId') or str(uuid.uuid4()),
            parts=[Part(text=str(spec.get('text', '')))],
        )
        if spec.get('taskId'):
            m.task_id = spec['taskId']
        if spec.get('contextId'):
            m.context_id = spec['contextId']
        if spec.get('metadata'):
            m.metadata.update(spec['metadata'])
        return m

    def send_request(self, spec: dict[str, Any]) -> SendMessageRequest:
        req = SendMessageRequest(message=self.message(spec))
        if spec.get('blocking') is False:
            req.configuration.return_immediately = True
        if spec.get('historyLength') is not None:
            req.configuration.history_length = int(spec['historyLength'])
        if spec.get('pushUrl'):
            req.configuration.task_push_notification_config.url = spec['pushUrl']
            if spec.get('pushToken'):
                req.configuration.task_push_notification_config.token = spec['pushToken']
        if spec.get('acceptedOutputModes'):
            req.configuration.accepted_output_modes.extend(spec['acceptedOutputModes'])
        return req

    # -- unary ops ---------------------------------------------------------
    async def op_card(self, spec: dict[str, Any], _r: Runner) -> Any:
        self.card = await self.fetch_card()
        return dump(self.card)

    async def op_send(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        last = None
        async for resp in c.send_message(self.send_request(spec), context=self.ctx(spec)):
            last = resp
        return dump(last)

    async def op_get(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        req = GetTaskRequest(id=spec['taskId'])
        if spec.get('historyLength') is not None:
            req.history_length = int(spec['historyLength'])
        return dump(await c.get_task(req, context=self.ctx(spec)))

    async def op_list(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        req = ListTasksRequest()
        if spec.get('pageSize') is not None:
            req.page_size = int(spec['pageSize'])
        if spec.get('pageToken'):
            req.page_token = spec['pageToken']
        if spec.get('contextId'):
            req.context_id = spec['contextId']
        if spec.get('status'):
            req.status = TaskState.Value(spec['status'])
        if spec.get('historyLength') is not None:
            req.history_length = int(spec['historyLength'])
        if spec.get('includeArtifacts') is not None:
            req.include_artifacts = bool(spec['includeArtifacts'])
        return dump(await c.list_tasks(req, context=self.ctx(spec)))

    async def op_cancel(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        return dump(await c.cancel_task(CancelTaskRequest(id=spec['taskId']), context=self.ctx(spec)))

    async def op_push_set(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        cfg = TaskPushNotificationConfig(task_id=spec['taskId'], url=spec['url'])
        if spec.get('id'):
            cfg.id = spec['id']
        if spec.get('token'):
            cfg.token = spec['token']
        if spec.get('authScheme'):
            cfg.authentication.scheme = spec['authScheme']
            cfg.authentication.credentials = spec.get('authCredentials', '')
        return dump(await c.create_task_push_notification_config(cfg, context=self.ctx(spec)))

    async def op_push_get(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        req = GetTaskPushNotificationConfigRequest(task_id=spec['taskId'], id=spec.get('id', ''))
        return dump(await c.get_task_push_notification_config(req, context=self.ctx(spec)))

    async def op_push_list(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        req = ListTaskPushNotificationConfigsRequest(task_id=spec['taskId'])
        if spec.get('pageSize') is not None:
            req.page_size = int(spec['pageSize'])
        if spec.get('pageToken'):
            req.page_token = spec['pageToken']
        t = self.compat_rest(c)
        if t is not None:
            data = await t._execute_request(  # noqa: SLF001
                'GET', f'/v1/tasks/{spec["taskId"]}/pushNotificationConfigs', context=self.ctx(spec)
            )
            return {'via': 'raw', 'configs': data}
        return dump(await c.list_task_push_notification_configs(req, context=self.ctx(spec)))

    async def op_push_delete(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        req = DeleteTaskPushNotificationConfigRequest(task_id=spec['taskId'], id=spec.get('id', ''))
        t = self.compat_rest(c)
        if t is not None:
            await t._execute_request(  # noqa: SLF001
                'DELETE',
                f'/v1/tasks/{spec["taskId"]}/pushNotificationConfigs/{spec.get("id", "")}',
                context=self.ctx(spec),
            )
            return {'via': 'raw', 'result': None}
        await c.delete_task_push_notification_config(req, context=self.ctx(spec))
        return None

    @staticmethod
    def compat_rest(c: Any) -> Any:
        """The 0.3 compat REST transport, when that is the one in use: a2a-sdk 1.3.0's
        CompatRestTransport raises NotImplementedError for list/delete push configs (0.3 HTTP+JSON
        has both), so those two ops go through its own request helper (`"via": "raw"`)."""
        t = c._transport  # noqa: SLF001
        while hasattr(t, '_base'):
            t = t._base  # noqa: SLF001
        return t if type(t).__name__ == 'CompatRestTransport' else None

    async def op_extended_card(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        return dump(await c.get_extended_agent_card(GetExtendedAgentCardRequest(), context=self.ctx(spec)))

    async def op_raw(self, spec: dict[str, Any], _r: Runner) -> Any:
        assert self.runner is not None
        if self.binding == 'GRPC':
            raise ValueError('raw HTTP bodies are not available over gRPC')
        c = await self.client(streaming=False)
        t = c._transport  # noqa: SLF001 - the transport's own URL and error mapping
        while hasattr(t, '_base'):  # the tenant decorator
            t = t._base  # noqa: SLF001
        compat = type(t).__name__.startswith('Compat')
        headers = {
            'Content-Type': spec.get('contentType')
            or ('application/json' if compat or self.binding == 'JSONRPC' else 'application/a2a+json'),
            'A2A-Version': '0.3' if compat else '1.0',
            **self.runner.headers,
            **(spec.get('headers') or {}),
        }
        request = self.http.build_request(
            spec.get('method', 'POST'),
            t.url.rstrip('/') + spec.get('path', '') if spec.get('path') else t.url,
            content=str(spec.get('body', '')).encode(),
            headers=headers,
        )
        data = await send_http_request(self.http, request, getattr(t, '_handle_http_error', None))
        if isinstance(data, dict) and isinstance(data.get('error'), dict) and self.binding == 'JSONRPC':
            raise t._create_jsonrpc_error(data['error'])  # noqa: SLF001
        return data

    # -- streaming ops -----------------------------------------------------
    async def op_stream(self, spec: dict[str, Any], _r: Runner) -> AsyncIterator[Any]:
        c = await self.client(streaming=True)
        async for resp in c.send_message(self.send_request(spec), context=self.ctx(spec)):
            yield dump(resp)

    async def op_subscribe(self, spec: dict[str, Any], _r: Runner) -> AsyncIterator[Any]:
        c = await self.client(streaming=True)
        async for resp in c.subscribe(SubscribeToTaskRequest(id=spec['taskId']), context=self.ctx(spec)):
            yield dump(resp)


async def main() -> int:
    args = parse_args('a2a-sdk 1.x client driver')
    ops = None if args.interactive else read_scenario(args)
    d = Sdk1Driver(args.url, args.binding, args.protocol_version, args.card_path, args.trace)
    unary = {
        name[3:]: getattr(d, name)
        for name in dir(d)
        if name.startswith('op_') and name not in ('op_stream', 'op_subscribe')
    }
    streams = {'stream': d.op_stream, 'subscribe': d.op_subscribe}
    runner = Runner(unary, streams, error_to_json, debug=args.debug)
    d.runner = runner
    try:
        if ops is None:
            await runner.run_interactive()
        else:
            await runner.run(ops)
    finally:
        for c in d.clients.values():
            try:
                await c.close()
            except Exception:  # noqa: BLE001
                pass
        await d.http.aclose()
    return 0


if __name__ == '__main__':
    sys.exit(asyncio.run(main()))
