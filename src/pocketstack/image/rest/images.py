"""/v2/images and /v2/images/{id}: list, create, show, JSON-patch update, delete."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.image import api, imports, patch, query
from pocketstack.wsgi import routing


def _empty_image_id(req) -> bool:
    """``/v2/images/`` (the mount strips the slash): glance reads an empty image id."""
    return req.raw.scope.get("raw_path", b"").endswith(b"/images/")


def list_images(req):
    if _empty_image_id(req):
        raise exceptions.NotFound("No image found with ID ")
    params = list(req.query.multi_items())
    listing = api.list_images(req.context, params)
    body = {"images": listing.images, "first": query.first_link(params),
            "schema": "/v2/schemas/images"}
    if listing.next_marker:
        body["next"] = query.next_link(params, listing.next_marker)
    return routing.json_response(body)


def create_image(req):
    image = api.create_image(req.context, req.json())
    return routing.json_response(image, status=201, headers={
        "Location": f"{req.service_url}/v2/images/{image['id']}",
        "OpenStack-image-import-methods": ",".join(imports.methods())})


def show_image(req):
    return routing.json_response(api.get_image(req.context, req.params["image_id"]))


def update_image(req):
    # The media type is checked before the body is parsed: 415 wins over 400.
    patch.check_content_type(req.headers.get("content-type"))
    changes = patch.parse(req.headers.get("content-type"), req.json())
    return routing.json_response(api.update_image(req.context, req.params["image_id"], changes))


def delete_image(req):
    api.delete_image(req.context, req.params["image_id"])
    return routing.empty()


def delete_without_id(req):
    if _empty_image_id(req):
        raise exceptions.NotFound("No image found with ID ")
    raise exceptions.MethodNotAllowed(
        "The method DELETE is not allowed for this resource.", headers={"Allow": "GET, POST"})
