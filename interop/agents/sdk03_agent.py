#!/usr/bin/env python3
"""Reference A2A agent built with the official Python SDK 0.3.x (a2a-sdk 0.3.26).

Run with the sdk03 venv:  .venv/sdk03/bin/python interop/agents/sdk03_agent.py --port 0
Prints `LISTENING http://127.0.0.1:PORT` once ready; stops on SIGTERM or stdin EOF.

Serves on one port (protocol 0.3 only; the SDK ignores `A2A-Version`):
* `GET /.well-known/agent-card.json` (also the deprecated `/.well-known/agent.json`)
* JSON-RPC at `POST /` (A2AStarletteApplication routes), and the deprecated
  `GET /agent/authenticatedExtendedCard`
* HTTP+JSON at `/v1/message:send`, `/v1/tasks/{id}`, `/v1/card`, ...
  (A2ARESTFastAPIApplication)

Behaviour keyed on the user text: same script as sdk1_agent.py (echo X,
stream N, slow [S], input, fail, message X, ext, and the check table's
`quick ...` and `... report ...`); see interop/README.md.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import httpx  # noqa: E402

from a2a.server.agent_execution import AgentExecutor, RequestContext  # noqa: E402
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication  # noqa: E402
from a2a.server.events import EventQueue  # noqa: E402
from a2a.server.request_handlers import DefaultRequestHandler  # noqa: E402
from a2a.server.tasks import (  # noqa: E402
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (  # noqa: E402
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    FilePart,
    FileWithBytes,
    In,
    SecurityScheme,
    Message,
    Part,
    Role,
    TaskState,
    TextPart,
)
from a2a.utils import new_task  # noqa: E402

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
    return [Part(root=TextPart(text=text))]


async def write_report(updater: TaskUpdater, text: str) -> None:
    """Progress, the `report.txt` artifact, then the format question (INPUT_REQUIRED)."""
    for step in REPORT_STEPS:
        await updater.update_status(
            TaskState.working, updater.new_agent_message(text_parts(step))
        )
    if 'inline' in text:
        part = Part(root=TextPart(text=report_body(text).decode()))
    else:
        data = base64.b64encode(report_body(text)).decode()
        file = FileWithBytes(bytes=data, mime_type='text/plain', name=REPORT_ARTIFACT)
        part = Part(root=FilePart(file=file))
    await updater.add_artifact(
        [part], artifact_id=REPORT_ARTIFACT, name=REPORT_ARTIFACT, last_chunk=True
    )
    # final=True: the 0.3 SDK ends streams / blocking sends on final events.
    await updater.requires_input(
        updater.new_agent_message(text_parts(REPORT_QUESTION)), final=True
    )


async def answer_report(updater: TaskUpdater, text: str) -> None:
    """The answer to the format question: a status, two `summary` chunks, completed."""
    await updater.update_status(
        TaskState.working, updater.new_agent_message(text_parts('converting the report'))
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
                    role=Role.agent,
                    message_id=str(uuid.uuid4()),
                    context_id=context.context_id,
                    parts=text_parts(reply),
                )
            )
            return

        if task is None:
            assert context.message is not None
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        if task.status.state == TaskState.input_required:
            if any(a.name == REPORT_ARTIFACT for a in task.artifacts or []):
                await answer_report(updater, text)
            else:
                await updater.complete(updater.new_agent_message(text_parts(f'got {text}')))
            return

        if cmd == 'stream':
            n = int(arg) if arg.strip().isdigit() else 3
            for i in range(1, n + 1):
                await updater.update_status(
                    TaskState.working,
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
                    TaskState.working,
                    updater.new_agent_message(text_parts(f'slow {i}/{seconds}')),
                )
                await asyncio.sleep(1)
            await updater.complete(updater.new_agent_message(text_parts('slow done')))
        elif cmd == 'input':
            # final=True: the 0.3 SDK ends streams / blocking sends on final events.
            await updater.requires_input(
                updater.new_agent_message(text_parts('need input')), final=True
            )
        elif cmd == 'fail':
            await updater.failed(updater.new_agent_message(text_parts('failed on request')))
        elif cmd == 'ext':
            requested = sorted(context.requested_extensions)
            for uri in requested:
                if uri == EXTENSION_URI:
                    context.add_activated_extension(uri)
            got = ','.join(requested) or 'none'
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


class FollowUpHandler(DefaultRequestHandler):
    """a2a-sdk 0.3.26's handler, with its follow-up race closed.

    After a `message/stream` ends (say on INPUT_REQUIRED), the SDK closes the task's event
    queue in a background task. A follow-up message that arrives first taps the closing queue,
    sees no event and fails with -32603 (InternalError, empty message): seen with six clients
    calling at once. So a follow-up to a task whose turn has ended waits (at most ~5 s) until
    that turn's producer is unregistered.
    """

    async def _setup_message_execution(self, params, context=None):  # noqa: ANN001, ANN202
        task_id = params.message.task_id
        for _ in range(500):
            if not task_id:
                break
            async with self._running_agents_lock:
                leftover = task_id in self._running_agents
            task = await self.task_store.get(task_id, context) if leftover else None
            if task is None or task.status.state != TaskState.input_required:
                break
            await asyncio.sleep(0.01)
        return await super()._setup_message_execution(params, context)


def build_card(
    base_url: str,
    extended: bool = False,
    api_key: bool = False,
    caps: dict[str, bool] | None = None,
) -> AgentCard:
    caps = caps or {}
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
    return AgentCard(
        name='sdk03-reference-agent' + (' (extended)' if extended else ''),
        description='Reference agent built with a2a-sdk 0.3.x for a2a-rs interop tests',
        version='0.3.26',
        protocol_version='0.3.0',
        url=f'{base_url}/',
        preferred_transport='JSONRPC',
        additional_interfaces=[
            AgentInterface(transport='JSONRPC', url=f'{base_url}/'),
            AgentInterface(transport='HTTP+JSON', url=base_url),
        ],
        capabilities=AgentCapabilities(
            streaming=caps.get('streaming', True),
            push_notifications=caps.get('push', True),
            extensions=[
                AgentExtension(
                    uri=EXTENSION_URI,
                    description='Echoed back by the `ext` command',
                    required=False,
                )
            ],
        ),
        security_schemes=(
            {'apiKey': SecurityScheme(root=APIKeySecurityScheme(in_=In.header, name=API_KEY_HEADER))}
            if api_key
            else None
        ),
        security=[{'apiKey': []}] if api_key else None,
        supports_authenticated_extended_card=caps.get('extended', True),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=skills,
    )


def build_app(  # noqa: ANN201
    base_url: str, api_key: bool = False, caps: dict[str, bool] | None = None
):
    caps = caps or {}
    card = build_card(base_url, api_key=api_key, caps=caps)
    extended = (
        build_card(base_url, extended=True, api_key=api_key, caps=caps)
        if caps.get('extended', True)
        else None
    )
    push_store = push_sender = None
    if caps.get('push', True):
        push_store = InMemoryPushNotificationConfigStore()
        # The 0.3 SDK's sender has no URL screening: loopback webhooks are delivered.
        push_sender = BasePushNotificationSender(httpx.AsyncClient(), push_store)
    handler = FollowUpHandler(
        agent_executor=ReferenceExecutor(),
        task_store=InMemoryTaskStore(),
        push_config_store=push_store,
        push_sender=push_sender,
    )
    # FastAPI app with the HTTP+JSON routes (/v1/...), then the JSON-RPC
    # routes (POST /, card, deprecated extended-card path) added to it.
    app = A2ARESTFastAPIApplication(
        agent_card=card, http_handler=handler, extended_agent_card=extended
    ).build()
    A2AStarletteApplication(
        agent_card=card, http_handler=handler, extended_agent_card=extended
    ).add_routes_to_app(app)
    return app


if __name__ == '__main__':
    args = parse_args('a2a-sdk 0.3.x reference agent')
    caps = {
        'streaming': not args.no_streaming,
        'push': not args.no_push,
        'extended': not args.no_extended_card,
    }
    serve(lambda base: build_app(base, api_key=bool(args.api_key), caps=caps), args)
