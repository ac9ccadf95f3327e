"""/snapshots, /snapshots/detail, /snapshots/{id}, its metadata and actions."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.volume import snapshots, views
from pocketstack.volume.rest import microversion
from pocketstack.volume.rest.common import body, check_project, collection_links, respond


def _view(req, snap, extended: bool = False) -> dict:
    return views.snapshot(snap, req.context, microversion.version(req), extended=extended)


def _list(req, detailed: bool):
    check_project(req)
    found = snapshots.list_snapshots(req.context, req.query, microversion.version(req))
    if detailed:
        items = [_view(req, s, extended=True) for s in found]
    else:
        items = [views.snapshot_summary(s) for s in found]
    out = {"snapshots": items}
    from pocketstack.volume import api

    links = collection_links(req, "snapshots", found, api.limit_marker(req.query)[0],
                             len(found))
    if links:
        out["snapshots_links"] = links
    return respond(req, out)


def list_snapshots(req):
    return _list(req, detailed=False)


def list_detail(req):
    return _list(req, detailed=True)


def create(req):
    snap = snapshots.create_snapshot(req.context, body(req), microversion.version(req))
    return respond(req, {"snapshot": _view(req, snap)}, 202)


def show(req):
    check_project(req)
    return respond(req, {"snapshot": _view(req, snapshots.get_snapshot(
        req.context, req.params["snapshot_id"]), extended=True)})


def update(req):
    snap = snapshots.update_snapshot(req.context, req.params["snapshot_id"], body(req))
    return respond(req, {"snapshot": _view(req, snap)})


def delete(req):
    check_project(req)
    snapshots.delete_snapshot(req.context, req.params["snapshot_id"])
    return respond(req, None, 202)


def action(req):
    data = body(req)
    if not isinstance(data, dict) or len(data) != 1:
        raise exceptions.BadRequest("Malformed request body: one action is expected.")
    name, args = next(iter(data.items()))
    if name == "os-reset_status":
        snapshots.reset_status(req.context, req.params["snapshot_id"], args)
    elif name == "os-update_snapshot_status":
        from pocketstack.volume import service_actions

        service_actions.update_snapshot_status(req.context, req.params["snapshot_id"], args)
    elif name == "os-unmanage":
        from pocketstack.volume import snapshot_manage

        snapshot_manage.unmanage(req.context, req.params["snapshot_id"], args)
    elif name == "os-force_delete":
        snapshots.delete_snapshot(req.context, req.params["snapshot_id"], force=True)
    else:
        raise exceptions.BadRequest(f"There is no such action: {name}")
    return respond(req, None, 202)


def show_metadata(req):
    check_project(req)
    snap = snapshots.get_snapshot(req.context, req.params["snapshot_id"])
    return respond(req, {"metadata": dict(snap.meta or {})})


def _meta(req, key="metadata"):
    data = body(req)
    if not isinstance(data, dict) or key not in data:
        raise exceptions.BadRequest(f"Malformed request body: '{key}' is required.")
    return data[key]


def create_metadata(req):
    return respond(req, {"metadata": snapshots.set_metadata(
        req.context, req.params["snapshot_id"], _meta(req), replace=False)})


def replace_metadata(req):
    return respond(req, {"metadata": snapshots.set_metadata(
        req.context, req.params["snapshot_id"], _meta(req), replace=True)})


def show_metadata_key(req):
    check_project(req)
    meta = snapshots.get_snapshot(req.context, req.params["snapshot_id"]).meta or {}
    key = req.params["key"]
    if key not in meta:
        raise exceptions.NotFound(f"Snapshot {req.params['snapshot_id']} has no metadata "
                                  f"with key {key}.")
    return respond(req, {"meta": {key: meta[key]}})


def update_metadata_key(req):
    meta = _meta(req, "meta")
    if not isinstance(meta, dict) or len(meta) != 1 or req.params["key"] not in meta:
        raise exceptions.BadRequest("Request body and URI mismatch")
    snapshots.set_metadata(req.context, req.params["snapshot_id"], meta, replace=False)
    return respond(req, {"meta": meta})


def delete_metadata_key(req):
    check_project(req)
    snapshots.delete_metadata_key(req.context, req.params["snapshot_id"], req.params["key"])
    return respond(req, None, 200)
