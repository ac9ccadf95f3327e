"""/volumes, /volumes/detail, /volumes/summary, /volumes/{id} and its metadata."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.volume import api, validation, views
from pocketstack.volume.rest import microversion
from pocketstack.volume.rest.common import body, check_project, collection_links, respond


def _detail(req, volume, extensions: bool = True) -> dict:
    return views.volume_detail(volume, req.context, req.service_url,
                               microversion.version(req), extensions=extensions)


def _list(req, detailed: bool):
    check_project(req)
    volumes, total = api.list_volumes(req.context, req.query, microversion.version(req))
    render = (lambda v: _detail(req, v)) if detailed else (
        lambda v: views.volume_summary(v, req.service_url))
    out = {"volumes": [render(v) for v in volumes]}
    limit = api.limit_marker(req.query)[0]
    links = collection_links(req, "volumes/detail" if detailed else "volumes", volumes,
                             limit, total)
    if links:
        out["volumes_links"] = links
    if microversion.at_least(req, "3.45") and validation.boolean(
            req.query.get("with_count", "false"), "with_count"):
        out["count"] = total
    return respond(req, out)


def _empty_id(req) -> None:
    """``/volumes/`` - a show, update or delete with an empty id: cinder's 404."""
    if req.trailing_slash:
        raise exceptions.NotFound("The resource could not be found.")


def list_volumes(req):
    _empty_id(req)
    return _list(req, detailed=False)


def empty_id(req):
    """PUT or DELETE on the collection: ``/volumes/`` is an empty id (404, as cinder);
    without the slash the method is not the collection's (405)."""
    _empty_id(req)
    raise exceptions.MethodNotAllowed(
        f"The method {req.method} is not allowed for this resource.",
        headers={"Allow": "GET, POST"})


def list_detail(req):
    return _list(req, detailed=True)


def create(req):
    volume = api.create_volume(req.context, body(req), microversion.version(req))
    return respond(req, {"volume": _detail(req, volume)}, 202)


def show(req):
    check_project(req)
    return respond(req, {"volume": _detail(req, api.get_volume(req.context,
                                                               req.params["volume_id"]))})


def update(req):
    volume = api.update_volume(req.context, req.params["volume_id"], body(req))
    # cinder's update answers the core view: its extensions extend show and list only
    return respond(req, {"volume": _detail(req, volume, extensions=False)})


def delete(req):
    check_project(req)
    cascade = validation.boolean(req.query.get("cascade", "false"), "cascade")
    force = validation.boolean(req.query.get("force", "false"), "force")
    if force and not microversion.at_least(req, "3.23"):
        raise exceptions.BadRequest("The force parameter needs microversion 3.23.")
    api.delete_volume(req.context, req.params["volume_id"], cascade=cascade, force=force)
    return respond(req, None, 202)


def summary(req):
    check_project(req)
    microversion.require(req, "3.12")
    result = api.summary(req.context, req.query, microversion.version(req))
    if not microversion.at_least(req, "3.36"):
        result.pop("metadata")
    return respond(req, {"volume-summary": result})


# --- metadata -------------------------------------------------------------------------


def show_metadata(req):
    check_project(req)
    return respond(req, {"metadata": api.get_metadata(req.context, req.params["volume_id"])})


def _metadata_body(req) -> dict:
    data = body(req)
    if not isinstance(data, dict) or "metadata" not in data:
        raise exceptions.BadRequest("Malformed request body: 'metadata' is required.")
    return data["metadata"]


def create_metadata(req):
    meta = api.set_metadata(req.context, req.params["volume_id"], _metadata_body(req),
                            replace=False)
    return respond(req, {"metadata": meta})


def replace_metadata(req):
    meta = api.set_metadata(req.context, req.params["volume_id"], _metadata_body(req),
                            replace=True)
    return respond(req, {"metadata": meta})


def show_metadata_key(req):
    check_project(req)
    meta = api.get_metadata(req.context, req.params["volume_id"])
    key = req.params["key"]
    if key not in meta:
        raise exceptions.NotFound(f"Volume {req.params['volume_id']} has no metadata with "
                                  f"key {key}.")
    return respond(req, {"meta": {key: meta[key]}})


def update_metadata_key(req):
    data = body(req)
    key = req.params["key"]
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict):
        raise exceptions.BadRequest("Malformed request body: 'meta' is required.")
    if len(data["meta"]) != 1 or key not in data["meta"]:
        raise exceptions.BadRequest("Request body and URI mismatch")
    api.set_metadata(req.context, req.params["volume_id"], data["meta"], replace=False)
    return respond(req, {"meta": data["meta"]})


def delete_metadata_key(req):
    check_project(req)
    api.delete_metadata_key(req.context, req.params["volume_id"], req.params["key"])
    return respond(req, None, 200)
