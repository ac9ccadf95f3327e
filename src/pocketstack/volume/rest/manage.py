"""POST /os-volume-manage (cinder's extension), POST /manageable_volumes (3.8+) and GET
/manageable_volumes[/detail]; the os-unmanage action is in volume_actions.py."""
from __future__ import annotations

from pocketstack.volume import manage, snapshot_manage, views
from pocketstack.volume.rest import microversion
from pocketstack.volume.rest.common import body, check_project, respond


def create(req):
    volume = manage.manage_volume(req.context, body(req))
    # cinder answers the legacy detail view (no microversion additions)
    return respond(req, {"volume": views.volume_detail(volume, req.context, req.service_url,
                                                       (3, 0), extensions=False)}, 202)


def create_v3(req):
    """POST /manageable_volumes: the same, from 3.8 on (openstacksdk's manage_volume)."""
    microversion.require(req, "3.8")
    return create(req)


def _list(req, detailed: bool):
    """Served at every microversion, unlike cinder (3.8+): openstacksdk's
    manageable_volumes() sends none, and would get cinder's 404."""
    check_project(req)
    return respond(req, {"manageable-volumes": manage.list_manageable(
        req.context, req.query, detailed)})


def list_manageable(req):
    return _list(req, detailed=False)


def list_manageable_detail(req):
    return _list(req, detailed=True)


# --- snapshots: POST /os-snapshot-manage, /manageable_snapshots ---------------------------


def create_snapshot(req):
    snap = snapshot_manage.manage_snapshot(req.context, body(req))
    # cinder's snapshot manage answers with the plain (v2) view builder at any version
    return respond(req, {"snapshot": views.snapshot_summary(snap)}, 202)


def create_snapshot_v3(req):
    microversion.require(req, "3.8")
    return create_snapshot(req)


def _list_snapshots(req, detailed: bool):
    """At every microversion, as the volume list (openstacksdk sends none)."""
    check_project(req)
    return respond(req, {"manageable-snapshots": snapshot_manage.list_manageable(
        req.context, req.query, detailed)})


def list_manageable_snapshots(req):
    return _list_snapshots(req, detailed=False)


def list_manageable_snapshots_detail(req):
    return _list_snapshots(req, detailed=True)
