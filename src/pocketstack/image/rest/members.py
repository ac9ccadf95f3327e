"""/v2/images/{id}/members[/{member_id}]."""
from __future__ import annotations

from pocketstack.image import members
from pocketstack.wsgi import routing


def list_members(req):
    found = members.list_members(req.context, req.params["image_id"])
    return routing.json_response({"members": found, "schema": "/v2/schemas/members"})


def add_member(req):
    member = members.add_member(req.context, req.params["image_id"], req.json())
    return routing.json_response(member)


def show_member(req):
    return routing.json_response(
        members.get_member(req.context, req.params["image_id"], req.params["member_id"]))


def update_member(req):
    return routing.json_response(members.update_member(
        req.context, req.params["image_id"], req.params["member_id"], req.json()))


def delete_member(req):
    members.delete_member(req.context, req.params["image_id"], req.params["member_id"])
    return routing.empty()
