"""POST /servers/{id}/action: one handler per action key, as nova's action controllers."""
from __future__ import annotations

from pocketstack.common import exceptions, numbers
from pocketstack.compute import actions, image_props, instances
from pocketstack.compute.rest import (consoles, server_lifecycle, server_resize,
                                      server_security_groups, views)
from pocketstack.compute.rest.common import (METADATA, NAME, at_least, authorize, respond,
                                             validate, version)


def _stop(req, inst, args):
    authorize(req, "os_compute_api:servers:stop", {"project_id": inst.project_id})
    actions.power(req.context, inst, "stop")


def _start(req, inst, args):
    authorize(req, "os_compute_api:servers:start", {"project_id": inst.project_id})
    actions.power(req.context, inst, "start")


def _reboot(req, inst, args):
    validate({"type": "object", "properties": {"type": {
        "type": "string", "enum": ["HARD", "Hard", "hard", "SOFT", "Soft", "soft"]}},
        "required": ["type"], "additionalProperties": False}, args)
    authorize(req, "os_compute_api:servers:reboot", {"project_id": inst.project_id})
    actions.power(req.context, inst, "reboot", args["type"].upper())


def _simple(action, rule):
    def handler(req, inst, args):
        if args is not None and args != {} and action not in ("lock",):
            pass
        authorize(req, rule, {"project_id": inst.project_id})
        actions.power(req.context, inst, action)
    return handler


def _lock(req, inst, args):
    authorize(req, "os_compute_api:os-lock-server:lock", {"project_id": inst.project_id})
    reason = None
    if at_least(req, "2.73") and isinstance(args, dict):
        validate({"type": ["object", "null"], "properties": {"locked_reason": {
            "type": "string", "minLength": 1, "maxLength": 255}},
            "additionalProperties": False}, args)
        reason = args.get("locked_reason")
    actions.lock(req.context, inst, reason)


def _unlock(req, inst, args):
    authorize(req, "os_compute_api:os-lock-server:unlock", {"project_id": inst.project_id})
    actions.unlock(req.context, inst)


def _reset_state(req, inst, args):
    authorize(req, "os_compute_api:os-admin-actions:reset_state")
    validate({"type": "object", "properties": {"state": {"type": "string",
                                                          "enum": ["active", "error"]}},
              "required": ["state"], "additionalProperties": False}, args)
    actions.reset_state(req.context, inst, args["state"])


def _console(req, inst, args):
    authorize(req, "os_compute_api:os-console-output", {"project_id": inst.project_id})
    validate({"type": ["object", "null"], "properties": {"length": {
        "type": ["integer", "string", "null"], "pattern": "^-?[0-9]+$"}},
        "additionalProperties": False}, args)
    # nova refuses only deleting/migrating tasks: a resized guest (VERIFY_RESIZE) runs,
    # and its console is how a user verifies the resize
    if inst.vm_state not in ("active", "stopped", "paused", "suspended", "rescued",
                             "resized", "error") or not inst.host:
        raise exceptions.Conflict(f"Instance {inst.uuid} is not ready")
    text = actions.compute_rpc.get_console_output(req.context, inst.host, inst.uuid)
    length = (args or {}).get("length")
    if length not in (None, ""):
        length = numbers.parse_int(length, "length", minimum=numbers.INT64_MIN)
        if length >= 0:
            # nova's _tail_log: the last N '\n'-separated pieces, so the answer splits
            # into exactly N lines
            text = "\n".join(text.split("\n")[-length:]) if length else ""
    return respond(req, {"output": text})


def _rebuild(req, inst, args):
    authorize(req, "os_compute_api:servers:rebuild", {"project_id": inst.project_id})
    props = {"imageRef": {"type": "string", "minLength": 1}, "name": NAME,
             "adminPass": {"type": "string"}, "metadata": METADATA,
             "preserve_ephemeral": {"type": "boolean"},
             "OS-DCF:diskConfig": {"type": "string", "enum": ["AUTO", "MANUAL"]},
             "accessIPv4": {"type": "string", "format": "ipv4"},
             "accessIPv6": {"type": "string", "format": "ipv6"}}
    if not at_least(req, "2.57"):
        props["personality"] = {"type": "array"}
    if at_least(req, "2.19"):
        props["description"] = {"type": ["string", "null"], "maxLength": 255}
    if at_least(req, "2.54"):
        props["key_name"] = {"type": ["string", "null"]}
    if at_least(req, "2.57"):
        props["user_data"] = {"type": ["string", "null"], "format": "base64"}
    from pocketstack.compute.rest.server_schemas import hostname_schema

    if hostname_schema(version(req)) is not None:
        props["hostname"] = hostname_schema(version(req))
    validate({"type": "object", "properties": props, "required": ["imageRef"],
              "additionalProperties": False}, args)
    from pocketstack.compute import api

    image_ref = args["imageRef"].rstrip("/").rsplit("/", 1)[-1]
    flavor = inst.flavor
    volume_backed = bool((inst.request_spec or {}).get("is_bfv"))
    reimage = volume_backed and at_least(req, "2.93")
    if volume_backed:
        # The root disk is a volume: before 2.93 the guest can only be rebuilt from what
        # is on it (the volume's image, as nova compares); from 2.93 the host writes the
        # image over the volume. The flavor's disk does not matter.
        current = ((inst.request_spec or {}).get("image") or {}).get("id") or inst.image_ref
        if image_ref != current and not reimage:
            raise exceptions.BadRequest(f"Image {image_ref} is unacceptable: Unable to "
                                        "rebuild with a different image for a "
                                        "volume-backed server.")
        flavor = dict(flavor, root_gb=0)
    image = api._image(req.context, image_ref, flavor)
    # as nova's rebuild resets the image properties in the server's system metadata
    values = {"request_spec": dict(inst.request_spec or {},
                                   image_meta_props=image_props.shown(image))}
    if "name" in args:
        values["display_name"] = args["name"]
    if "metadata" in args:
        values["metadata_"] = args["metadata"]
    if "description" in args:
        values["display_description"] = args["description"]
    if "hostname" in args:  # 2.90
        values["hostname"] = args["hostname"]
    if "accessIPv4" in args:
        values["access_ip_v4"] = args["accessIPv4"]
    if "accessIPv6" in args:
        from pocketstack.compute.rest.servers import canonical_ipv6

        values["access_ip_v6"] = canonical_ipv6(args["accessIPv6"])
    admin_pass = args.get("adminPass") or api.generate_password()
    actions.rebuild(req.context, inst, image_ref, values, volume_backed=volume_backed,
                    reimage_boot_volume=reimage)
    inst = instances.get(req.context, inst.uuid)
    server = views.after_change(req, inst)
    server["adminPass"] = admin_pass
    return respond(req, {"server": server}, 202)


INHERITED_IMAGE_PROPERTIES = ("kernel_id", "ramdisk_id", "os_command_line",
                              "hypervisor_type", "architecture", "vm_mode", "os_distro",
                              "os_type")


def _create_image(req, inst, args):
    authorize(req, "os_compute_api:servers:create_image", {"project_id": inst.project_id})
    validate({"type": "object", "properties": {"name": NAME, "metadata": METADATA},
              "required": ["name"], "additionalProperties": False}, args)
    from pocketstack.clients.image import ImageClient

    # As nova, the snapshot inherits the base image's boot properties, so a guest booted
    # from a kernel and ramdisk boots from its snapshot too.
    base = ImageClient(req.context).get(inst.image_ref) if inst.image_ref else None
    props = {k: v for k, v in (base or {}).items()
             if k in INHERITED_IMAGE_PROPERTIES or k.startswith(("hw_", "img_"))}
    props.update(args.get("metadata") or {})
    props.update(instance_uuid=inst.uuid, image_type="snapshot")
    if (inst.request_spec or {}).get("is_bfv"):
        authorize(req, "os_compute_api:servers:create_image:allow_volume_backed",
                  {"project_id": inst.project_id})
        from pocketstack.compute.volume_snapshots import snapshot_volume_backed

        image = snapshot_volume_backed(req.context, inst, args["name"], props)
    else:
        image = actions.snapshot(req.context, inst, lambda: ImageClient(req.context).create(
            **dict(props, name=args["name"], disk_format="qcow2", container_format="bare")))
    if at_least(req, "2.45"):
        return respond(req, {"image_id": image["id"]}, 202)
    return respond(req, None, 202,
                   headers={"Location": f"{req.service_url}/images/{image['id']}"})


HANDLERS = {
    "os-stop": _stop, "os-start": _start, "reboot": _reboot,
    "pause": _simple("pause", "os_compute_api:os-pause-server:pause"),
    "unpause": _simple("unpause", "os_compute_api:os-pause-server:unpause"),
    "suspend": _simple("suspend", "os_compute_api:os-suspend-server:suspend"),
    "resume": _simple("resume", "os_compute_api:os-suspend-server:resume"),
    "lock": _lock, "unlock": _unlock, "os-resetState": _reset_state,
    "os-getConsoleOutput": _console, "rebuild": _rebuild, "createImage": _create_image,
}
HANDLERS.update(server_resize.HANDLERS)
HANDLERS.update(server_security_groups.HANDLERS)
HANDLERS.update(consoles.HANDLERS)
HANDLERS.update(server_lifecycle.HANDLERS)


def server_action(req):
    data = req.json()
    if not isinstance(data, dict) or len(data) != 1:
        raise exceptions.BadRequest("There is either no action or more than one action.")
    name, args = next(iter(data.items()))
    handler = HANDLERS.get(name)
    if handler is None:
        raise exceptions.BadRequest(f"There is no such action: {name}")
    inst = instances.get(req.context, req.params["server_id"])
    result = handler(req, inst, args)
    return result if result is not None else respond(req, None, 202)
