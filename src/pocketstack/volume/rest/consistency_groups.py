"""cinder's deprecated consistency-group API (/consistencygroups, /cgsnapshots), kept by
cinder as views over generic groups and group snapshots - and so here: a consistency
group is a group of the reserved group type ``default_cgsnapshot_type`` (made when
first needed), the lists show every group, as cinder's do. Bodies are translated to the
groups API's, with what openstacksdk sends besides cinder's schema: ``volume_types`` as a
list, the delete's ``consistency_group`` key, an update by PUT on the group itself."""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import isotime_naive, utcnow
from pocketstack.volume import group_snapshots, groups, validation
from pocketstack.volume.models import GroupType
from pocketstack.volume.rest.common import check_project, respond

CG_TYPE = "default_cgsnapshot_type"


def cg_type_id() -> str:
    """The reserved group type of consistency groups (cinder's migration makes it)."""
    with db.transaction() as s:
        found = s.scalar(sa.select(GroupType.id).where(GroupType.name == CG_TYPE))
        if found:
            return found
        gt = GroupType(id=str(uuid.uuid4()), name=CG_TYPE, description="Default group type "
                       "for migrating cgsnapshot", is_public=True,
                       group_specs={"consistent_group_snapshot_enabled": "<is> True"},
                       created_at=utcnow())
        try:
            with s.begin_nested():
                s.add(gt)
        except sa.exc.IntegrityError:
            return s.scalar(sa.select(GroupType.id).where(GroupType.name == CG_TYPE))
        return gt.id


def _detail(group) -> dict:
    return {"id": group.id, "status": group.status,
            "availability_zone": group.availability_zone,
            "created_at": isotime_naive(group.created_at), "name": group.name,
            "description": group.description,
            "volume_types": list(group.volume_type_ids or [])}


def _inner(req, *keys, required: bool = True) -> dict:
    check_project(req)
    data = req.json(required=required)
    for key in keys:
        if isinstance(data, dict) and isinstance(data.get(key), dict):
            return data[key]
    if not required and data in (None, {}):
        return {}
    raise validation.bad(f"Missing required element '{keys[0]}' in request body.")


def list_cgs(req):
    check_project(req)
    found = groups.list_groups(req.context, req.query)
    return respond(req, {"consistencygroups": [{"id": g.id, "name": g.name}
                                               for g in found]})


def list_cgs_detail(req):
    check_project(req)
    found = groups.list_groups(req.context, req.query)
    return respond(req, {"consistencygroups": [_detail(g) for g in found]})


def show_cg(req):
    check_project(req)
    return respond(req, {"consistencygroup": _detail(groups.get(req.context,
                                                                req.params["cg_id"]))})


def create_cg(req):
    data = _inner(req, "consistencygroup")
    validation.only(data, ("name", "description", "volume_types", "availability_zone"),
                    "consistencygroup")
    wanted = data.get("volume_types")
    if isinstance(wanted, str):
        wanted = [v for v in wanted.rstrip(",").split(",") if v]
    if not wanted:
        raise exceptions.BadRequest(f"volume_types must be provided to create consistency "
                                    f"group {str(data.get('name'))[:255]}.")
    group = groups.create(req.context, {"group": {
        **{k: v for k, v in data.items() if k != "volume_types"},
        "group_type": cg_type_id(), "volume_types": wanted}})
    return respond(req, {"consistencygroup": {"id": group.id, "name": group.name}}, 202)


def create_cg_from_src(req):
    data = _inner(req, "consistencygroup-from-src")
    validation.only(data, ("name", "description", "cgsnapshot_id", "source_cgid"),
                    "consistencygroup-from-src")
    data = {k: v for k, v in data.items() if v is not None}
    if ("cgsnapshot_id" in data) == ("source_cgid" in data):
        raise exceptions.BadRequest("Either 'cgsnapshot_id' or 'source_cgid' must be "
                                    "provided to create consistency group from source, "
                                    "not both.")
    source = {"group_snapshot_id": data["cgsnapshot_id"]} if "cgsnapshot_id" in data \
        else {"source_group_id": data["source_cgid"]}
    group = groups.create_from_src(req.context, {"create-from-src": {
        "name": data.get("name"), "description": data.get("description"), **source}})
    return respond(req, {"consistencygroup": {"id": group.id, "name": group.name}}, 202)


def update_cg(req):
    data = _inner(req, "consistencygroup")
    validation.only(data, ("name", "description", "add_volumes", "remove_volumes"),
                    "consistencygroup")
    data = {k: v for k, v in data.items() if v not in (None, "")}
    if not data:
        raise exceptions.BadRequest("Name, description, add_volumes, and remove_volumes can "
                                    "not be all empty in the request body.")
    groups.update(req.context, req.params["cg_id"], {"group": data})
    return respond(req, None, 202)


def delete_cg(req):
    data = _inner(req, "consistencygroup", "consistency_group", required=False)
    validation.only(data, ("force",), "consistencygroup")
    force = validation.boolean(data.get("force", False), "force")
    groups.delete(req.context, req.params["cg_id"], {"delete-volumes": force})
    return respond(req, None, 202)


# --- cgsnapshots -------------------------------------------------------------------------


def _snapshot_detail(gs) -> dict:
    return {"id": gs.id, "consistencygroup_id": gs.group_id, "status": gs.status,
            "created_at": isotime_naive(gs.created_at), "name": gs.name,
            "description": gs.description}


def list_cgsnapshots(req):
    check_project(req)
    found = group_snapshots.list_group_snapshots(req.context, req.query)
    return respond(req, {"cgsnapshots": [{"id": gs.id, "name": gs.name} for gs in found]})


def list_cgsnapshots_detail(req):
    check_project(req)
    found = group_snapshots.list_group_snapshots(req.context, req.query)
    return respond(req, {"cgsnapshots": [_snapshot_detail(gs) for gs in found]})


def show_cgsnapshot(req):
    check_project(req)
    return respond(req, {"cgsnapshot": _snapshot_detail(group_snapshots.get(
        req.context, req.params["cgsnapshot_id"]))})


def create_cgsnapshot(req):
    data = _inner(req, "cgsnapshot")
    validation.only(data, ("consistencygroup_id", "name", "description"), "cgsnapshot")
    if "consistencygroup_id" not in data:
        raise validation.bad("Invalid input for field/attribute cgsnapshot. "
                             "'consistencygroup_id' is a required property")
    gs = group_snapshots.create(req.context, {"group_snapshot": {
        "group_id": data["consistencygroup_id"], "name": data.get("name"),
        "description": data.get("description")}})
    return respond(req, {"cgsnapshot": {"id": gs.id, "name": gs.name}}, 202)


def delete_cgsnapshot(req):
    check_project(req)
    group_snapshots.delete(req.context, req.params["cgsnapshot_id"])
    return respond(req, None, 202)
