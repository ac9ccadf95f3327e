"""Remote consoles: POST /servers/{id}/remote-consoles (2.6+) and the older
os-getVNCConsole / os-getSerialConsole actions answer a URL this cloud really serves: a
page with the server's console log, behind a token that expires as nova's console tokens
do (10 minutes). GET /console/{server_id}?token=… is that page (no Keystone token: the
URL is what a browser opens)."""
from __future__ import annotations

import hmac
import secrets
import time
from urllib.parse import urlsplit

import sqlalchemy as sa
from starlette.responses import Response

from pocketstack.common import db, exceptions
from pocketstack.compute import actions, instances, states
from pocketstack.compute.models import Instance
from pocketstack.compute.rest.common import at_least, authorize, respond, validate
from pocketstack.wsgi.routing import public

TOKEN_TTL = 600
# protocol -> console types nova knows for it; we serve vnc and serial (the log page)
_TYPES = {"vnc": ["novnc", "xvpvnc"], "spice": ["spice-html5"], "rdp": ["rdp-html5"],
          "serial": ["serial"], "mks": ["webmks"]}
_SERVED = ("vnc", "serial")


def _url(req, inst, protocol: str, console_type: str) -> str:
    if protocol not in _SERVED:
        raise exceptions.BadRequest(f"Unavailable console type {console_type}.")
    if inst.vm_state in (states.BUILDING, states.SHELVED_OFFLOADED) or not inst.host:
        raise exceptions.Conflict(f"Instance {inst.uuid} is not ready")
    token = secrets.token_urlsafe(24)
    meta = dict(inst.system_metadata or {}, console_token=token,
                console_token_expires=time.time() + TOKEN_TTL)
    instances.update(inst.uuid, {"system_metadata": meta})
    return f"{req.service_url}/console/{inst.uuid}?token={token}"


def create_remote_console(req):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, "os_compute_api:os-remote-consoles", {"project_id": inst.project_id})
    protocols = [p for p in _TYPES if p != "mks" or at_least(req, "2.8")]
    types = [t for p in protocols for t in _TYPES[p]]
    if at_least(req, "2.99"):  # the spice protocol's direct (no proxy) console
        types.append("spice-direct")
    validate({"type": "object", "properties": {"remote_console": {
        "type": "object", "properties": {
            "protocol": {"type": "string", "enum": protocols},
            "type": {"type": "string", "enum": types}},
        "required": ["protocol", "type"], "additionalProperties": False}},
        "required": ["remote_console"], "additionalProperties": False}, req.json())
    wanted = req.json()["remote_console"]
    protocol, console_type = wanted["protocol"], wanted["type"]
    if console_type not in _TYPES[protocol] and not (protocol, console_type) == (
            "spice", "spice-direct"):
        raise exceptions.BadRequest(f"Unavailable console type {console_type}.")
    url = _url(req, inst, protocol, console_type)
    return respond(req, {"remote_console": {"protocol": protocol, "type": console_type,
                                            "url": url}})


def _legacy(protocol: str):
    def handler(req, inst, args):
        authorize(req, "os_compute_api:os-remote-consoles", {"project_id": inst.project_id})
        validate({"type": "object", "properties": {"type": {
            "type": "string", "enum": _TYPES[protocol]}},
            "required": ["type"], "additionalProperties": False}, args)
        return respond(req, {"console": {"type": args["type"],
                                         "url": _url(req, inst, protocol, args["type"])}})
    return handler


@public
def console_page(req):
    """The console log, for whoever holds the URL's token."""
    inst = instances.load(req.params["server_id"])
    meta = (inst.system_metadata or {}) if inst is not None and not inst.deleted else {}
    token = req.query.get("token") or ""
    if not meta.get("console_token") or not hmac.compare_digest(
            str(meta["console_token"]), token) or meta.get("console_token_expires", 0) < \
            time.time():
        raise exceptions.NotFound("Invalid or expired console token.")
    text = actions.compute_rpc.get_console_output(req.context, inst.host, inst.uuid) \
        if inst.host else ""
    return Response(text, media_type="text/plain; charset=utf-8")


def show_console_auth_token(req):
    """GET /os-console-auth-tokens/{token} (admin): where a console token's console is
    served. Below 2.31 nova answers 400 (its only console type then, RDP, is gone); from
    2.99 no query parameters are accepted. ``tls_port`` (2.99) is only for spice-direct
    tokens, which this cloud never issues."""
    if not at_least(req, "2.31"):
        raise exceptions.BadRequest("The server could not comply with the request since it "
                                    "is either malformed or otherwise incorrect.")
    if at_least(req, "2.99") and req.query.keys():
        extra = sorted(req.query.keys())
        raise exceptions.ValidationError(
            f"Invalid input for query parameters {extra[0]}. Value: "
            f"{req.query.get(extra[0])}. Additional properties are not allowed "
            f"({', '.join(repr(k) for k in extra)} "
            f"{'was' if len(extra) == 1 else 'were'} unexpected)")
    authorize(req, "os_compute_api:os-console-auth-tokens")
    token = req.params["token"]
    if not token.strip():
        raise exceptions.BadRequest("token not provided")
    with db.reader() as s:
        inst = s.scalars(sa.select(Instance).where(
            Instance.deleted.is_(False),
            Instance.system_metadata["console_token"].as_string() == token)).first()
    meta = (inst.system_metadata or {}) if inst is not None else {}
    if not meta or meta.get("console_token_expires", 0) < time.time():
        raise exceptions.NotFound("Token not found")
    url = urlsplit(req.service_url)
    return respond(req, {"console": {
        "instance_uuid": inst.uuid, "host": url.hostname,
        "port": url.port or (443 if url.scheme == "https" else 80),
        "internal_access_path": f"{url.path}/console/{inst.uuid}"}})


HANDLERS = {"os-getVNCConsole": _legacy("vnc"), "os-getSerialConsole": _legacy("serial"),
            "os-getSPICEConsole": _legacy("spice"), "os-getRDPConsole": _legacy("rdp")}
