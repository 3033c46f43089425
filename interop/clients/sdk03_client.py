#!/usr/bin/env python3
"""Client driver built on the official Python SDK 0.3.x (a2a-sdk 0.3.26).

    echo '[{"op":"card"},{"op":"send","text":"echo hi"}]' | \
      .venv/sdk03/bin/python interop/clients/sdk03_client.py --url http://127.0.0.1:PORT --binding rest

Fetches the card with the SDK's A2ACardResolver and builds the client with
the SDK's ClientFactory restricted to the chosen transport (`JSONRPC` or
`HTTP+JSON`), which the factory matches against the card's `url` +
`preferredTransport` and `additionalInterfaces`. Results are the SDK's
pydantic models dumped with `model_dump(mode='json', by_alias=True,
exclude_none=True)` (camelCase, `kind` discriminators, lower-case states).

The 0.3 SDK `Client` has no list-tasks, list-push-configs or delete-push-config
call (the protocol 0.3 has no tasks/list at all). `push_list` and `push_delete`
are therefore sent with the SDK's own request/response models through the
transport's raw request helper (JSON-RPC) or the transport's httpx client
(HTTP+JSON); their records carry `"via": "raw"`. `list` answers
`{"type": "Unsupported"}`.

Ops: card, send, stream, get, cancel, subscribe (= resubscribe), push_set,
push_get, push_list, push_delete, extended_card (the SDK's `get_card()`, which
fetches the authenticated extended card when the card says it has one),
raw {body, path?, method?, contentType?, headers?} (sends `body`, a string, as is
to the transport's URL + path; an error status raises the SDK's A2AClientHTTPError,
a JSON-RPC error body is read with the SDK's JSONRPCErrorResponse model and raised
as A2AClientJSONRPCError, as the transport does).
Arguments as in sdk1_client.py.
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

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory  # noqa: E402
from a2a.client.errors import (  # noqa: E402
    A2AClientHTTPError,
    A2AClientJSONRPCError,
)
from a2a.client.middleware import ClientCallContext  # noqa: E402
from a2a.types import (  # noqa: E402
    AgentCard,
    DeleteTaskPushNotificationConfigParams,
    DeleteTaskPushNotificationConfigRequest,
    DeleteTaskPushNotificationConfigResponse,
    GetTaskPushNotificationConfigParams,
    JSONRPCErrorResponse,
    ListTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigResponse,
    Message,
    MessageSendConfiguration,
    Part,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Role,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TextPart,
)

from driver_common import Runner, parse_args, read_scenario, trace_hooks  # noqa: E402

BINDINGS = {'jsonrpc': 'JSONRPC', 'rest': 'HTTP+JSON'}


class Unsupported(Exception):
    """The 0.3 SDK client offers no such operation."""


def dump(obj: Any) -> Any:
    if obj is None:
        return None
    if isinstance(obj, list):
        return [dump(o) for o in obj]
    if hasattr(obj, 'model_dump'):
        return obj.model_dump(mode='json', by_alias=True, exclude_none=True)
    return obj


def error_to_json(exc: BaseException) -> dict[str, Any]:
    out: dict[str, Any] = {'type': type(exc).__name__, 'code': None, 'message': str(exc)}
    if isinstance(exc, A2AClientJSONRPCError):
        err = exc.error
        root = getattr(err, 'root', err)
        out['code'] = getattr(root, 'code', None)
        out['message'] = getattr(root, 'message', None) or str(exc)
        out['a2aType'] = type(root).__name__
        data = getattr(root, 'data', None)
        if data is not None:
            out['data'] = data
    elif isinstance(exc, A2AClientHTTPError):
        out['httpStatus'] = exc.status_code
        out['message'] = exc.message
    elif isinstance(exc, TimeoutError):
        out['type'] = 'Timeout'
    return out


class Sdk03Driver:
    def __init__(self, url: str, binding: str, card_path: str | None, trace: bool = False):
        self.url = url.rstrip('/')
        self.transport_name = BINDINGS[binding]
        self.binding = binding
        self.card_path = card_path
        self.http = httpx.AsyncClient(
            timeout=httpx.Timeout(60.0, connect=10.0), event_hooks=trace_hooks(trace)
        )
        self.card: AgentCard | None = None
        self.clients: dict[bool, Any] = {}
        self.runner: Runner | None = None

    def http_kwargs(self) -> dict[str, Any]:
        assert self.runner is not None
        return {'headers': dict(self.runner.headers)} if self.runner.headers else {}

    def ctx(self) -> ClientCallContext:
        return ClientCallContext(state={'http_kwargs': self.http_kwargs()})

    async def fetch_card(self) -> AgentCard:
        kwargs: dict[str, Any] = {'http_kwargs': self.http_kwargs()}
        if self.card_path:
            kwargs['relative_card_path'] = self.card_path
        return await A2ACardResolver(self.http, self.url).get_agent_card(**kwargs)

    async def client(self, streaming: bool) -> Any:
        if streaming in self.clients:
            return self.clients[streaming]
        if self.card is None:
            self.card = await self.fetch_card()
        factory = ClientFactory(
            ClientConfig(
                streaming=streaming,
                httpx_client=self.http,
                supported_transports=[self.transport_name],
            )
        )
        c = factory.create(self.card.model_copy(deep=True))
        self.clients[streaming] = c
        return c

    @staticmethod
    def message(spec: dict[str, Any]) -> Message:
        return Message(
            role=Role.user,
            message_id=spec.get('messageId') or str(uuid.uuid4()),
            parts=[Part(root=TextPart(text=str(spec.get('text', ''))))],
            task_id=spec.get('taskId') or None,
            context_id=spec.get('contextId') or None,
            metadata=spec.get('metadata') or None,
        )

    @staticmethod
    def configuration(spec: dict[str, Any]) -> MessageSendConfiguration | None:
        fields: dict[str, Any] = {}
        if spec.get('blocking') is not None:
            fields['blocking'] = bool(spec['blocking'])
        if spec.get('historyLength') is not None:
            fields['history_length'] = int(spec['historyLength'])
        if spec.get('pushUrl'):
            fields['push_notification_config'] = PushNotificationConfig(
                url=spec['pushUrl'], token=spec.get('pushToken')
            )
        if spec.get('acceptedOutputModes'):
            fields['accepted_output_modes'] = spec['acceptedOutputModes']
        return MessageSendConfiguration(**fields) if fields else None

    @staticmethod
    def event(ev: Any) -> Any:
        # The SDK yields (Task, update|None) tuples or a Message; print the
        # wire-level object: the update when there is one, else the Task.
        if isinstance(ev, tuple):
            task, update = ev
            return dump(update if update is not None else task)
        return dump(ev)

    # -- unary ops ---------------------------------------------------------
    async def op_card(self, spec: dict[str, Any], _r: Runner) -> Any:
        self.card = await self.fetch_card()
        return dump(self.card)

    async def op_send(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        configuration = self.configuration(spec)
        if spec.get('pushUrl') and self.binding == 'rest':
            # a2a-sdk 0.3.26 bug: BaseClient.send_message merges a per-call configuration with
            # `model_copy(update=model_dump())`, which leaves the push config a dict, and the
            # REST transport's proto conversion then fails ("'dict' object has no attribute
            # 'authentication'"). The SDK's other way in, ClientConfig.push_notification_configs,
            # keeps the model: a one-off client carries the push config there.
            assert self.card is not None and configuration is not None
            push = configuration.push_notification_config
            configuration = self.configuration({**spec, 'pushUrl': None})
            c = ClientFactory(
                ClientConfig(
                    streaming=False,
                    httpx_client=self.http,
                    supported_transports=[self.transport_name],
                    push_notification_configs=[push] if push else [],
                )
            ).create(self.card.model_copy(deep=True))
        last = None
        async for ev in c.send_message(
            self.message(spec), configuration=configuration, context=self.ctx()
        ):
            last = ev
        return self.event(last)

    async def op_get(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        hl = spec.get('historyLength')
        req = TaskQueryParams(id=spec['taskId'], history_length=int(hl) if hl is not None else None)
        return dump(await c.get_task(req, context=self.ctx()))

    async def op_list(self, spec: dict[str, Any], _r: Runner) -> Any:
        raise Unsupported('a2a-sdk 0.3 has no tasks/list (not in protocol 0.3)')

    async def op_cancel(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        return dump(await c.cancel_task(TaskIdParams(id=spec['taskId']), context=self.ctx()))

    async def op_push_set(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        cfg = TaskPushNotificationConfig(
            task_id=spec['taskId'],
            push_notification_config=PushNotificationConfig(
                url=spec['url'],
                token=spec.get('token'),
                id=spec.get('id'),
                authentication=(
                    PushNotificationAuthenticationInfo(
                        schemes=[spec['authScheme']], credentials=spec.get('authCredentials')
                    )
                    if spec.get('authScheme')
                    else None
                ),
            ),
        )
        return dump(await c.set_task_callback(cfg, context=self.ctx()))

    async def op_push_get(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        req = GetTaskPushNotificationConfigParams(
            id=spec['taskId'], push_notification_config_id=spec.get('id')
        )
        return dump(await c.get_task_callback(req, context=self.ctx()))

    def _transport(self, c: Any) -> Any:
        return c._transport  # noqa: SLF001 - the SDK client lacks these calls

    async def op_push_list(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        t = self._transport(c)
        if self.binding == 'jsonrpc':
            req = ListTaskPushNotificationConfigRequest(
                id=str(uuid.uuid4()), params=ListTaskPushNotificationConfigParams(id=spec['taskId'])
            )
            data = await t._send_request(  # noqa: SLF001
                req.model_dump(mode='json', exclude_none=True), self.http_kwargs()
            )
            resp = ListTaskPushNotificationConfigResponse.model_validate(data)
            if isinstance(resp.root, JSONRPCErrorResponse):
                raise A2AClientJSONRPCError(resp.root)
            return {'via': 'raw', 'configs': dump(resp.root.result)}
        data = await t._send_get_request(  # noqa: SLF001
            f'/v1/tasks/{spec["taskId"]}/pushNotificationConfigs', {}, self.http_kwargs()
        )
        # 0.3 HTTP+JSON bodies are proto-JSON (`name: tasks/{id}/pushNotificationConfigs/{cid}`),
        # not the JSON-RPC model, so the body is passed through as received.
        if isinstance(data, dict) and isinstance(data.get('configs'), list):
            data = data['configs']  # the 1.x SDK's 0.3 compat wraps the list
        return {'via': 'raw', 'configs': data}

    async def op_push_delete(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        t = self._transport(c)
        if self.binding == 'jsonrpc':
            req = DeleteTaskPushNotificationConfigRequest(
                id=str(uuid.uuid4()),
                params=DeleteTaskPushNotificationConfigParams(
                    id=spec['taskId'], push_notification_config_id=spec.get('id', '')
                ),
            )
            data = await t._send_request(  # noqa: SLF001
                req.model_dump(mode='json', exclude_none=True), self.http_kwargs()
            )
            if 'error' not in data and 'result' not in data:
                # Quirk of the 0.3.26 server: the success response drops
                # `"result": null` (exclude_none), so it has neither member.
                return {'via': 'raw', 'result': None, 'quirk': 'response had no result member'}
            resp = DeleteTaskPushNotificationConfigResponse.model_validate(data)
            if isinstance(resp.root, JSONRPCErrorResponse):
                raise A2AClientJSONRPCError(resp.root)
            return {'via': 'raw', 'result': dump(resp.root.result)}
        request = t.httpx_client.build_request(
            'DELETE',
            f'{t.url}/v1/tasks/{spec["taskId"]}/pushNotificationConfigs/{spec.get("id", "")}',
            **self.http_kwargs(),
        )
        response = await t.httpx_client.send(request)
        if response.status_code >= 400:
            raise A2AClientHTTPError(response.status_code, response.text)
        return {'via': 'raw', 'result': None}

    async def op_extended_card(self, spec: dict[str, Any], _r: Runner) -> Any:
        c = await self.client(streaming=False)
        return dump(await c.get_card(context=self.ctx()))

    async def op_raw(self, spec: dict[str, Any], _r: Runner) -> Any:
        assert self.runner is not None
        c = await self.client(streaming=False)
        t = self._transport(c)
        headers = {
            'Content-Type': spec.get('contentType') or 'application/json',
            **self.runner.headers,
            **(spec.get('headers') or {}),
        }
        url = t.url.rstrip('/') + spec['path'] if spec.get('path') else t.url
        request = t.httpx_client.build_request(
            spec.get('method', 'POST'), url, content=str(spec.get('body', '')).encode(), headers=headers
        )
        if self.binding == 'rest':
            return await t._send_request(request)  # noqa: SLF001
        response = await t.httpx_client.send(request)
        if response.status_code >= 400:
            raise A2AClientHTTPError(response.status_code, response.text)
        data = response.json()
        if isinstance(data, dict) and 'error' in data:
            raise A2AClientJSONRPCError(JSONRPCErrorResponse.model_validate(data))
        return data

    # -- streaming ops -----------------------------------------------------
    async def op_stream(self, spec: dict[str, Any], _r: Runner) -> AsyncIterator[Any]:
        c = await self.client(streaming=True)
        async for ev in c.send_message(
            self.message(spec), configuration=self.configuration(spec), context=self.ctx()
        ):
            yield self.event(ev)

    async def op_subscribe(self, spec: dict[str, Any], _r: Runner) -> AsyncIterator[Any]:
        c = await self.client(streaming=True)
        async for ev in c.resubscribe(TaskIdParams(id=spec['taskId']), context=self.ctx()):
            yield self.event(ev)


async def main() -> int:
    args = parse_args('a2a-sdk 0.3.x client driver')
    if args.protocol_version and not args.protocol_version.startswith('0.3'):
        print('sdk03 client speaks protocol 0.3 only', file=sys.stderr)
        return 2
    ops = None if args.interactive else read_scenario(args)
    d = Sdk03Driver(args.url, args.binding, args.card_path, args.trace)
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
        await d.http.aclose()
    return 0


if __name__ == '__main__':
    sys.exit(asyncio.run(main()))
