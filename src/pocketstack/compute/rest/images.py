"""nova's /images proxy to the image service (deprecated: 404 from 2.36 on, its metadata
from 2.39 on, as nova): list, detail, show and delete, and the image's metadata — the
image's own properties — to read and change (nova/api/openstack/compute/images.py,
image_metadata.py, views/images.py). Every call goes to the image API with the user's
token (clients/image.py), so glance decides what the user may see and change."""
from __future__ import annotations

import datetime as dt

from pocketstack.clients.image import ImageClient
from pocketstack.common import config, exceptions
from pocketstack.compute.rest.common import (METADATA, at_least, body, limit_marker, links,
                                             next_link, respond, to_bool)

# glance's base properties (those its image schema knows); every other key is a property
# the image carries, shown as nova's "metadata"
_BASE = {"id", "name", "status", "visibility", "protected", "os_hidden", "checksum",
         "os_hash_algo", "os_hash_value", "owner", "size", "virtual_size",
         "container_format", "disk_format", "created_at", "updated_at", "tags", "direct_url",
         "min_ram", "min_disk", "self", "file", "stores", "schema", "locations"}

_STATUS = {"active": "ACTIVE", "queued": "SAVING", "saving": "SAVING", "deleted": "DELETED",
           "pending_delete": "DELETED", "killed": "ERROR"}
_PROGRESS = {"queued": 25, "saving": 50, "active": 100}

# nova's SUPPORTED_FILTERS: its query parameter -> glance's
_FILTERS = {"name": "name", "status": "status", "changes-since": "changes-since",
            "server": "property-instance_uuid", "type": "property-image_type",
            "minRam": "min_ram", "minDisk": "min_disk"}


def _before(req, version: str) -> None:
    if at_least(req, version):
        raise exceptions.NotFound("The resource could not be found.")


def _properties(image: dict) -> dict:
    return {k: v for k, v in image.items() if k not in _BASE}


def _isotime(value):
    if not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    return parsed.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _links(req, image_id: str) -> list[dict]:
    return links(req, "images", image_id) + [{
        "rel": "alternate", "type": "application/vnd.openstack.image",
        "href": f"{config.public_url()}/image/images/{image_id}"}]


def _basic(req, image: dict) -> dict:
    return {"id": image["id"], "name": image.get("name"), "links": _links(req, image["id"])}


def _detail(req, image: dict) -> dict:
    metadata = _properties(image)
    out = {"id": image["id"], "name": image.get("name"),
           "minRam": int(image.get("min_ram") or 0), "minDisk": int(image.get("min_disk") or 0),
           "metadata": metadata, "created": _isotime(image.get("created_at")),
           "updated": _isotime(image.get("updated_at")),
           "status": _STATUS.get(image.get("status"), "UNKNOWN"),
           "progress": _PROGRESS.get(image.get("status"), 0),
           "OS-EXT-IMG-SIZE:size": image.get("size") or 0,
           "links": _links(req, image["id"])}
    server = metadata.get("instance_uuid")
    if server is not None:
        out["server"] = {"id": server, "links": links(req, "servers", server)}
    disk_config = metadata.get("auto_disk_config")
    if disk_config is not None:
        out["OS-DCF:diskConfig"] = "AUTO" if to_bool(disk_config) else "MANUAL"
    return out


def _glance_query(req, limit: int, marker: str | None) -> dict:
    """nova's _get_filters and glance.py's _extract_query_params_v2."""
    params: dict = {"limit": limit}
    if marker:
        params["marker"] = marker
    for name, value in req.query.items():
        if name not in _FILTERS and not name.startswith("property-"):
            continue
        name = _FILTERS.get(name, name)
        if name == "property-instance_uuid":
            value = value.rsplit("/", 1)[-1]
        if name == "status":
            value = value.lower()
        if name.startswith("property-"):
            name = name[len("property-"):]
        if name == "changes-since":
            name, value = "updated_at", f"gte:{value}"
        params[name] = value
    return params


def _list(req, view, collection: str):
    _before(req, "2.36")
    limit, marker = limit_marker(req)
    resp = ImageClient(req.context).list_page(**_glance_query(req, limit, marker))
    if resp.status_code == 400:
        raise exceptions.BadRequest(_glance_message(resp))
    images = resp.json()["images"]
    out: dict = {"images": [view(req, i) for i in images]}
    more = next_link(req, collection, images, limit)
    if more:
        out["images_links"] = more
    return respond(req, out)


def _glance_message(resp) -> str:
    try:
        data = resp.json()
        return (data.get("message") or data.get("error", {}).get("message")
                or resp.text[:200])
    except (ValueError, AttributeError):
        return resp.text[:200]


def list_images(req):
    return _list(req, _basic, "images")


def list_images_detail(req):
    return _list(req, _detail, "images/detail")


def _image(req, image_id: str) -> dict:
    resp = ImageClient(req.context).fetch(image_id)
    if resp.status_code == 403:
        raise exceptions.Forbidden(f"Not authorized for image {image_id}.")
    if resp.status_code == 404:
        raise exceptions.NotFound("Image not found.")
    return resp.json()


def show_image(req):
    _before(req, "2.36")
    return respond(req, {"image": _detail(req, _image(req, req.params["image_id"]))})


def delete_image(req):
    _before(req, "2.36")
    resp = ImageClient(req.context).remove(req.params["image_id"])
    if resp.status_code == 404:
        raise exceptions.NotFound("Image not found.")
    if resp.status_code == 403:
        raise exceptions.Forbidden("You are not allowed to delete the image.")
    if resp.status_code == 409:  # protected
        raise exceptions.Forbidden("You are not allowed to delete the image.")
    return respond(req, None, 204)


# --- /images/{id}/metadata (to 2.38) --------------------------------------------------------

_METADATA_BODY = {"type": "object", "properties": {"metadata": METADATA},
                  "required": ["metadata"], "additionalProperties": False}
_META_BODY = {"type": "object",
              "properties": {"meta": dict(METADATA, minProperties=1, maxProperties=1)},
              "required": ["meta"], "additionalProperties": False}


def _save(req, image: dict, properties: dict) -> dict:
    """Make the image's properties ``properties`` (nova's update with purge_props)."""
    from pocketstack.compute import quotas

    limit = quotas.limits(req.context.project_id)["metadata_items"]
    if limit >= 0 and len(properties) > limit:
        raise exceptions.Forbidden("Image metadata limit exceeded")
    current = _properties(image)
    changes = [{"op": "remove", "path": f"/{k}"} for k in current if k not in properties]
    changes += [{"op": "replace" if k in current else "add", "path": f"/{k}", "value": v}
                for k, v in properties.items() if current.get(k) != v]
    if not changes:
        return current
    resp = ImageClient(req.context).patch(image["id"], changes)
    if resp.status_code == 404:
        raise exceptions.NotFound("Image not found.")
    if resp.status_code in (403, 413):
        raise exceptions.Forbidden(_glance_message(resp))
    if resp.status_code in (400, 409):
        raise exceptions.BadRequest(_glance_message(resp))
    return _properties(resp.json())


def list_image_metadata(req):
    _before(req, "2.39")
    return respond(req, {"metadata": _properties(_image(req, req.params["image_id"]))})


def show_image_metadata(req):
    _before(req, "2.39")
    metadata = _properties(_image(req, req.params["image_id"]))
    key = req.params["key"]
    if key not in metadata:
        raise exceptions.NotFound("The resource could not be found.")
    return respond(req, {"meta": {key: metadata[key]}})


def create_image_metadata(req):
    """POST: merge the given items into the image's."""
    _before(req, "2.39")
    data = body(req, _METADATA_BODY)["metadata"]
    image = _image(req, req.params["image_id"])
    return respond(req, {"metadata": _save(req, image, {**_properties(image), **data})})


def replace_image_metadata(req):
    """PUT: the image's metadata becomes the given items."""
    _before(req, "2.39")
    data = body(req, _METADATA_BODY)["metadata"]
    image = _image(req, req.params["image_id"])
    _save(req, image, data)
    return respond(req, {"metadata": data})


def update_image_metadata_item(req):
    _before(req, "2.39")
    meta = body(req, _META_BODY)["meta"]
    key = req.params["key"]
    if key not in meta:
        raise exceptions.BadRequest("Request body and URI mismatch")
    image = _image(req, req.params["image_id"])
    _save(req, image, {**_properties(image), key: meta[key]})
    return respond(req, {"meta": meta})


def delete_image_metadata_item(req):
    _before(req, "2.39")
    image = _image(req, req.params["image_id"])
    properties = _properties(image)
    key = req.params["key"]
    if key not in properties:
        raise exceptions.NotFound("Invalid metadata key")
    properties.pop(key)
    _save(req, image, properties)
    return respond(req, None, 204)
