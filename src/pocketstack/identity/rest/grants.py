"""Role grants — /v3/{projects,domains}/{id}/{users,groups}/{id}/roles[/{role_id}], their
OS-INHERIT twins, /v3/system/{users,groups}/{id}/roles[/{role_id}] — and
GET /v3/role_assignments."""
from __future__ import annotations

from pocketstack.common import db, exceptions
from pocketstack.identity import assignment, resource, role_assignments
from pocketstack.identity.rest import common, views
from pocketstack.wsgi import routing


def _parse(req) -> tuple[str, str, str, str, bool]:
    """(actor kind, actor id, target kind, target id, inherited) from the URL."""
    path = req.raw.url.path
    actor = "user" if "user_id" in req.params else "group"
    if "project_id" not in req.params and "domain_id" not in req.params:
        return actor, req.params[f"{actor}_id"], "system", assignment.SYSTEM, False
    target = "project" if "project_id" in req.params else "domain"
    return (actor, req.params[f"{actor}_id"], target, req.params[f"{target}_id"],
            path.rstrip("/").endswith("/inherited_to_projects")
            and "/OS-INHERIT/" in path)


def _authorize(req, action: str, with_role: bool = True):
    actor, actor_id, target, target_id, inherited = _parse(req)
    role_id = req.params.get("role_id") if with_role else None
    with db.reader() as s:
        actor_obj, target_obj, role = assignment.load_grant_objects(
            s, actor, actor_id, target, target_id, role_id)
    policy_target = {actor: {"id": actor_id, "domain_id": actor_obj.domain_id}}
    if target == "system":
        action = SYSTEM_ACTIONS[action, actor]
    elif target == "project":
        policy_target["project"] = {"id": target_id, "domain_id": target_obj.domain_id}
    else:
        policy_target["domain"] = {"id": target_id}
    if role is not None:
        policy_target["role"] = {"id": role.id, "name": role.name, "domain_id": role.domain_id}
    common.authorize(req, action, {"target": policy_target})
    return actor, actor_id, target, target_id, inherited


# Keystone names the system grants' policies apart.
SYSTEM_ACTIONS = {
    ("identity:create_grant", "user"): "identity:create_system_grant_for_user",
    ("identity:check_grant", "user"): "identity:check_system_grant_for_user",
    ("identity:revoke_grant", "user"): "identity:revoke_system_grant_for_user",
    ("identity:list_grants", "user"): "identity:list_system_grants_for_user",
    ("identity:create_grant", "group"): "identity:create_system_grant_for_group",
    ("identity:check_grant", "group"): "identity:check_system_grant_for_group",
    ("identity:revoke_grant", "group"): "identity:revoke_system_grant_for_group",
    ("identity:list_grants", "group"): "identity:list_system_grants_for_group",
}


def create_grant(req):
    actor, actor_id, target, target_id, inherited = _authorize(req, "identity:create_grant")
    assignment.create_grant(actor, actor_id, target, target_id, req.params["role_id"],
                            inherited)
    return routing.empty()


def check_grant(req):
    actor, actor_id, target, target_id, inherited = _authorize(req, "identity:check_grant")
    assignment.check_grant(actor, actor_id, target, target_id, req.params["role_id"],
                           inherited)
    return routing.empty()


def revoke_grant(req):
    actor, actor_id, target, target_id, inherited = _authorize(req, "identity:revoke_grant")
    assignment.revoke_grant(actor, actor_id, target, target_id, req.params["role_id"],
                            inherited)
    return routing.empty()


def list_grants(req):
    actor, actor_id, target, target_id, inherited = _authorize(
        req, "identity:list_grants", with_role=False)
    roles = assignment.list_grants(actor, actor_id, target, target_id, inherited)
    return common.collection(req, "roles", roles, views.role)


def list_role_assignments(req):
    ctx, q = req.context, req.query
    include_subtree = common.flag(req, "include_subtree")
    if include_subtree:
        _authorize_tree(req, q.get("scope.project.id"))
    else:
        common.authorize(req, "identity:list_role_assignments",
                         {"target": {"domain_id": ctx.domain_id}})
    inherited_to = q.get("scope.OS-INHERIT:inherited_to")
    system = q.get("scope.system")
    if system is not None and system != "all":
        raise exceptions.ValidationError("scope.system must be 'all'.")
    entries = role_assignments.list_assignments(
        user_id=q.get("user.id"), group_id=q.get("group.id"), role_id=q.get("role.id"),
        project_id=q.get("scope.project.id"), domain_id=q.get("scope.domain.id"),
        system=system is not None,
        inherited=(inherited_to == "projects") if inherited_to is not None else None,
        effective=common.flag(req, "effective"), include_subtree=include_subtree,
        include_names=common.flag(req, "include_names"), base_url=req.service_url)
    if ctx.domain_id and not common.allowed(req, "identity:list_role_assignments",
                                            {"target": {"domain_id": None}}):
        entries = _within_domain(entries, ctx.domain_id)
    return common.collection(req, "role_assignments", entries, lambda _req, e: e)


def _authorize_tree(req, project_id: str | None) -> None:
    """Keystone: the policy target is the project at the tree's root (a 404 when it does
    not exist; a domain counts, as the project acting as it)."""
    target = {"domain_id": req.context.domain_id}
    if project_id:
        project = resource.get_project_or_domain(project_id)
        domain_id = getattr(project, "domain_id", None)
        target = {"project": {"id": project.id, "domain_id": domain_id},
                  "domain_id": domain_id}
    common.authorize(req, "identity:list_role_assignments_for_tree", {"target": target})


def _within_domain(entries: list[dict], domain_id: str) -> list[dict]:
    """What a domain reader may see: assignments on the domain or its projects."""
    from pocketstack.identity.models import Project

    with db.reader() as s:
        def in_domain(entry):
            scope = entry["scope"]
            if "system" in scope:
                return False
            if "domain" in scope:
                return scope["domain"]["id"] == domain_id
            project = s.get(Project, scope["project"]["id"])
            return project is not None and project.domain_id == domain_id
        return [e for e in entries if in_domain(e)]
