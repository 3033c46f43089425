#!/usr/bin/env python3
"""External oracle for a2a-translate: the official a2a-sdk (1.x) 0.3 compat conversions.

Usage: python oracle.py FIXTURE_DIR  (run with the a2a-sdk 1.x venv, `.venv/sdk1/bin/python`)

For every fixture (conformance/fixtures/translate/*.json) and every direction the fixture
has a source document for, this converts the source document with the SDK's own code
(`a2a.compat.v0_3.conversions`, plus `proto_utils` for the 0.3 REST dialect) and prints one
JSON object per line:

  {"name": ..., "direction": "to_v1"|"to_v03", "status": "ok", "output": <document>}
  {"name": ..., "direction": ..., "status": "error", "error": "<exception text>"}
  {"name": ..., "direction": ..., "status": "unsupported", "reason": "<why the SDK has no counterpart>"}

Numbers that went through google.protobuf.Struct come back as floats; integral floats are
printed as integers so that the comparison is about values, not about protobuf's number model.
"""
import json
import os
import sys
import traceback

from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.compat.v0_3 import a2a_v0_3_pb2 as pb03
from a2a.compat.v0_3 import conversions as conv
from a2a.compat.v0_3 import proto_utils
from a2a.compat.v0_3 import types as t03
from a2a.types import a2a_pb2 as pb1


class Unsupported(Exception):
    pass


def norm(x):
    if isinstance(x, float) and x.is_integer():
        return int(x)
    if isinstance(x, list):
        return [norm(v) for v in x]
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items()}
    return x


def d1(msg):
    return MessageToDict(msg)


def d03(model):
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


# method tables: 0.3 name -> (1.0 name, pydantic request model, to_core, 1.0 pb request type, to_compat)
METHODS = {
    "message/send": ("SendMessage", t03.SendMessageRequest, conv.to_core_send_message_request, pb1.SendMessageRequest, conv.to_compat_send_message_request),
    "message/stream": ("SendStreamingMessage", t03.SendStreamingMessageRequest, conv.to_core_send_message_request, pb1.SendMessageRequest, conv.to_compat_send_message_request),
    "tasks/get": ("GetTask", t03.GetTaskRequest, conv.to_core_get_task_request, pb1.GetTaskRequest, conv.to_compat_get_task_request),
    "tasks/cancel": ("CancelTask", t03.CancelTaskRequest, conv.to_core_cancel_task_request, pb1.CancelTaskRequest, conv.to_compat_cancel_task_request),
    "tasks/resubscribe": ("SubscribeToTask", t03.TaskResubscriptionRequest, conv.to_core_subscribe_to_task_request, pb1.SubscribeToTaskRequest, conv.to_compat_subscribe_to_task_request),
    "tasks/pushNotificationConfig/set": ("CreateTaskPushNotificationConfig", t03.SetTaskPushNotificationConfigRequest, conv.to_core_create_task_push_notification_config_request, pb1.TaskPushNotificationConfig, conv.to_compat_create_task_push_notification_config_request),
    "tasks/pushNotificationConfig/get": ("GetTaskPushNotificationConfig", t03.GetTaskPushNotificationConfigRequest, conv.to_core_get_task_push_notification_config_request, pb1.GetTaskPushNotificationConfigRequest, conv.to_compat_get_task_push_notification_config_request),
    "tasks/pushNotificationConfig/list": ("ListTaskPushNotificationConfigs", t03.ListTaskPushNotificationConfigRequest, conv.to_core_list_task_push_notification_config_request, pb1.ListTaskPushNotificationConfigsRequest, conv.to_compat_list_task_push_notification_config_request),
    "tasks/pushNotificationConfig/delete": ("DeleteTaskPushNotificationConfig", t03.DeleteTaskPushNotificationConfigRequest, conv.to_core_delete_task_push_notification_config_request, pb1.DeleteTaskPushNotificationConfigRequest, conv.to_compat_delete_task_push_notification_config_request),
    "agent/getAuthenticatedExtendedCard": ("GetExtendedAgentCard", t03.GetAuthenticatedExtendedCardRequest, conv.to_core_get_extended_agent_card_request, pb1.GetExtendedAgentCardRequest, conv.to_compat_get_extended_agent_card_request),
}
BY_V1 = {v[0]: (k,) + v[1:] for k, v in METHODS.items() if k != "message/stream"}
BY_V1["SendStreamingMessage"] = ("message/stream",) + METHODS["message/stream"][1:]


def request_to_v1(doc):
    name, model, to_core, _pb, _back = METHODS[doc["method"]]
    core = to_core(model.model_validate(doc))
    out = {"jsonrpc": "2.0", "id": doc["id"], "method": name}
    params = d1(core)
    if params or "params" in doc and name != "GetExtendedAgentCard":
        out["params"] = params
    return out


def request_to_v03(doc):
    if doc["method"] not in BY_V1:
        raise Unsupported(f"the SDK has no 0.3 form of {doc['method']}")
    name, _model, _core, pb, back = BY_V1[doc["method"]]
    req = ParseDict(doc.get("params", {}), pb())
    return d03(back(req, doc["id"]))


def stream_event_v03_model(doc):
    kinds = {"task": t03.Task, "message": t03.Message, "status-update": t03.TaskStatusUpdateEvent, "artifact-update": t03.TaskArtifactUpdateEvent}
    return kinds[doc["kind"]].model_validate(doc)


def stream_event_to_v1(doc):
    wrapped = t03.SendStreamingMessageSuccessResponse(id=1, result=stream_event_v03_model(doc))
    return d1(conv.to_core_stream_response(wrapped))


def stream_event_to_v03(doc):
    return d03(conv.to_compat_stream_response(ParseDict(doc, pb1.StreamResponse()), 1))["result"]


def result_to_v1(method, doc):
    if method == "SendMessage":
        wrapped = t03.SendMessageSuccessResponse(id=1, result=stream_event_v03_model(doc))
        return d1(conv.to_core_send_message_response(t03.SendMessageResponse(root=wrapped)))
    if method in ("GetTask", "CancelTask"):
        return d1(conv.to_core_task(t03.Task.model_validate(doc)))
    if method in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig"):
        return d1(conv.to_core_task_push_notification_config(t03.TaskPushNotificationConfig.model_validate(doc)))
    if method == "ListTaskPushNotificationConfigs":
        wrapped = t03.ListTaskPushNotificationConfigSuccessResponse(id=1, result=[t03.TaskPushNotificationConfig.model_validate(c) for c in doc])
        return d1(conv.to_core_list_task_push_notification_config_response(t03.ListTaskPushNotificationConfigResponse(root=wrapped)))
    if method == "GetExtendedAgentCard":
        return d1(conv.to_core_agent_card(t03.AgentCard.model_validate(doc)))
    raise Unsupported(f"the SDK converts no {method} result")


def result_to_v03(method, doc):
    if method == "SendMessage":
        return d03(conv.to_compat_send_message_response(ParseDict(doc, pb1.SendMessageResponse()), 1))["result"]
    if method in ("GetTask", "CancelTask"):
        return d03(conv.to_compat_task(ParseDict(doc, pb1.Task())))
    if method in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig"):
        return d03(conv.to_compat_task_push_notification_config(ParseDict(doc, pb1.TaskPushNotificationConfig())))
    if method == "ListTaskPushNotificationConfigs":
        res = conv.to_compat_list_task_push_notification_config_response(ParseDict(doc, pb1.ListTaskPushNotificationConfigsResponse()), 1)
        return d03(res)["result"]
    if method == "GetExtendedAgentCard":
        return d03(conv.to_compat_agent_card(ParseDict(doc, pb1.AgentCard())))
    raise Unsupported(f"the SDK converts no {method} result (its server writes the null/{{}} literal itself)")


SIMPLE = {
    # kind: (pydantic 0.3 model, to_core, pb 1.0 type, to_compat)
    "message": (t03.Message, conv.to_core_message, pb1.Message, conv.to_compat_message),
    "task": (t03.Task, conv.to_core_task, pb1.Task, conv.to_compat_task),
    "push_config": (t03.TaskPushNotificationConfig, conv.to_core_task_push_notification_config, pb1.TaskPushNotificationConfig, conv.to_compat_task_push_notification_config),
    "card": (t03.AgentCard, conv.to_core_agent_card, pb1.AgentCard, conv.to_compat_agent_card),
}

# 0.3 REST dialect: ProtoJSON of the 0.3 proto <-> pydantic through proto_utils (SDK's own bridge)
REST = {
    "message": (pb03.Message, proto_utils.FromProto.message, proto_utils.ToProto.message),
    "task": (pb03.Task, proto_utils.FromProto.task, proto_utils.ToProto.task),
    "card": (pb03.AgentCard, proto_utils.FromProto.agent_card, proto_utils.ToProto.agent_card),
    "push_config": (pb03.TaskPushNotificationConfig, proto_utils.FromProto.task_push_notification_config, proto_utils.ToProto.task_push_notification_config),
}


def convert_jsonrpc(fx, direction, doc):
    kind = fx["kind"]
    if kind == "request":
        return request_to_v1(doc) if direction == "to_v1" else request_to_v03(doc)
    if kind in SIMPLE:
        model, to_core, pb, to_compat = SIMPLE[kind]
        if direction == "to_v1":
            return d1(to_core(model.model_validate(doc)))
        return d03(to_compat(ParseDict(doc, pb())))
    if kind in ("stream_event", "push_payload"):
        return stream_event_to_v1(doc) if direction == "to_v1" else stream_event_to_v03(doc)
    if kind == "stream":
        f = stream_event_to_v1 if direction == "to_v1" else stream_event_to_v03
        return [f(e) for e in doc]
    if kind == "result":
        return result_to_v1(fx["method"], doc) if direction == "to_v1" else result_to_v03(fx["method"], doc)
    if kind == "error":
        raise Unsupported("the SDK compat layer has no JSON-RPC error detail conversion")
    raise Unsupported(f"no SDK counterpart for kind {kind}")


def convert_rest(fx, direction, doc):
    kind = fx["kind"]
    if kind in REST:
        pb, from_proto, to_proto = REST[kind]
        model, to_core, pb_1, to_compat = SIMPLE[kind]
        if direction == "to_v1":
            return d1(to_core(from_proto(ParseDict(doc, pb()))))
        return MessageToDict(to_proto(to_compat(ParseDict(doc, pb_1()))))
    if kind == "send_message_request":
        if direction == "to_v1":
            params = proto_utils.FromProto.message_send_params(ParseDict(doc, pb03.SendMessageRequest()))
            return d1(conv.to_core_send_message_request(t03.SendMessageRequest(id=1, params=params)))
        compat = conv.to_compat_send_message_request(ParseDict(doc, pb1.SendMessageRequest()), 1)
        p = compat.params
        out = pb03.SendMessageRequest(request=proto_utils.ToProto.message(p.message),
                                      configuration=proto_utils.ToProto.message_send_configuration(p.configuration),
                                      metadata=proto_utils.ToProto.metadata(p.metadata))
        return MessageToDict(out)
    if kind == "stream_event":
        if direction == "to_v1":
            ev = proto_utils.FromProto.stream_response(ParseDict(doc, pb03.StreamResponse()))
            return d1(conv.to_core_stream_response(t03.SendStreamingMessageSuccessResponse(id=1, result=ev)))
        ev = conv.to_compat_stream_response(ParseDict(doc, pb1.StreamResponse()), 1).result
        return MessageToDict(proto_utils.ToProto.stream_response(ev))
    if kind == "result" and fx["method"] == "ListTaskPushNotificationConfigs":
        if direction == "to_v1":
            res = pb03.ListTaskPushNotificationConfigResponse()
            ParseDict(doc, res)
            items = [proto_utils.FromProto.task_push_notification_config(c) for c in res.configs]
            wrapped = t03.ListTaskPushNotificationConfigSuccessResponse(id=1, result=items)
            return d1(conv.to_core_list_task_push_notification_config_response(t03.ListTaskPushNotificationConfigResponse(root=wrapped)))
        res = conv.to_compat_list_task_push_notification_config_response(ParseDict(doc, pb1.ListTaskPushNotificationConfigsResponse()), 1)
        out = pb03.ListTaskPushNotificationConfigResponse(configs=[proto_utils.ToProto.task_push_notification_config(c) for c in res.root.result])
        return MessageToDict(out)
    if kind == "result" and fx["method"] == "SendMessage":
        if direction == "to_v1":
            resp = ParseDict(doc, pb03.SendMessageResponse())
            res = proto_utils.FromProto.task_or_message(resp)
            wrapped = t03.SendMessageSuccessResponse(id=1, result=res)
            return d1(conv.to_core_send_message_response(t03.SendMessageResponse(root=wrapped)))
        compat = conv.to_compat_send_message_response(ParseDict(doc, pb1.SendMessageResponse()), 1).root.result
        return MessageToDict(proto_utils.ToProto.task_or_message(compat))
    raise Unsupported(f"no SDK counterpart for 0.3 REST kind {kind}")


def run(fx):
    out = []
    for direction, src in (("to_v1", "v03"), ("to_v03", "v1")):
        if fx["direction"] not in ("both", direction) or src not in fx:
            continue
        rec = {"name": fx["name"], "direction": direction}
        try:
            conv_fn = convert_jsonrpc if fx["dialect"] == "jsonrpc" else convert_rest
            rec["output"] = norm(conv_fn(fx, direction, fx[src]))
            rec["status"] = "ok"
        except Unsupported as e:
            rec.pop("output", None)
            rec["status"] = "unsupported"
            rec["reason"] = str(e)
        except Exception as e:  # the SDK refused (or crashed on) the input
            rec.pop("output", None)
            rec["status"] = "error"
            rec["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
            if os.environ.get("ORACLE_TRACE"):
                traceback.print_exc()
        out.append(rec)
    return out


def main():
    root = sys.argv[1]
    for fn in sorted(os.listdir(root)):
        if not fn.endswith(".json"):
            continue
        with open(os.path.join(root, fn)) as f:
            fx = json.load(f)
        if len(sys.argv) > 2 and fx["name"] not in sys.argv[2:]:
            continue
        for rec in run(fx):
            print(json.dumps(rec, sort_keys=True))


if __name__ == "__main__":
    main()
