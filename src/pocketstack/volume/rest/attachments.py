"""/attachments (3.27+) and /attachments/{id}[/action] (os-complete, 3.44+)."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.volume import attach, views
from pocketstack.volume.rest import microversion
from pocketstack.volume.rest.common import body, check_project, respond


def _require(req):
    check_project(req)
    microversion.require(req, "3.27")


def list_attachments(req):
    _require(req)
    found = attach.list_attachments(req.context, req.query)
    return respond(req, {"attachments": [views.attachment_summary(a) for a in found]})


def list_detail(req):
    _require(req)
    found = attach.list_attachments(req.context, req.query)
    return respond(req, {"attachments": [views.attachment_detail(a) for a in found]})


def show(req):
    _require(req)
    found = attach.get_attachment(req.context, req.params["attachment_id"])
    return respond(req, {"attachment": views.attachment_detail(found)})


def create(req):
    _require(req)
    data = body(req)
    if isinstance(data, dict) and isinstance(data.get("attachment"), dict) and \
            "mode" in data["attachment"] and not microversion.at_least(req, "3.54"):
        raise exceptions.BadRequest("Additional properties are not allowed ('mode' was "
                                    "unexpected): attach mode needs microversion 3.54.")
    found = attach.create_attachment(req.context, data)
    return respond(req, {"attachment": views.attachment_detail(found)})


def update(req):
    _require(req)
    found = attach.update_attachment(req.context, req.params["attachment_id"], body(req))
    return respond(req, {"attachment": views.attachment_detail(found)})


def delete(req):
    _require(req)
    remaining = attach.delete_attachment(req.context, req.params["attachment_id"])
    return respond(req, {"attachments": [views.attachment_summary(a) for a in remaining]})


def action(req):
    _require(req)
    data = body(req)
    if not isinstance(data, dict) or "os-complete" not in data or len(data) != 1:
        raise exceptions.BadRequest("There is no such action: the attachment action is "
                                    "os-complete.")
    microversion.require(req, "3.44")
    attach.complete_attachment(req.context, req.params["attachment_id"])
    return respond(req, None, 204)
