"""/v3/projects and /v3/projects/{id}/tags."""
from __future__ import annotations

from pocketstack.common import config, exceptions
from pocketstack.identity import resource, schemas
from pocketstack.identity.rest import common, views
from pocketstack.wsgi import routing


def _target(project) -> dict:
    return {"target": {"project": {"id": project.id, "domain_id": project.domain_id}}}


def _load(req, action: str):
    """The project named in the URL (404 as Keystone: before the policy check)."""
    project = resource.get_project(req.params["project_id"])
    common.authorize(req, action, _target(project))
    return project


def _split_tags(req, name: str) -> list[str]:
    value = req.query.get(name)
    return [t for t in value.split(",") if t] if value else []


def list_projects(req):
    ctx = req.context
    domain_id = req.query.get("domain_id") or ctx.domain_id or None
    common.authorize(req, "identity:list_projects", {"target": {"domain_id": domain_id}})
    projects = resource.list_projects(
        name_filters=common.name_filter(req), domain_id=domain_id,
        enabled=common.query_bool(req, "enabled"), parent_id=req.query.get("parent_id"),
        is_domain=common.query_bool(req, "is_domain"), tags_all=_split_tags(req, "tags"),
        tags_any=_split_tags(req, "tags-any"), not_tags_all=_split_tags(req, "not-tags"),
        not_tags_any=_split_tags(req, "not-tags-any"))
    return common.collection(req, "projects", projects, views.project)


def default_domain(ctx) -> str:
    """Keystone: the token's domain if domain-scoped, else the default domain."""
    return ctx.domain_id or config.CONF.identity.default_domain_id


def create_project(req):
    ref = common.body(req, schemas.project_create)["project"]
    domain_id = (ref.get("domain_id") or resource.domain_of_parent(ref.get("parent_id"))
                 or default_domain(req.context))
    common.authorize(req, "identity:create_project",
                     {"target": {"project": {"domain_id": domain_id}}})
    project = resource.create_project(ref, domain_id)
    return common.member(req, "project", project, views.project, 201)


def get_project(req):
    return common.member(req, "project", _load(req, "identity:get_project"), views.project)


def update_project(req):
    project = _load(req, "identity:update_project")
    ref = common.body(req, schemas.project_update)["project"]
    return common.member(req, "project", resource.update_project(project.id, ref),
                         views.project)


def delete_project(req):
    project = _load(req, "identity:delete_project")
    resource.delete_project(project.id, cascade=bool(common.query_bool(req, "cascade")))
    return routing.empty()


# --- tags -----------------------------------------------------------------------------

def list_tags(req):
    project = _load(req, "identity:list_project_tags")
    return routing.json_response({"tags": list(project.tags or [])})


def replace_tags(req):
    project = _load(req, "identity:update_project_tags")
    tags = common.body(req, schemas.project_tags)["tags"]
    return routing.json_response({"tags": resource.set_tags(project.id, tags)})


def delete_tags(req):
    project = _load(req, "identity:delete_project_tags")
    resource.set_tags(project.id, [])
    return routing.empty()


def check_tag(req):
    project = _load(req, "identity:get_project_tag")
    tag = req.params["value"]
    if tag not in (project.tags or []):
        raise exceptions.NotFound(f"Could not find project tag: {tag}.")
    return routing.empty()


def add_tag(req):
    project = _load(req, "identity:create_project_tag")
    tag = req.params["value"]
    schemas.validate(schemas.tag, tag)
    tags = resource.add_tag(project.id, tag)
    location = f"{req.service_url}/v3/projects/{project.id}/tags/{tag}"
    return routing.json_response({"tags": tags}, status=201, headers={"Location": location})


def delete_tag(req):
    project = _load(req, "identity:delete_project_tag")
    resource.remove_tag(project.id, req.params["value"])
    return routing.empty()
