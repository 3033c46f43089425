#!/usr/bin/env python3
"""Reference A2A agent built with the official Python SDK 1.x (a2a-sdk 1.3.0).

Run with the sdk1 venv:  .venv/sdk1/bin/python interop/agents/sdk1_agent.py --port 0
Prints `LISTENING http://127.0.0.1:PORT` once ready; stops on SIGTERM or stdin EOF.

With `--grpc both` a second loopback port serves the 1.0 gRPC service (the card lists it first);
`--grpc only` lists the gRPC interface alone (a gRPC-only peer; the HTTP bindings still answer).

Serves on one port:
* `GET /.well-known/agent-card.json` (1.0 card + the SDK's injected 0.3 fields)
* JSON-RPC at `POST /` (1.0; 0.3 too unless --no-compat: the SDK picks the
  dialect per request from the `A2A-Version` header, missing = 0.3)
* HTTP+JSON 1.0 at `/message:send`, `/tasks/{id}`, ... (and `/{tenant}/...`)
* HTTP+JSON 0.3 at `/v1/message:send`, ... (unless --no-compat)

Behaviour is keyed on the text of the user message (see interop/README.md):
  echo X      -> Task completed, artifact "echo" = X, status message X
  stream N    -> Task; N working updates; artifact "stream" in 2 chunks
                 (append=false,lastChunk=false then append=true,lastChunk=true);
                 completed
  slow [S]    -> Task working for S seconds (default 30), one update per second;
                 cancel -> canceled
  input       -> input-required; the next message on the same task completes it
  fail        -> failed
  message X   -> a Message reply (no task) with text X
  ext         -> Task completed with text `extensions: <requested URIs, sorted>` (or `none`)
  anything else -> like echo of the whole text
and the reference behaviour of the SDK check table (a2a-agent/tests/common/reference.rs):
  quick ...   -> a Message `quick answer to: <text>` (no task)
  ... report ... -> progress, artifact `report.txt` (a file part; text if the text says
                 `inline`), input-required `Which format ...`; the answer emits a status, a
                 two-chunk `summary` artifact (`format: X`, ` (done)`) and completes
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import httpx  # noqa: E402
from starlette.applications import Starlette  # noqa: E402

from a2a.helpers.proto_helpers import new_task_from_user_message  # noqa: E402
from a2a.server.agent_execution import AgentExecutor, RequestContext  # noqa: E402
from a2a.server.events.event_queue_v2 import EventQueue  # noqa: E402
from a2a.server.request_handlers import DefaultRequestHandler  # noqa: E402
from a2a.server.routes import (  # noqa: E402
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (  # noqa: E402
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types.a2a_pb2 import (  # noqa: E402
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
    Message,
    Part,
    Role,
    TaskState,
)

from common import (  # noqa: E402
    API_KEY_HEADER,
    EXTENSION_URI,
    REPORT_ARTIFACT,
    REPORT_QUESTION,
    REPORT_STEPS,
    SUMMARY_ARTIFACT,
    is_quick,
    is_report,
    parse_args,
    report_body,
    serve,
)

STREAM_STEP_S = 0.05


def text_parts(text: str) -> list[Part]:
    return [Part(text=text)]


async def write_report(updater: TaskUpdater, text: str) -> None:
    """Progress, the `report.txt` artifact, then the format question (INPUT_REQUIRED)."""
    for step in REPORT_STEPS:
        await updater.update_status(
            TaskState.TASK_STATE_WORKING, updater.new_agent_message(text_parts(step))
        )
    if 'inline' in text:
        part = Part(text=report_body(text).decode())
    else:
        part = Part(raw=report_body(text), media_type='text/plain', filename=REPORT_ARTIFACT)
    await updater.add_artifact(
        [part], artifact_id=REPORT_ARTIFACT, name=REPORT_ARTIFACT, last_chunk=True
    )
    await updater.requires_input(updater.new_agent_message(text_parts(REPORT_QUESTION)))


async def answer_report(updater: TaskUpdater, text: str) -> None:
    """The answer to the format question: a status, two `summary` chunks, completed."""
    await updater.update_status(
        TaskState.TASK_STATE_WORKING,
        updater.new_agent_message(text_parts('converting the report')),
    )
    for chunk, more in ((f'format: {text}', False), (' (done)', True)):
        await updater.add_artifact(
            text_parts(chunk),
            artifact_id=SUMMARY_ARTIFACT,
            name=SUMMARY_ARTIFACT,
            append=more,
            last_chunk=more,
        )
    await updater.complete(updater.new_agent_message(text_parts(f'Report ready as {text}')))


class ReferenceExecutor(AgentExecutor):
    """Scripted behaviour keyed on the first word of the user text."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input().strip()
        cmd, _, arg = text.partition(' ')
        task = context.current_task

        if task is None and (cmd == 'message' or is_quick(text)):
            reply = arg if cmd == 'message' else f'quick answer to: {text}'
            await event_queue.enqueue_event(
                Message(
                    role=Role.ROLE_AGENT,
                    message_id=str(uuid.uuid4()),
                    context_id=context.context_id or '',
                    parts=text_parts(reply),
                )
            )
            return

        if task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            task.id = context.task_id or task.id
            task.context_id = context.context_id or task.context_id
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            if any(a.name == REPORT_ARTIFACT for a in task.artifacts):
                await answer_report(updater, text)
            else:
                await updater.complete(updater.new_agent_message(text_parts(f'got {text}')))
            return

        if cmd == 'stream':
            n = int(arg) if arg.strip().isdigit() else 3
            for i in range(1, n + 1):
                await updater.update_status(
                    TaskState.TASK_STATE_WORKING,
                    updater.new_agent_message(text_parts(f'working {i}/{n}')),
                )
                await asyncio.sleep(STREAM_STEP_S)
            artifact_id = f'stream-{task.id}'
            await updater.add_artifact(
                text_parts('chunk 1'),
                artifact_id=artifact_id,
                name='stream',
                append=False,
                last_chunk=False,
            )
            await asyncio.sleep(STREAM_STEP_S)
            await updater.add_artifact(
                text_parts('chunk 2'),
                artifact_id=artifact_id,
                name='stream',
                append=True,
                last_chunk=True,
            )
            await updater.complete(updater.new_agent_message(text_parts('done')))
        elif cmd == 'slow':
            seconds = int(arg) if arg.strip().isdigit() else 30
            for i in range(1, seconds + 1):
                await updater.update_status(
                    TaskState.TASK_STATE_WORKING,
                    updater.new_agent_message(text_parts(f'slow {i}/{seconds}')),
                )
                await asyncio.sleep(1)
            await updater.complete(updater.new_agent_message(text_parts('slow done')))
        elif cmd == 'input':
            await updater.requires_input(
                updater.new_agent_message(text_parts('need input'))
            )
        elif cmd == 'fail':
            await updater.failed(updater.new_agent_message(text_parts('failed on request')))
        elif cmd == 'ext':
            got = ','.join(sorted(context.requested_extensions)) or 'none'
            await updater.complete(updater.new_agent_message(text_parts(f'extensions: {got}')))
        elif is_report(text):
            await write_report(updater, text)
        else:
            echoed = arg if cmd == 'echo' else text
            await updater.add_artifact(text_parts(echoed), name='echo')
            await updater.complete(updater.new_agent_message(text_parts(echoed)))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        task_id = context.task_id or (task.id if task else '')
        context_id = context.context_id or (task.context_id if task else '')
        updater = TaskUpdater(event_queue, task_id, context_id)
        await updater.cancel(updater.new_agent_message(text_parts('canceled')))


def build_card(
    base_url: str,
    compat: bool,
    extended: bool = False,
    api_key: bool = False,
    caps: dict[str, bool] | None = None,
    grpc_at: str | None = None,
    grpc_only: bool = False,
) -> AgentCard:
    caps = caps or {}
    interfaces = [
        AgentInterface(url=f'{base_url}/', protocol_binding='JSONRPC', protocol_version='1.0'),
        AgentInterface(url=base_url, protocol_binding='HTTP+JSON', protocol_version='1.0'),
    ]
    if grpc_at:
        grpc_iface = AgentInterface(url=grpc_at, protocol_binding='GRPC', protocol_version='1.0')
        interfaces = [grpc_iface] if grpc_only else [grpc_iface, *interfaces]
    if compat and not grpc_only:
        interfaces += [
            AgentInterface(url=f'{base_url}/', protocol_binding='JSONRPC', protocol_version='0.3'),
            AgentInterface(url=base_url, protocol_binding='HTTP+JSON', protocol_version='0.3'),
        ]
    skills = [
        AgentSkill(
            id='scripted',
            name='Scripted behaviours',
            description='echo X | stream N | slow [S] | input | fail | message X | ext',
            tags=['test'],
            examples=['echo hello', 'stream 3'],
        )
    ]
    if extended:
        skills.append(
            AgentSkill(
                id='extended-only',
                name='Extended-card skill',
                description='Only listed on the extended agent card',
                tags=['extended'],
            )
        )
    card = AgentCard(
        name='sdk1-reference-agent' + (' (extended)' if extended else ''),
        description='Reference agent built with a2a-sdk 1.x for a2a-rs interop tests',
        version='1.3.0',
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(
            streaming=caps.get('streaming', True),
            push_notifications=caps.get('push', True),
            extended_agent_card=caps.get('extended', True),
            extensions=[
                AgentExtension(
                    uri=EXTENSION_URI,
                    description='Echoed back by the `ext` command',
                    required=False,
                )
            ],
        ),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=skills,
    )
    if api_key:
        card.security_schemes['apiKey'].CopyFrom(
            SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(
                    location='header', name=API_KEY_HEADER
                )
            )
        )
        card.security_requirements.append(
            SecurityRequirement(schemes={'apiKey': StringList()})
        )
    return card


def free_port() -> str:
    """A free loopback `host:port` for the gRPC server. grpc.aio binds its server to the event
    loop it is created in, so the server is made by the app's lifespan (in uvicorn's loop), after
    the card that names its port."""
    import socket

    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return f'127.0.0.1:{s.getsockname()[1]}'


def build_app(
    base_url: str,
    compat: bool,
    api_key: bool = False,
    caps: dict[str, bool] | None = None,
    grpc: str | None = None,
) -> Starlette:
    """`grpc`: None, `both` (a second port serves gRPC, listed first in the card) or `only`
    (the card lists the gRPC interface alone; the HTTP bindings still answer)."""
    caps = caps or {}
    grpc_at = free_port() if grpc else None
    card = build_card(
        base_url, compat, api_key=api_key, caps=caps, grpc_at=grpc_at, grpc_only=grpc == 'only'
    )
    push_store = push_sender = None
    if caps.get('push', True):
        push_store = InMemoryPushNotificationConfigStore()
        # No push_url_validator: loopback webhook URLs are allowed (test use only).
        push_sender = BasePushNotificationSender(httpx.AsyncClient(), push_store)
    extended = None
    if caps.get('extended', True):
        extended = build_card(
            base_url,
            compat,
            extended=True,
            api_key=api_key,
            caps=caps,
            grpc_at=grpc_at,
            grpc_only=grpc == 'only',
        )
    handler = DefaultRequestHandler(
        agent_executor=ReferenceExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=push_store,
        push_sender=push_sender,
        extended_agent_card=extended,
    )
    routes = []
    routes += create_agent_card_routes(card)
    routes += create_jsonrpc_routes(handler, rpc_url='/', enable_v0_3_compat=compat)
    routes += create_rest_routes(handler, enable_v0_3_compat=compat)
    if grpc_at is None:
        return Starlette(routes=routes)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> Any:
        import grpc as grpc_lib

        from a2a.server.request_handlers import GrpcHandler
        from a2a.types import a2a_pb2_grpc

        grpc_srv = grpc_lib.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_srv)
        grpc_srv.add_insecure_port(grpc_at)
        await grpc_srv.start()
        try:
            yield
        finally:
            await grpc_srv.stop(0)

    return Starlette(routes=routes, lifespan=lifespan)


if __name__ == '__main__':
    args = parse_args('a2a-sdk 1.x reference agent')
    serve(
        lambda base: build_app(
            base,
            compat=not args.no_compat,
            api_key=bool(args.api_key),
            caps={
                'streaming': not args.no_streaming,
                'push': not args.no_push,
                'extended': not args.no_extended_card,
            },
            grpc=args.grpc,
        ),
        args,
    )
