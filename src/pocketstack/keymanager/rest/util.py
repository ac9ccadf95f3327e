"""What the key manager's handlers share: barbican's JSON body checks, the base URL, the
answer to a create and the handlers of an entity's ACL."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.keymanager import acls
from pocketstack.wsgi import routing


def base(req) -> str:
    return req.service_url


def json_body(req):
    """barbican's enforce_content_types(['application/json']) and load_body."""
    media = (req.headers.get("content-type") or "").split(";")[0].strip().lower()
    if media != "application/json":
        raise exceptions.UnsupportedMediaType(
            "Unexpected content type. Expected content types are: ['application/json']")
    try:
        return req.json()
    except exceptions.BadRequest:
        raise exceptions.BadRequest("Malformed JSON") from None


def created(req, kind: str, entity_id: str, status: int = 201):
    """``{"<kind>_ref": <its URL>}`` with that URL as its Location (a secret's, container's
    or order's create)."""
    ref = f"{base(req)}/v1/{kind}s/{entity_id}"
    return routing.json_response({f"{kind}_ref": ref}, status, headers={"Location": ref})


def acl_handlers(kind: str, lookup, key: str) -> tuple:
    """GET, PUT, PATCH and DELETE of /v1/<kind>s/{id}/acl (a secret's or container's ACL):
    ``lookup(s, id)`` finds the entity, whose id is in ``req.params[key]``."""
    def acl_ref(req) -> dict:
        return {"acl_ref": f"{base(req)}/v1/{kind}s/{req.params[key]}/acl"}

    def get_acl(req):
        return routing.json_response(acls.get(req.context, kind, lookup, req.params[key]))

    def put_acl(req):
        acls.update(req.context, kind, lookup, req.params[key], json_body(req), replace=True)
        return routing.json_response(acl_ref(req))

    def patch_acl(req):
        acls.update(req.context, kind, lookup, req.params[key], json_body(req),
                    replace=False)
        return routing.json_response(acl_ref(req))

    def delete_acl(req):
        acls.delete(req.context, kind, lookup, req.params[key])
        return routing.empty(200)

    return get_acl, put_acl, patch_acl, delete_acl


MIN_VERSION, MAX_VERSION = (1, 0), (1, 2)


def version(req) -> tuple[int, int]:
    """The request's key-manager microversion (barbican's MicroversionMiddleware): 1.0
    without the header, "latest" the newest; one outside 1.0-1.2 is a 406."""
    header = req.headers.get("openstack-api-version") or ""
    for part in header.split(","):
        service, _, value = part.strip().partition(" ")
        if service.lower() != "key-manager":
            continue
        value = value.strip()
        if value == "latest":
            return MAX_VERSION
        major, dot, minor = value.partition(".")
        if not (dot and major.isascii() and major.isdigit() and minor.isascii()
                and minor.isdigit() and len(value) < 16):
            raise exceptions.BadRequest(f"invalid version string: {value}")
        wanted = (int(major), int(minor))
        if not MIN_VERSION <= wanted <= MAX_VERSION:
            raise exceptions.NotAcceptable(f"Unacceptable version header: {value}")
        return wanted
    return MIN_VERSION
