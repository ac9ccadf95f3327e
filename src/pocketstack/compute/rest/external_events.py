"""POST /os-server-external-events: the network service reports network-vif-plugged;
we forward each event to the host that runs the server."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.compute.models import Instance
from pocketstack.compute.rest.common import authorize, body, respond
from pocketstack.compute.rpcapi import ComputeAPI

NAMES = ["network-changed", "network-vif-plugged", "network-vif-unplugged",
         "network-vif-deleted", "volume-extended", "power-update",
         "accelerator-request-bound", "volume-reimaged"]
# nova drops these (the event's code is 400) without a tag to say which volume, power
# state or accelerator request they are about.
TAG_REQUIRED = ("volume-extended", "power-update", "accelerator-request-bound")
_compute = ComputeAPI()
_T = Instance.__table__
# Built once (two events per boot come through here).
_HOSTS = sa.select(_T.c.uuid, _T.c.host).where(
    _T.c.uuid.in_(sa.bindparam("uuids", expanding=True)), _T.c.deleted.is_(False))


def _schema(req):
    from pocketstack.compute.rest.common import at_least

    names = NAMES[:4] + (["volume-extended"] if at_least(req, "2.51") else []) + (
        ["power-update"] if at_least(req, "2.76") else []) + (
        ["accelerator-request-bound"] if at_least(req, "2.82") else []) + (
        ["volume-reimaged"] if at_least(req, "2.93") else [])
    return {"type": "object", "properties": {"events": {
        "type": "array", "minItems": 1, "items": {
            "type": "object", "properties": {
                "server_uuid": {"type": "string", "format": "uuid"},
                "name": {"type": "string", "enum": names},
                "status": {"type": "string", "enum": ["failed", "completed", "in-progress"]},
                "tag": {"type": "string", "maxLength": 255}},
            "required": ["server_uuid", "name"], "additionalProperties": False}}},
        "required": ["events"], "additionalProperties": False}


def create_events(req):
    authorize(req, "os_compute_api:os-server-external-events:create")
    events = body(req, _schema(req))["events"]
    uuids = list({e["server_uuid"] for e in events})
    with db.reader() as s:
        hosts = dict(s.connection().execute(_HOSTS, {"uuids": uuids}).all())
    by_host: dict[str, list] = {}
    results = []
    for e in events:
        e = dict(e, status=e.get("status", "completed"))
        host = hosts.get(e["server_uuid"])
        if e["server_uuid"] not in hosts:
            results.append(dict(e, code=404))
        elif e["name"] in TAG_REQUIRED and e.get("tag") is None:
            results.append(dict(e, status="failed", code=400))
        elif host is None:
            results.append(dict(e, code=422))
        else:
            results.append(dict(e, code=200))
            by_host.setdefault(host, []).append(e)
    for host, evs in by_host.items():
        _compute.external_instance_event(req.context, host, evs)
    if not by_host:
        raise exceptions.NotFound("No instances found for any event")
    status = 200 if all(r["code"] == 200 for r in results) else 207
    return respond(req, {"events": results}, status)
