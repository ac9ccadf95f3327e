"""/v2/tasks, /v2/tasks/{id}, /v2/images/{id}/tasks and /v2/stores/{store}/{image}."""
from __future__ import annotations

import urllib.parse

from pocketstack.common import exceptions
from pocketstack.image import api, tasks
from pocketstack.wsgi import routing


def list_tasks(req):
    params = dict(req.query.items())
    listing, following = tasks.list_tasks(req.context, params)
    rest = {k: v for k, v in params.items() if k != "marker"}
    body = {"tasks": listing, "first": "/v2/tasks", "schema": "/v2/schemas/tasks"}
    if rest:
        body["first"] = f"/v2/tasks?{urllib.parse.urlencode(rest)}"
    if following:
        body["next"] = "/v2/tasks?" + urllib.parse.urlencode(dict(rest, marker=following))
    return routing.json_response(body)


def create_task(req):
    # glance's legacy task API (deprecated since Mitaka); interoperable import replaces it.
    tasks.authorize(req.context)
    raise exceptions.BadRequest("Creating tasks (the legacy 'import' task) is not supported "
                                "here; use interoperable image import "
                                "(POST /v2/images/{image_id}/import).")


def show_task(req):
    return routing.json_response(tasks.get(req.context, req.params["task_id"]))


def delete_task(req):
    tasks.authorize(req.context)
    raise exceptions.MethodNotAllowed(
        "This operation is currently not permitted on Glance Tasks. They are auto deleted "
        "after reaching the time based on their expires_at property.",
        headers={"Allow": "GET"})


def image_tasks(req):
    return routing.json_response({"tasks": tasks.for_image(req.context,
                                                           req.params["image_id"])})


def delete_from_store(req):
    api.delete_from_store(req.context, req.params["store_id"], req.params["image_id"])
    return routing.empty()
