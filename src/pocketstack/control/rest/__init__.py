"""pocketstack's own API, mounted at /pocketstack: traces and fault injection."""
from __future__ import annotations

from pocketstack.common import exceptions, policy
from pocketstack.control import faults, traces
from pocketstack.wsgi import routing


def _body(req) -> dict:
    data = req.json()
    if not isinstance(data, dict):
        raise exceptions.BadRequest("The request body must be a JSON object.")
    return data


@routing.public
def versions(req):
    """The root answers like every other service's: its one version."""
    return routing.json_response({"versions": [{
        "id": "v1.0", "status": "CURRENT",
        "links": [{"rel": "self", "href": f"{req.service_url}/v1/"}]}]})


def trace_by_request(req):
    policy.authorize(req.context, "pocketstack:traces")
    return routing.json_response(traces.by_request(req.context, req.params["request_id"]))


def trace_by_server(req):
    policy.authorize(req.context, "pocketstack:traces")
    return routing.json_response(traces.by_server(req.context, req.params["server_id"]))


def list_faults(req):
    policy.authorize(req.context, "pocketstack:faults")
    return routing.json_response({"faults": faults.list_rules()})


def add_fault(req):
    """{"fault": {"host": "cmp-1"|null, "operation": "spawn", "action": "fail"|"hang"|"drop"|
    "down", "times": 1|null, "hang_seconds": 5, "message": "…"}}"""
    policy.authorize(req.context, "pocketstack:faults")
    data = _body(req).get("fault")
    if not isinstance(data, dict):
        raise exceptions.BadRequest("Expecting a 'fault' object.")
    unknown = set(data) - {"host", "operation", "action", "times", "hang_seconds", "message"}
    if unknown:
        raise exceptions.BadRequest(f"Unknown fields: {', '.join(sorted(unknown))}")
    times = data.get("times", 1)
    if times is not None and (not isinstance(times, int) or isinstance(times, bool)):
        raise exceptions.BadRequest("times must be an integer or null.")
    hang = data.get("hang_seconds", 0)
    if not isinstance(hang, (int, float)) or isinstance(hang, bool) or not 0 <= hang <= 3600:
        raise exceptions.BadRequest("hang_seconds must be a number between 0 and 3600.")
    for key in ("host", "operation", "action", "message"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise exceptions.BadRequest(f"{key} must be a string.")
    if not data.get("operation") or not data.get("action"):
        raise exceptions.BadRequest("operation and action are required.")
    rule = faults.add(data.get("host"), data["operation"], data["action"], times, float(hang),
                      data.get("message") or "")
    return routing.json_response({"fault": rule}, 201)


def reset_faults(req):
    policy.authorize(req.context, "pocketstack:faults")
    faults.reset()
    return routing.empty(204)


def delete_fault(req):
    policy.authorize(req.context, "pocketstack:faults")
    faults.remove(req.params["fault_id"])
    return routing.empty(204)


ROUTES = {
    "/": {"GET": versions},
    "/v1": {"GET": versions},
    "/v1/traces/{request_id}": {"GET": trace_by_request},
    "/v1/servers/{server_id}/trace": {"GET": trace_by_server},
    "/v1/faults": {"GET": list_faults, "POST": add_fault, "DELETE": reset_faults},
    "/v1/faults/{fault_id}": {"DELETE": delete_fault},
}
