"""/v3/projects and /v3/projects/{id}/tags."""
from __future__ import annotations

from pocketstack.common import config, exceptions
from pocketstack.identity import resource, schemas
from pocketstack.identity.rest import common, hierarchy, views
from pocketstack.wsgi import routing


def _target(project) -> dict:
    return {"target": {"project": {"id": project.id,
                                   "domain_id": getattr(project, "domain_id", None)}}}


def _is_domain(project) -> bool:
    return not hasattr(project, "parent_id")


def _load(req, action: str, domains: bool = False):
    """The project named in the URL (404 as Keystone: before the policy check); with
    ``domains`` a domain too, as the project acting as it."""
    project_id = req.params["project_id"]
    project = (resource.get_project_or_domain(project_id) if domains
               else resource.get_project(project_id))
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
    project = _load(req, "identity:get_project", domains=True)
    body = views.project(req, project)
    body.update(hierarchy.expand(req, project))
    return routing.json_response({"project": body})


def update_project(req):
    project = _load(req, "identity:update_project", domains=True)
    ref = common.body(req, schemas.project_update)["project"]
    if _is_domain(project):
        return common.member(req, "project", _update_domain(project, ref), views.project)
    return common.member(req, "project", resource.update_project(project.id, ref),
                         views.project)


def _update_domain(domain, ref: dict):
    """PATCH of a project acting as a domain: what a domain has, nothing that would move
    it into a hierarchy."""
    for key in ("domain_id", "parent_id"):
        if ref.get(key) is not None:
            raise exceptions.ValidationError(f"Update of `{key}` is not allowed.")
    if ref.get("is_domain") is False:
        raise exceptions.ValidationError("Update of `is_domain` is not allowed.")
    return resource.update_domain(domain.id, {k: v for k, v in ref.items()
                                              if k in ("name", "description", "enabled",
                                                       "tags")})


def delete_project(req):
    project = _load(req, "identity:delete_project", domains=True)
    if _is_domain(project):
        resource.delete_domain(project.id)
    else:
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
