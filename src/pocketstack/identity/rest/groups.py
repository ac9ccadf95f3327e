"""/v3/groups and group membership."""
from __future__ import annotations

from pocketstack.identity import schemas, users
from pocketstack.identity.rest import common, views
from pocketstack.identity.rest.projects import default_domain
from pocketstack.wsgi import routing


def _load(req, action: str):
    group = users.get_group(req.params["group_id"])
    common.authorize(req, action, {"target": {"group": {"id": group.id,
                                                        "domain_id": group.domain_id}}})
    return group


def list_groups(req):
    domain_id = req.query.get("domain_id") or req.context.domain_id or None
    common.authorize(req, "identity:list_groups", {"target": {"domain_id": domain_id}})
    found = users.list_groups(name_filters=common.name_filter(req), domain_id=domain_id)
    return common.collection(req, "groups", found, views.group)


def create_group(req):
    ref = common.body(req, schemas.group_create)["group"]
    domain_id = ref.get("domain_id") or default_domain(req.context)
    common.authorize(req, "identity:create_group",
                     {"target": {"group": {"domain_id": domain_id}}})
    return common.member(req, "group", users.create_group(ref, domain_id), views.group, 201)


def get_group(req):
    return common.member(req, "group", _load(req, "identity:get_group"), views.group)


def update_group(req):
    group = _load(req, "identity:update_group")
    ref = common.body(req, schemas.group_update)["group"]
    return common.member(req, "group", users.update_group(group.id, ref), views.group)


def delete_group(req):
    group = _load(req, "identity:delete_group")
    users.delete_group(group.id)
    return routing.empty()


def list_group_users(req):
    group = _load(req, "identity:list_users_in_group")
    found = users.list_group_users(group.id, name_filters=common.name_filter(req),
                                   enabled=common.query_bool(req, "enabled"))
    return common.collection(req, "users", found, views.user)


def _membership(req, action: str):
    group = users.get_group(req.params["group_id"])
    user = users.get_user(req.params["user_id"])
    common.authorize(req, action, {"target": {
        "group": {"id": group.id, "domain_id": group.domain_id},
        "user": {"id": user.id, "domain_id": user.domain_id}}})
    return group.id, user.id


def add_user(req):
    users.add_user_to_group(*_membership(req, "identity:add_user_to_group"))
    return routing.empty()


def check_user(req):
    users.check_user_in_group(*_membership(req, "identity:check_user_in_group"))
    return routing.empty()


def remove_user(req):
    users.remove_user_from_group(*_membership(req, "identity:remove_user_from_group"))
    return routing.empty()
