"""/v1/quotas (the caller's effective quotas) and /v1/project-quotas (admin)."""
from __future__ import annotations

from pocketstack.common import db
from pocketstack.keymanager import access, paging, quotas
from pocketstack.keymanager.rest.util import json_body
from pocketstack.wsgi import routing


def show_own(req):
    access.enforce_plain(req.context, "quotas:get", "Quotas")
    with db.reader() as s:
        return routing.json_response({"quotas": quotas.effective(s, req.context.project_id)})


def list_projects(req):
    access.enforce_plain(req.context, "project_quotas:get", "Project Quotas")
    offset, limit = paging.clean(req.query.get("offset"), req.query.get("limit"))
    items, total = quotas.list_projects(offset, limit)
    body = paging.page(req.service_url, "project-quotas", items, offset, limit, total,
                       req.query)
    return routing.json_response({"project_quotas": body.pop("project-quotas"), **body})


def show_project(req):
    access.enforce_plain(req.context, "project_quotas:get", "Project Quotas")
    return routing.json_response({"project_quotas": quotas.get_project(
        req.params["project_id"])})


def set_project(req):
    access.enforce_plain(req.context, "project_quotas:put", "Project Quotas")
    quotas.set_project(req.params["project_id"], json_body(req))
    return routing.empty(204)


def delete_project(req):
    access.enforce_plain(req.context, "project_quotas:delete", "Project Quotas")
    quotas.delete_project(req.params["project_id"])
    return routing.empty(204)
