"""/group_types (3.11) with their group_specs, /groups (3.13; create-from-src 3.14,
reset_status 3.20, volume lists 3.25, replication actions 3.38) and /group_snapshots
(3.14; reset_status 3.19). Below its microversion each URL is cinder's 404."""
from __future__ import annotations

from pocketstack.common import exceptions, policy
from pocketstack.volume import group_snapshots, group_types, groups, validation
from pocketstack.volume.rest import microversion
from pocketstack.volume.rest.common import body, check_project, collection_links, respond


def _ready(req, version: str) -> None:
    check_project(req)
    microversion.require(req, version)


# --- group types -------------------------------------------------------------------------


def list_group_types(req):
    _ready(req, "3.11")
    found = group_types.list_types(req.context, req.query)
    return respond(req, {"group_types": [group_types.view(gt, req.context) for gt in found]})


def show_group_type(req):
    _ready(req, "3.11")
    gt = group_types.get(req.context, req.params["group_type_id"])
    return respond(req, {"group_type": group_types.view(gt, req.context)})


def create_group_type(req):
    _ready(req, "3.11")
    gt = group_types.create(req.context, body(req))
    return respond(req, {"group_type": group_types.view(gt, req.context)}, 202)


def update_group_type(req):
    _ready(req, "3.11")
    gt = group_types.update(req.context, req.params["group_type_id"], body(req))
    return respond(req, {"group_type": group_types.view(gt, req.context)})


def delete_group_type(req):
    _ready(req, "3.11")
    group_types.delete(req.context, req.params["group_type_id"])
    return respond(req, None, 202)


def list_specs(req):
    _ready(req, "3.11")
    return respond(req, {"group_specs": group_types.get_specs(
        req.context, req.params["group_type_id"])})


def create_specs(req):
    _ready(req, "3.11")
    specs = validation.obj(body(req), "group_specs")
    group_types.set_specs(req.context, req.params["group_type_id"], specs, "create")
    return respond(req, {"group_specs": specs}, 202)


def show_spec(req):
    _ready(req, "3.11")
    specs = group_types.get_specs(req.context, req.params["group_type_id"])
    key = req.params["key"]
    if key not in specs:
        raise exceptions.NotFound(f"Group Type {req.params['group_type_id']} has no specs "
                                  f"with key {key}.")
    return respond(req, {key: specs[key]})


def update_spec(req):
    _ready(req, "3.11")
    data, key = body(req), req.params["key"]
    if not isinstance(data, dict) or len(data) != 1 or key not in data:
        raise exceptions.BadRequest("Request body and URI mismatch")
    group_types.set_specs(req.context, req.params["group_type_id"], data, "update")
    return respond(req, data)


def delete_spec(req):
    _ready(req, "3.11")
    group_types.delete_spec(req.context, req.params["group_type_id"], req.params["key"])
    return respond(req, None, 202)


# --- groups ------------------------------------------------------------------------------


def _group_view(req, group) -> dict:
    version = microversion.version(req)
    with_volumes = version >= (3, 25) and validation.boolean(
        req.query.get("list_volume", "false"), "list_volume")
    return groups.view(group, req.context, version,
                       groups.volume_ids(group.id) if with_volumes else None)


def _list_groups(req, detailed: bool):
    _ready(req, "3.13")
    found = groups.list_groups(req.context, req.query)
    items = [_group_view(req, g) if detailed else {"id": g.id, "name": g.name}
             for g in found]
    out = {"groups": items}
    from pocketstack.volume import api

    links = collection_links(req, "groups", found, api.limit_marker(req.query)[0],
                             len(found))
    if links:
        out["group_links"] = links
    return respond(req, out)


def list_groups(req):
    return _list_groups(req, detailed=False)


def list_groups_detail(req):
    return _list_groups(req, detailed=True)


def show_group(req):
    _ready(req, "3.13")
    return respond(req, {"group": _group_view(req, groups.get(req.context,
                                                               req.params["group_id"]))})


def create_group(req):
    _ready(req, "3.13")
    group = groups.create(req.context, body(req))
    return respond(req, {"group": {"id": group.id, "name": group.name}}, 202)


def update_group(req):
    _ready(req, "3.13")
    groups.update(req.context, req.params["group_id"], body(req))
    return respond(req, None, 202)


def group_action(req):
    _ready(req, "3.13")
    data = body(req)
    if not isinstance(data, dict) or len(data) != 1:
        raise exceptions.BadRequest("Malformed request body: one action is expected.")
    name, args = next(iter(data.items()))
    group_id, ctx = req.params["group_id"], req.context
    if name == "delete":
        groups.delete(ctx, group_id, args)
    elif name == "reset_status":
        microversion.require(req, "3.20")
        groups.reset_status(ctx, group_id, args)
    elif name in ("enable_replication", "disable_replication", "failover_replication",
                  "list_replication_targets"):
        microversion.require(req, "3.38")
        group = groups.get(ctx, group_id)
        policy.authorize(ctx, f"group:{name}", groups.target(group))
        if name == "list_replication_targets":
            return respond(req, {"replication_targets": []})
        raise exceptions.BadRequest(f"Invalid group type: Group {group.id} is not "
                                    "replication-enabled (no backend here replicates).")
    else:
        raise exceptions.BadRequest(f"There is no such action: {str(name)[:60]}")
    return respond(req, None, 202)


def create_group_from_src(req):
    _ready(req, "3.14")
    group = groups.create_from_src(req.context, body(req))
    return respond(req, {"group": {"id": group.id, "name": group.name}}, 202)


# --- group snapshots ---------------------------------------------------------------------


def _list_group_snapshots(req, detailed: bool):
    _ready(req, "3.14")
    found = group_snapshots.list_group_snapshots(req.context, req.query)
    version = microversion.version(req)
    items = [group_snapshots.view(gs, req.context, version) if detailed
             else group_snapshots.summary_view(gs) for gs in found]
    out = {"group_snapshots": items}
    from pocketstack.volume import api

    links = collection_links(req, "group_snapshots", found,
                             api.limit_marker(req.query)[0], len(found))
    if links:
        out["group_snapshot_links"] = links
    return respond(req, out)


def list_group_snapshots(req):
    return _list_group_snapshots(req, detailed=False)


def list_group_snapshots_detail(req):
    return _list_group_snapshots(req, detailed=True)


def show_group_snapshot(req):
    _ready(req, "3.14")
    gs = group_snapshots.get(req.context, req.params["group_snapshot_id"])
    return respond(req, {"group_snapshot": group_snapshots.view(
        gs, req.context, microversion.version(req))})


def create_group_snapshot(req):
    _ready(req, "3.14")
    gs = group_snapshots.create(req.context, body(req))
    return respond(req, {"group_snapshot": group_snapshots.summary_view(gs)}, 202)


def delete_group_snapshot(req):
    _ready(req, "3.14")
    group_snapshots.delete(req.context, req.params["group_snapshot_id"])
    return respond(req, None, 202)


def group_snapshot_action(req):
    _ready(req, "3.19")
    data = body(req)
    if not isinstance(data, dict) or list(data) != ["reset_status"]:
        raise exceptions.BadRequest("There is no such action: only reset_status is known.")
    group_snapshots.reset_status(req.context, req.params["group_snapshot_id"],
                                 data["reset_status"])
    return respond(req, None, 202)
