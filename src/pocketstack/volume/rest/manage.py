"""POST /os-volume-manage (cinder's extension), POST /manageable_volumes (3.8+) and GET
/manageable_volumes[/detail]; the os-unmanage action is in volume_actions.py."""
from __future__ import annotations

from pocketstack.volume import manage, views
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
