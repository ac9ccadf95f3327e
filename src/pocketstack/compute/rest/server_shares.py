"""Server shares (2.97, nova's server_shares.py): GET/POST /servers/{id}/shares and
GET/DELETE /servers/{id}/shares/{share_id}, 404 below 2.97.

This cloud has no shared-file-system (Manila) service, so no share can ever be attached:
the list is empty, show and delete answer nova's ShareNotFound (404) after nova's checks.
Attach makes nova's checks in nova's order: the body's schema (400), the server (404), the
policy (403), the server's state (409 unless stopped), then hardware.check_shares_supported:
our hosts (simulated and libvirt guests alike) report COMPUTE_STORAGE_VIRTIO_FS but not
COMPUTE_MEM_BACKING_FILE, so a server whose flavor has no ``hw:mem_page_size`` gets nova's
ForbiddenSharesNotConfiguredCorrectly (409). A server whose flavor has one passes that check
and nova would then ask Manila for the share: with no such service in the catalog nova's
SDK adapter raises ServiceUnavailable, which nova does not map (a 500). We answer 503 in
nova's fault format with a message that says why."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.compute import instances, states
from pocketstack.compute.rest.common import at_least, authorize, respond, validate

_POLICY = "os_compute_api:os-server-shares:%s"

# nova's parameter_types.share_id / share_tag
_SHARE_ID = {"type": "string", "format": "uuid"}
_TAG = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[a-zA-Z0-9-]*$"}
CREATE = {"type": "object", "properties": {"share": {
    "type": "object", "properties": {"share_id": _SHARE_ID, "tag": _TAG},
    "required": ["share_id"], "additionalProperties": False}},
    "required": ["share"], "additionalProperties": False}


def _since_2_97(req) -> None:
    if not at_least(req, "2.97"):
        raise exceptions.NotFound("The resource could not be found.")


def _no_query(req) -> None:
    """index/show take no query parameters (nova's index_query/show_query)."""
    extra = sorted(set(req.query.keys()))
    if extra:
        names = ", ".join(repr(k) for k in extra)
        raise exceptions.ValidationError(
            f"Invalid input for query parameters {extra[0]}. Value: "
            f"{req.query.get(extra[0])}. Additional properties are not allowed ({names} "
            f"{'was' if len(extra) == 1 else 'were'} unexpected)")


def _server(req, action: str):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, _POLICY % action, {"project_id": inst.project_id})
    return inst


def _not_found(share_id: str) -> exceptions.NotFound:
    return exceptions.NotFound(f"Share {share_id} could not be found.")


def _state_check(inst, action: str) -> None:
    """nova's _check_instance_in_valid_state: attach needs a stopped server, detach a
    stopped or errored one."""
    allowed = (states.STOPPED,) if action == "create share" else (states.STOPPED,
                                                                   states.ERROR)
    if inst.vm_state not in allowed:
        raise exceptions.Conflict(f"Cannot '{action}' instance {inst.uuid} while it is in "
                                  f"vm_state {inst.vm_state}")


def list_shares(req):
    _since_2_97(req)
    _no_query(req)
    _server(req, "index")
    return respond(req, {"shares": []})


def show_share(req):
    _since_2_97(req)
    _no_query(req)
    _server(req, "show")
    raise _not_found(req.params["share_id"])


def attach_share(req):
    _since_2_97(req)
    validate(CREATE, req.json())
    inst = _server(req, "create")
    _state_check(inst, "create share")
    extra_specs = (inst.flavor or {}).get("extra_specs") or {}
    if "hw:mem_page_size" not in extra_specs:
        raise exceptions.Conflict("Feature not supported because either compute or "
                                  "instance are not configured correctly.")
    raise exceptions.ServiceUnavailable(
        "Service is unavailable at this time: this cloud has no shared-file-system "
        f"(Manila) service, so share {req.json()['share']['share_id']} cannot be looked up "
        "or attached.")


def detach_share(req):
    _since_2_97(req)
    inst = _server(req, "delete")
    _state_check(inst, "delete share")
    raise _not_found(req.params["share_id"])
