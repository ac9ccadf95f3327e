"""/v3/OS-EP-FILTER: project endpoints and endpoint groups (keystone/api/os_ep_filter.py)."""
from __future__ import annotations

from pocketstack.identity import endpoint_filter as ef
from pocketstack.identity import schemas
from pocketstack.identity.rest import common, views
from pocketstack.wsgi import routing

_P = "/v3/OS-EP-FILTER"
_group_props = {
    "name": schemas.name_255, "description": schemas.nullable(schemas.description),
    "filters": {"type": "object", "properties": {
        "interface": {"enum": ["admin", "internal", "public"]},
        "service_id": {"type": "string"}, "region_id": {"type": ["string", "null"]},
        "enabled": schemas.boolean}}}
GROUP_CREATE = schemas.envelope("endpoint_group", schemas._entity(
    _group_props, ["name", "filters"], extra=False))
GROUP_UPDATE = schemas.envelope("endpoint_group", schemas._entity(
    _group_props, extra=False, update=True))


def group_view(req, g) -> dict:
    return {"id": g.id, "name": g.name, "description": g.description,
            "filters": dict(g.filters or {}),
            "links": {"self": common.self_url(req, f"{_P}/endpoint_groups/{g.id}")}}


def _collection(req, key, items, view):
    return common.collection(req, key, items, view)


# --- project endpoints --------------------------------------------------------------------

def add_endpoint(req):
    common.authorize(req, "identity:add_endpoint_to_project")
    ef.add_endpoint(req.params["project_id"], req.params["endpoint_id"])
    return routing.empty()


def check_endpoint(req):
    common.authorize(req, "identity:check_endpoint_in_project")
    ef.check_endpoint(req.params["project_id"], req.params["endpoint_id"])
    return routing.empty()


def remove_endpoint(req):
    common.authorize(req, "identity:remove_endpoint_from_project")
    ef.remove_endpoint(req.params["project_id"], req.params["endpoint_id"])
    return routing.empty()


def list_project_endpoints(req):
    common.authorize(req, "identity:list_endpoints_for_project")
    found = ef.endpoints_for_project(req.params["project_id"])
    return _collection(req, "endpoints", found, views.endpoint)


def list_endpoint_projects(req):
    common.authorize(req, "identity:list_projects_for_endpoint")
    found = ef.projects_for_endpoint(req.params["endpoint_id"])
    return _collection(req, "projects", found, views.project)


# --- endpoint groups ------------------------------------------------------------------------

def list_groups(req):
    common.authorize(req, "identity:list_endpoint_groups")
    return _collection(req, "endpoint_groups", ef.list_groups(common.name_filter(req)),
                       group_view)


def create_group(req):
    common.authorize(req, "identity:create_endpoint_group")
    ref = common.body(req, GROUP_CREATE)["endpoint_group"]
    return common.member(req, "endpoint_group", ef.create_group(ref), group_view, 201)


def get_group(req):
    common.authorize(req, "identity:get_endpoint_group")
    return common.member(req, "endpoint_group", ef.get_group(req.params["group_id"]),
                         group_view)


def update_group(req):
    common.authorize(req, "identity:update_endpoint_group")
    ref = common.body(req, GROUP_UPDATE)["endpoint_group"]
    return common.member(req, "endpoint_group", ef.update_group(req.params["group_id"], ref),
                         group_view)


def delete_group(req):
    common.authorize(req, "identity:delete_endpoint_group")
    ef.delete_group(req.params["group_id"])
    return routing.empty()


def list_group_projects(req):
    common.authorize(req, "identity:list_projects_associated_with_endpoint_group")
    return _collection(req, "projects", ef.projects_of_group(req.params["group_id"]),
                       views.project)


def list_group_endpoints(req):
    common.authorize(req, "identity:list_endpoints_associated_with_endpoint_group")
    return _collection(req, "endpoints", ef.endpoints_of_group(req.params["group_id"]),
                       views.endpoint)


def list_project_groups(req):
    common.authorize(req, "identity:list_endpoint_groups_for_project")
    return _collection(req, "endpoint_groups",
                       ef.groups_for_project(req.params["project_id"]), group_view)


def _association_view(req, group_id: str, project_id: str) -> dict:
    return {"project_endpoint_group": {
        "endpoint_group_id": group_id, "project_id": project_id,
        "links": {"self": common.self_url(
            req, f"{_P}/endpoint_groups/{group_id}/projects/{project_id}")}}}


def check_group_project(req):
    common.authorize(req, "identity:get_endpoint_group_in_project")
    group_id, project_id = req.params["group_id"], req.params["project_id"]
    ef.check_group_in_project(group_id, project_id)
    return routing.json_response(_association_view(req, group_id, project_id))


def add_group_project(req):
    common.authorize(req, "identity:add_endpoint_group_to_project")
    ef.add_group_to_project(req.params["group_id"], req.params["project_id"])
    return routing.empty()


def remove_group_project(req):
    common.authorize(req, "identity:remove_endpoint_group_from_project")
    ef.remove_group_from_project(req.params["group_id"], req.params["project_id"])
    return routing.empty()


ROUTES = {
    f"{_P}/projects/{{project_id}}/endpoints/{{endpoint_id}}": {
        "PUT": add_endpoint, "GET": check_endpoint, "HEAD": check_endpoint,
        "DELETE": remove_endpoint},
    f"{_P}/projects/{{project_id}}/endpoints": {"GET": list_project_endpoints},
    f"{_P}/endpoints/{{endpoint_id}}/projects": {"GET": list_endpoint_projects},
    f"{_P}/projects/{{project_id}}/endpoint_groups": {"GET": list_project_groups},
    f"{_P}/endpoint_groups": {"GET": list_groups, "POST": create_group},
    f"{_P}/endpoint_groups/{{group_id}}": {"GET": get_group, "HEAD": get_group,
                                           "PATCH": update_group, "DELETE": delete_group},
    f"{_P}/endpoint_groups/{{group_id}}/projects": {"GET": list_group_projects},
    f"{_P}/endpoint_groups/{{group_id}}/endpoints": {"GET": list_group_endpoints},
    f"{_P}/endpoint_groups/{{group_id}}/projects/{{project_id}}": {
        "GET": check_group_project, "HEAD": check_group_project, "PUT": add_group_project,
        "DELETE": remove_group_project},
}
