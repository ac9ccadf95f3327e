"""/v1/secrets: thin handlers over keymanager.secrets and keymanager.acls."""
from __future__ import annotations

from starlette.responses import Response

from pocketstack.keymanager import access, metadata, paging, secrets
from pocketstack.common import exceptions
from pocketstack.keymanager.rest.util import acl_handlers, base, created, json_body, version
from pocketstack.wsgi import routing


def create(req):
    access.enforce_plain(req.context, "secrets:post", "Secret creation")
    return created(req, "secret", secrets.create(req.context, json_body(req)))


def list_secrets(req):
    access.enforce_plain(req.context, "secrets:get", "Secret(s) retrieval")
    items, offset, limit, total = secrets.list_secrets(req.context, req.query, base(req),
                                                       version(req) >= (1, 1))
    return routing.json_response(paging.page(base(req), "secrets", items, offset, limit,
                                             total, req.query))


def _wants_json(req) -> bool:
    """barbican's is_json_request_accept: no Accept, application/json or */*."""
    accept = req.headers.get("accept")
    return accept is None or accept.strip() in ("", "application/json", "*/*")


def _payload_response(req, operation: str):
    body, media = secrets.payload(req.context, req.params["secret_id"],
                                  req.headers.get("accept"), operation)
    data = body.encode("utf-8") if isinstance(body, str) else body
    return Response(data, media_type=media)


def show(req):
    if _wants_json(req):
        return routing.json_response(secrets.show(req.context, req.params["secret_id"],
                                                  base(req), version(req) >= (1, 1)))
    return _payload_response(req, "Secret retrieval")  # the deprecated way to decrypt


def payload(req):
    return _payload_response(req, "Secret payload retrieval")


def put_payload(req):
    secrets.put_payload(req.context, req.params["secret_id"], req.body,
                        req.headers.get("content-type"), req.headers.get("content-encoding"))
    return routing.empty(204)


def delete(req):
    """From 1.2 a consumed secret stays unless ``force`` is true."""
    force = (req.query.get("force") or "false").strip().lower()
    if force not in ("true", "false", "1", "0", "yes", "no", "on", "off", "t", "f", "y",
                     "n"):
        raise exceptions.BadRequest("URI provided invalid query string parameters.")
    refuse = version(req) >= (1, 2) and force in ("false", "0", "no", "off", "f", "n")
    secrets.delete(req.context, req.params["secret_id"], refuse_if_consumed=refuse)
    return routing.empty(204)


def list_consumers(req):
    return routing.json_response(secrets.list_consumers(
        req.context, req.params["secret_id"], req.query, base(req)))


def add_consumer(req):
    body = secrets.add_consumer(req.context, req.params["secret_id"], json_body(req),
                                base(req))
    return routing.json_response(body, 200, headers={
        "Location": f"{body['secret_ref']}/consumers"})


def remove_consumer(req):
    return routing.json_response(secrets.remove_consumer(
        req.context, req.params["secret_id"], json_body(req), base(req)))


def get_metadata(req):
    return routing.json_response({"metadata": metadata.get_metadata(
        req.context, req.params["secret_id"])})


def set_metadata(req):
    metadata.set_metadata(req.context, req.params["secret_id"], json_body(req))
    ref = f"{base(req)}/v1/secrets/{req.params['secret_id']}/metadata"
    return routing.json_response({"metadata_ref": ref}, 201)


def add_metadatum(req):
    pair = metadata.add_metadatum(req.context, req.params["secret_id"], json_body(req))
    ref = f"{base(req)}/v1/secrets/{req.params['secret_id']}/metadata/{pair['key']}"
    return routing.json_response(pair, 201, headers={"Location": ref})


def get_metadatum(req):
    return routing.json_response(metadata.get_metadatum(
        req.context, req.params["secret_id"], req.params["key"]))


def update_metadatum(req):
    return routing.json_response(metadata.update_metadatum(
        req.context, req.params["secret_id"], req.params["key"], json_body(req)))


def delete_metadatum(req):
    metadata.delete_metadatum(req.context, req.params["secret_id"], req.params["key"])
    return routing.empty(204)


get_acl, put_acl, patch_acl, delete_acl = acl_handlers(
    "secret", secrets.lookup, "secret_id")
