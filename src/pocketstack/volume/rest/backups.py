"""/backups, /backups/detail, /backups/{id}, /restore and the admin actions."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.volume import api, backups, views
from pocketstack.volume.rest import microversion
from pocketstack.volume.rest.common import body, check_project, collection_links, respond


def _view(req, found, dependents: set[str] | None = None) -> dict:
    if dependents is None:
        dependents = backups.dependents([found.id])
    return views.backup(found, req.context, req.service_url, microversion.version(req),
                        found.id in dependents)


def _list(req, detailed: bool):
    check_project(req)
    found = backups.list_backups(req.context, req.query)
    dependents = backups.dependents(b.id for b in found) if detailed else set()
    items = [_view(req, b, dependents) if detailed else {
        "id": b.id, "name": b.name, "links": _view(req, b, dependents)["links"]}
        for b in found]
    out = {"backups": items}
    links = collection_links(req, "backups", found, api.limit_marker(req.query)[0],
                             len(found))
    if links:
        out["backups_links"] = links
    return respond(req, out)


def list_backups(req):
    return _list(req, detailed=False)


def list_detail(req):
    return _list(req, detailed=True)


def create(req):
    found = backups.create_backup(req.context, body(req))
    return respond(req, {"backup": {"id": found.id, "name": found.name,
                                    "links": _view(req, found)["links"]}}, 202)


def show(req):
    check_project(req)
    return respond(req, {"backup": _view(req, backups.get_backup(req.context,
                                                                  req.params["backup_id"]))})


def update(req):
    microversion.require(req, "3.9")
    found = backups.update_backup(req.context, req.params["backup_id"], body(req))
    return respond(req, {"backup": _view(req, found)})


def delete(req):
    check_project(req)
    backups.delete_backup(req.context, req.params["backup_id"])
    return respond(req, None, 202)


def restore(req):
    result = backups.restore_backup(req.context, req.params["backup_id"], body(req))
    return respond(req, {"restore": result}, 202)


def action(req):
    data = body(req)
    if not isinstance(data, dict) or len(data) != 1:
        raise exceptions.BadRequest("Malformed request body: one action is expected.")
    name, args = next(iter(data.items()))
    if name == "os-reset_status":
        backups.reset_status(req.context, req.params["backup_id"], args)
    elif name == "os-force_delete":
        backups.delete_backup(req.context, req.params["backup_id"], force=True)
    else:
        raise exceptions.BadRequest(f"There is no such action: {name}")
    return respond(req, None, 202)
