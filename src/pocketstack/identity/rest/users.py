"""/v3/users, a user's password, projects and groups."""
from __future__ import annotations

from pocketstack.common import db
from pocketstack.identity import assignment, schemas, users
from pocketstack.identity.rest import common, views
from pocketstack.identity.rest.projects import default_domain
from pocketstack.wsgi import routing


def _target(user) -> dict:
    return {"target": {"user": {"id": user.id, "domain_id": user.domain_id}}}


def _load(req, action: str):
    user = users.get_user(req.params["user_id"])
    common.authorize(req, action, _target(user))
    return user


def list_users(req):
    domain_id = req.query.get("domain_id") or req.context.domain_id or None
    common.authorize(req, "identity:list_users", {"target": {"domain_id": domain_id}})
    found = users.list_users(name_filters=common.name_filter(req), domain_id=domain_id,
                             enabled=common.query_bool(req, "enabled"))
    return common.collection(req, "users", found, views.user)


def create_user(req):
    ref = common.body(req, schemas.user_create)["user"]
    domain_id = ref.get("domain_id") or default_domain(req.context)
    common.authorize(req, "identity:create_user",
                     {"target": {"user": {"domain_id": domain_id}}})
    return common.member(req, "user", users.create_user(ref, domain_id), views.user, 201)


def get_user(req):
    return common.member(req, "user", _load(req, "identity:get_user"), views.user)


def update_user(req):
    user = _load(req, "identity:update_user")
    ref = common.body(req, schemas.user_update)["user"]
    return common.member(req, "user", users.update_user(user.id, ref), views.user)


def delete_user(req):
    user = _load(req, "identity:delete_user")
    users.delete_user(user.id)
    return routing.empty()


@routing.public
def change_password(req):
    """Keystone needs no token here (an expired password can be changed): the original
    password is the proof."""
    ref = common.body(req, schemas.password_change)["user"]
    users.change_password(req.params["user_id"], ref["original_password"], ref["password"])
    return routing.empty()


def list_user_projects(req):
    user = _load(req, "identity:list_user_projects")
    with db.reader() as s:
        projects = assignment.projects_for_user(s, user.id)
    if "enabled" in req.query:
        enabled = common.query_bool(req, "enabled")
        projects = [p for p in projects if p.enabled == enabled]
    if "name" in req.query:
        projects = [p for p in projects if p.name == req.query["name"]]
    return common.collection(req, "projects", projects, views.project)


def list_user_groups(req):
    user = _load(req, "identity:list_groups_for_user")
    found = users.list_user_groups(user.id, name_filters=common.name_filter(req))
    return common.collection(req, "groups", found, views.group)
