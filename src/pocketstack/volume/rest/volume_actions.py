"""POST /volumes/{id}/action: one action per body, dispatched by its key."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.volume import actions, attach, manage, service_actions
from pocketstack.volume.rest import microversion
from pocketstack.volume.rest.common import body, respond


def _none(func):
    def run(ctx, volume_id, data):
        func(ctx, volume_id)
    return run


# action -> (function(ctx, volume_id, data), success status); a result becomes the body
ACTIONS = {
    "os-extend": (actions.extend, 202),
    "os-reset_status": (actions.reset_status, 202),
    "os-set_bootable": (actions.set_bootable, 200),
    "os-update_readonly_flag": (actions.update_readonly, 202),
    "os-retype": (actions.retype, 202),
    "os-force_delete": (lambda ctx, vid, data: actions.force_delete(ctx, vid), 202),
    "os-reimage": (actions.reimage, 202),
    "os-extend_volume_completion": (service_actions.extend_volume_completion, 202),
    "os-unmanage": (manage.unmanage, 202),
    "os-reserve": (_none(attach.reserve), 202),
    "os-unreserve": (_none(attach.unreserve), 202),
    "os-begin_detaching": (_none(attach.begin_detaching), 202),
    "os-roll_detaching": (_none(attach.roll_detaching), 202),
    "os-attach": (attach.attach, 202),
    "os-detach": (attach.detach, 202),
    "os-force_detach": (attach.force_detach, 202),
    "os-terminate_connection": (
        lambda ctx, vid, data: attach.terminate_connection(
            ctx, vid, (data or {}).get("connector") if isinstance(data, dict) else None),
        202),
}


def action(req):
    data = body(req)
    if not isinstance(data, dict) or len(data) != 1:
        raise exceptions.BadRequest("Malformed request body: exactly one action is "
                                    "expected.")
    name, args = next(iter(data.items()))
    volume_id = req.params["volume_id"]
    ctx = req.context
    if name == "os-initialize_connection":
        connector = args.get("connector") if isinstance(args, dict) else None
        info = attach.initialize_connection(ctx, volume_id, connector)
        return respond(req, {"connection_info": info})
    if name == "os-volume_upload_image":
        result = actions.upload_image(ctx, volume_id, args)
        return respond(req, {"os-volume_upload_image": result}, 202)
    if name == "os-show_image_metadata":
        return respond(req, {"metadata": service_actions.show_image_metadata(ctx, volume_id)})
    if name == "os-set_image_metadata":
        return respond(req, {"metadata": service_actions.set_image_metadata(
            ctx, volume_id, args)})
    if name == "os-unset_image_metadata":
        service_actions.unset_image_metadata(ctx, volume_id, args)
        return respond(req, None, 200)
    if name == "os-reimage":
        microversion.require(req, "3.68")
    if name == "os-extend":
        actions.extend(ctx, volume_id, args, in_use=microversion.at_least(req, "3.42"))
        return respond(req, None, 202)
    if name not in ACTIONS:
        raise exceptions.BadRequest(f"There is no such action: {name}")
    func, status = ACTIONS[name]
    func(ctx, volume_id, args)
    return respond(req, None, status)
