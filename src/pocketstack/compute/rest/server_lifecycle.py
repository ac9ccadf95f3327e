"""Server actions: rescue, unrescue, changePassword, trigger_crash_dump (2.17), shelve,
shelveOffload, unshelve, migrate, os-migrateLive, evacuate, createBackup, restore and
forceDelete ([compute] reclaim_instance_interval) — bodies,
policies and answers as nova's action controllers."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.compute import lifecycle, migrate
from pocketstack.compute.rest.common import (
    BOOLEAN,
    METADATA,
    NAME,
    NON_NEGATIVE_INT,
    at_least,
    authorize,
    respond,
    to_bool,
    validate,
)

_NULL = {"type": "null"}
_HOST = {"type": ["string", "null"], "minLength": 1, "maxLength": 255}


def _target(inst) -> dict:
    return {"project_id": inst.project_id}


def _rescue(req, inst, args):
    authorize(req, "os_compute_api:os-rescue", _target(inst))
    validate({"type": ["object", "null"], "properties": {
        "adminPass": {"type": "string"}, "rescue_image_ref": {"type": "string",
                                                              "format": "uuid"}},
        "additionalProperties": False}, args)
    from pocketstack.compute.api import generate_password

    password = (args or {}).get("adminPass") or generate_password()
    lifecycle.rescue(req.context, inst, password, (args or {}).get("rescue_image_ref"),
                     allow_bfv=at_least(req, "2.87"))
    return respond(req, {"adminPass": password})


def _unrescue(req, inst, args):
    authorize(req, "os_compute_api:os-unrescue", _target(inst))
    validate(_NULL, args)
    lifecycle.unrescue(req.context, inst)


def _change_password(req, inst, args):
    authorize(req, "os_compute_api:os-admin-password", _target(inst))
    validate({"type": "object", "properties": {"adminPass": {"type": "string"}},
              "required": ["adminPass"], "additionalProperties": False}, args)
    lifecycle.change_password(req.context, inst)


def _crash_dump(req, inst, args):
    if not at_least(req, "2.17"):
        raise exceptions.BadRequest("There is no such action: trigger_crash_dump")
    authorize(req, "os_compute_api:servers:trigger_crash_dump", _target(inst))
    validate(_NULL, args)
    lifecycle.trigger_crash_dump(req.context, inst)


def _shelve(req, inst, args):
    authorize(req, "os_compute_api:os-shelve:shelve", _target(inst))
    validate(_NULL, args)
    lifecycle.shelve(req.context, inst)


def _shelve_offload(req, inst, args):
    authorize(req, "os_compute_api:os-shelve:shelve_offload", _target(inst))
    validate(_NULL, args)
    lifecycle.shelve_offload(req.context, inst)


def _unshelve(req, inst, args):
    authorize(req, "os_compute_api:os-shelve:unshelve", _target(inst))
    if at_least(req, "2.91"):
        # nova's unshelve_v291: a host, and a zone that may be null (unpin)
        validate({"oneOf": [{"type": "object", "properties": {
            "availability_zone": {"oneOf": [{"type": "null"}, {"type": "string"}]},
            "host": {"type": "string"}}, "additionalProperties": False},
            {"type": "null"}]}, args)
    elif at_least(req, "2.77"):
        validate({"type": ["object", "null"], "properties": {
            "availability_zone": {"type": "string", "minLength": 1, "maxLength": 255}},
            "additionalProperties": False}, args)
    else:
        validate(_NULL, args)
    kwargs = {}
    if args and "availability_zone" in args:
        kwargs["zone"] = args["availability_zone"]
    if args and at_least(req, "2.91"):
        kwargs["host"] = args.get("host")
    lifecycle.unshelve(req.context, inst, **kwargs)


def _migrate(req, inst, args):
    authorize(req, "os_compute_api:os-migrate-server:migrate", _target(inst))
    if at_least(req, "2.56"):
        validate({"type": ["object", "null"], "properties": {"host": _HOST},
                  "additionalProperties": False}, args)
    else:
        validate(_NULL, args)
    migrate.migrate(req.context, inst, (args or {}).get("host"))


def _live_migrate(req, inst, args):
    authorize(req, "os_compute_api:os-migrate-server:migrate_live", _target(inst))
    props = {"host": _HOST}
    if at_least(req, "2.25"):
        props["block_migration"] = {"oneOf": [BOOLEAN, {"enum": ["auto"]}]}
    else:
        props["block_migration"] = BOOLEAN
        props["disk_over_commit"] = BOOLEAN
    if at_least(req, "2.30") and not at_least(req, "2.68"):
        props["force"] = BOOLEAN
    validate({"type": "object", "properties": props,
              "required": ["host", "block_migration"] + (
                  [] if at_least(req, "2.25") else ["disk_over_commit"]),
              "additionalProperties": False}, args)
    migrate.live_migrate(req.context, inst, args.get("host"))


def _evacuate(req, inst, args):
    authorize(req, "os_compute_api:os-evacuate", _target(inst))
    props = {"host": {"type": "string", "minLength": 1, "maxLength": 255},
             "adminPass": {"type": "string"}}
    required = []
    if not at_least(req, "2.14"):
        props["onSharedStorage"] = BOOLEAN
        required.append("onSharedStorage")
    if at_least(req, "2.29") and not at_least(req, "2.68"):
        props["force"] = BOOLEAN
    validate({"type": "object", "properties": props, "required": required,
              "additionalProperties": False}, args)
    if args.get("adminPass") and to_bool(args.get("onSharedStorage", False)):
        raise exceptions.BadRequest("admin password can't be changed on existing disk")
    from pocketstack.compute.api import generate_password

    password = args.get("adminPass") or generate_password()
    migrate.evacuate(req.context, inst, args.get("host"),
                     target_state="stopped" if at_least(req, "2.95") else None)
    if at_least(req, "2.14"):
        return respond(req, None, 200)
    return respond(req, {"adminPass": password})


def _create_backup(req, inst, args):
    authorize(req, "os_compute_api:os-create-backup", _target(inst))
    validate({"type": "object", "properties": {
        "name": NAME, "backup_type": {"type": "string"}, "rotation": NON_NEGATIVE_INT,
        "metadata": METADATA}, "required": ["name", "backup_type", "rotation"],
        "additionalProperties": False}, args)
    from pocketstack.compute import backups

    image_id = backups.create_backup(req.context, inst, args["name"], args["backup_type"],
                                     int(args["rotation"]), args.get("metadata") or {})
    if at_least(req, "2.45"):
        return respond(req, {"image_id": image_id}, 202)
    return respond(req, None, 202,
                   headers={"Location": f"{req.service_url}/images/{image_id}"})


def _restore(req, inst, args):
    authorize(req, "os_compute_api:os-deferred-delete:restore", _target(inst))
    validate(_NULL, args)
    lifecycle.restore(req.context, inst)


def _force_delete(req, inst, args):
    authorize(req, "os_compute_api:os-deferred-delete:force", _target(inst))
    validate(_NULL, args)
    from pocketstack.compute import actions

    actions.delete(req.context, inst, soft=False)


HANDLERS = {"rescue": _rescue, "unrescue": _unrescue, "changePassword": _change_password,
            "trigger_crash_dump": _crash_dump, "shelve": _shelve,
            "shelveOffload": _shelve_offload, "unshelve": _unshelve, "migrate": _migrate,
            "os-migrateLive": _live_migrate, "evacuate": _evacuate,
            "createBackup": _create_backup, "restore": _restore, "forceDelete": _force_delete}
