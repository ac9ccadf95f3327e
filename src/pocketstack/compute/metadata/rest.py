"""Compute's metadata API, mounted at ``/metadata`` (nova-api-metadata with ``[neutron]
service_metadata_proxy``): the network agent's metadata proxy finds the instance from the
guest's network and address and forwards the guest's request here, signed.

A request names its instance in ``X-Instance-ID`` and its project in ``X-Tenant-ID``, and
is trusted only with ``X-Instance-ID-Signature``, the instance id's HMAC-SHA256 under the
shared secret (clients/metadata.py): no token, as in nova. A bad or missing signature is
a 403, an instance that does not exist or is another project's a 404.
``X-Forwarded-For`` (the guest's address) is for the log only.

The guest's path is read from the raw request path (the router drops a trailing slash).
"""
from __future__ import annotations

import logging
from urllib.parse import unquote

import sqlalchemy as sa
from starlette.responses import Response

from pocketstack.clients import metadata as metadata_client
from pocketstack.common import db
from pocketstack.compute.metadata import content
from pocketstack.wsgi import routing

LOG = logging.getLogger(__name__)


def _store_password(uuid: str, password: str) -> bool:
    """Keep the password a guest posts, once (nova: a second post is refused with 409
    until an admin clears it). False if one is set already."""
    from pocketstack.compute.models import Instance

    with db.transaction() as s:
        inst = s.scalar(sa.select(Instance).where(Instance.uuid == uuid).with_for_update())
        if inst is None:
            return False
        system = dict(inst.system_metadata or {})
        if any(system.get(f"password_{i}") for i in range(content.PASSWORD_CHUNKS)):
            return False
        for i in range(content.PASSWORD_CHUNKS):
            system[f"password_{i}"] = password[i * 255:(i + 1) * 255]
        inst.system_metadata = system
    return True


def respond(method: str, path: str, instance_id: str, tenant_id: str,
            body: bytes = b"", remote: str = "") -> tuple[int, str, bytes]:
    """(status, content type, body) for one request of ``instance_id``'s guest, whose
    proxy said it belongs to ``tenant_id``."""
    instance = content.load_instance(instance_id)
    if instance is None:
        LOG.info("Metadata request from %s for instance %s: no such instance", remote,
                 instance_id)
        return 404, content.TEXT, b"No such instance.\n"
    if instance["project_id"] != tenant_id:
        LOG.warning("Metadata request from %s: tenant %s does not own instance %s", remote,
                    tenant_id, instance_id)
        return 404, content.TEXT, b"No such instance.\n"
    if method == "POST":
        if not path.rstrip("/").endswith("/password") or not path.startswith("/openstack/"):
            return 405, content.TEXT, b"Only the password can be posted.\n"
        if len(body) > content.PASSWORD_MAX_BYTES:
            return 400, content.TEXT, b"The password is longer than 256 bytes.\n"
        if not _store_password(instance_id, body.decode(errors="replace")):
            return 409, content.TEXT, b"A password is set already.\n"
        return 200, content.TEXT, b""
    if method not in ("GET", "HEAD"):
        return 405, content.TEXT, b"Method not allowed.\n"
    try:
        ctype, data = content.InstanceMetadata(instance).lookup(path)
    except content.NotFound:
        return 404, content.TEXT, b"Not found.\n"
    return 200, ctype, data


def _guest_path(req) -> str:
    """The path the guest asked for, under /metadata, trailing slash and all."""
    scope = req.raw.scope
    raw = scope.get("raw_path")
    path = unquote(raw.decode("latin-1")) if raw else scope["path"]
    root = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):]
    return path or "/"


def _answer(status: int, ctype: str, data: bytes) -> Response:
    # The content type as it is (no charset added): user data is whatever bytes it is.
    return Response(data, status_code=status, headers={"Content-Type": ctype})


@routing.public
def serve(req):
    path = _guest_path(req)
    if path.strip("/") == "" and req.method in ("GET", "HEAD"):
        # What any client may ask, as in nova: the versions, without naming an instance.
        return _answer(200, content.TEXT, content.versions_listing())
    headers = req.headers
    instance_id = headers.get("x-instance-id")
    tenant_id = headers.get("x-tenant-id")
    signature = headers.get("x-instance-id-signature")
    remote = headers.get("x-forwarded-for", "")
    if not (instance_id and tenant_id and signature):
        LOG.warning("Metadata request from %s without instance, tenant or signature headers",
                    remote or "an unknown address")
        return _answer(403, content.TEXT, b"The request is not signed by a metadata proxy.\n")
    if not metadata_client.signature_valid(instance_id, signature):
        LOG.warning("Metadata request from %s for instance %s: bad signature (do the "
                    "metadata proxy and compute share one metadata_proxy_shared_secret?)",
                    remote or "an unknown address", instance_id)
        return _answer(403, content.TEXT, b"Invalid proxy request signature.\n")
    return _answer(*respond(req.method, path, instance_id, tenant_id, req.body, remote))


# Every method a guest may send reaches respond() (a 405 there names what may be posted).
_METHODS = {"GET": serve, "POST": serve, "PUT": serve, "DELETE": serve}
ROUTES = {"/": _METHODS, "/{path:path}": _METHODS}
