"""/v2/schemas/*: the JSON schemas clients validate against."""
from __future__ import annotations

from pocketstack.image import schemas
from pocketstack.wsgi import routing


async def image(req):
    return routing.json_response(schemas.image_schema())


async def images(req):
    return routing.json_response(schemas.images_schema())


async def member(req):
    return routing.json_response(schemas.member_schema())


async def members(req):
    return routing.json_response(schemas.members_schema())
