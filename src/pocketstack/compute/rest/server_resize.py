"""Server actions resize, confirmResize (204) and revertResize (202), as nova's."""
from __future__ import annotations

from pocketstack.compute import resize
from pocketstack.compute.rest.common import authorize, respond, validate

_RESIZE = {"type": "object", "properties": {
    "flavorRef": {"type": ["string", "integer"], "minLength": 1},
    "OS-DCF:diskConfig": {"type": "string", "enum": ["AUTO", "MANUAL"]}},
    "required": ["flavorRef"], "additionalProperties": False}
_NULL = {"type": "null"}


def _resize(req, inst, args):
    validate(_RESIZE, args)
    authorize(req, "os_compute_api:servers:resize", {"project_id": inst.project_id,
                                                     "user_id": inst.user_id})
    ref = str(args["flavorRef"]).rstrip("/").rsplit("/", 1)[-1]
    disk = args.get("OS-DCF:diskConfig")
    resize.resize(req.context, inst, ref, None if disk is None else disk == "AUTO")


def _confirm(req, inst, args):
    validate(_NULL, args)
    authorize(req, "os_compute_api:servers:confirm_resize", {"project_id": inst.project_id})
    resize.confirm(req.context, inst)
    return respond(req, None, 204)


def _revert(req, inst, args):
    validate(_NULL, args)
    authorize(req, "os_compute_api:servers:revert_resize", {"project_id": inst.project_id})
    resize.revert(req.context, inst)


HANDLERS = {"resize": _resize, "confirmResize": _confirm, "revertResize": _revert}
