"""RBAC policies (/v2.0/rbac-policies): share a network, QoS policy or security group with
one project or with every project ('*'), or make a network external for one or all.

A '*' policy and the object's ``shared`` (or ``external``) column say the same thing and
are kept in step both ways — setting ``shared`` creates the '*' policy, as neutron does —
so the hot paths read only the column; a policy for one project is a row here that
visibility queries consult. Removing a policy a project still depends on (its ports on the
network, its router gateway, its ports using the group or QoS policy) is 409
RbacPolicyInUse, as in neutron.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.network import base, listing, quotas
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import (FloatingIP, Network, Port, PortSecurityGroup,
                                        QosPolicy, RbacPolicy, Router, SecurityGroup, Subnet)

SHARED, EXTERNAL = "access_as_shared", "access_as_external"
WILDCARD = "*"
# object type -> (model, its not-found error, the actions it takes)
OBJECT_TYPES = {
    "network": (Network, exc.NetworkNotFound, (SHARED, EXTERNAL)),
    "qos_policy": (QosPolicy, exc.QosPolicyNotFound, (SHARED,)),
    "security_group": (SecurityGroup, exc.SecurityGroupNotFound, (SHARED,)),
}
# the column a '*' policy mirrors
_MIRRORED = {("network", SHARED): "shared", ("network", EXTERNAL): "external",
             ("qos_policy", SHARED): "shared"}

def _target(value, name):
    value = v.project_id(value, name)
    if not value.strip():
        raise v.invalid(name, "a project id or '*' is required")
    return value


ATTRS = {
    "object_type": v.Attr(v.one_of(*OBJECT_TYPES), put=False),
    "object_id": v.Attr(v.uuid_string, put=False),
    "action": v.Attr(v.one_of(SHARED, EXTERNAL), put=False),
    "target_tenant": v.Attr(_target),
    "project_id": v.Attr(v.project_id, put=False),
    "tenant_id": v.Attr(v.project_id, put=False),
}

COLLECTION = listing.Collection(
    name="rbac-policies", model=RbacPolicy, not_found=exc.RbacPolicyNotFound,
    columns={"id": RbacPolicy.id, "project_id": RbacPolicy.project_id,
             "tenant_id": RbacPolicy.project_id, "object_type": RbacPolicy.object_type,
             "object_id": RbacPolicy.object_id, "action": RbacPolicy.action,
             "target_tenant": RbacPolicy.target_project,
             "target_project": RbacPolicy.target_project},
)


# --- what other modules ask -----------------------------------------------------------

def granted(object_type: str, id_column, project_id: str | None, actions=(SHARED, EXTERNAL)):
    """SQL: ``id_column`` is an object shared with ``project_id`` (or with everyone) by
    a policy with one of ``actions``."""
    return id_column.in_(sa.select(RbacPolicy.object_id).where(
        RbacPolicy.object_type == object_type, RbacPolicy.action.in_(actions),
        RbacPolicy.target_project.in_((project_id or "", WILDCARD))))


def has_access(s, object_type: str, object_id: str, project_id: str | None,
               actions=(SHARED, EXTERNAL)) -> bool:
    return s.scalar(sa.select(RbacPolicy.id).where(
        RbacPolicy.object_type == object_type, RbacPolicy.object_id == object_id,
        RbacPolicy.action.in_(actions),
        RbacPolicy.target_project.in_((project_id or "", WILDCARD))).limit(1)) is not None


def actions_for(s, object_type: str, ids: list[str], project_id: str | None) -> dict:
    """{object id: {actions}} granted to ``project_id`` (or everyone), for views."""
    out: dict[str, set] = {}
    if not ids:
        return out
    for object_id, action in s.execute(sa.select(RbacPolicy.object_id, RbacPolicy.action).where(
            RbacPolicy.object_type == object_type, RbacPolicy.object_id.in_(ids),
            RbacPolicy.target_project.in_((project_id or "", WILDCARD)))):
        out.setdefault(object_id, set()).add(action)
    return out


def set_wildcard(s, object_type: str, obj, action: str, on: bool) -> None:
    """The object's ``shared``/``external`` column was set: add or drop its '*' policy."""
    existing = s.scalar(sa.select(RbacPolicy).where(
        RbacPolicy.object_type == object_type, RbacPolicy.object_id == obj.id,
        RbacPolicy.action == action, RbacPolicy.target_project == WILDCARD))
    if on and existing is None:
        s.add(RbacPolicy(id=base.new_id(), project_id=obj.project_id,
                         object_type=object_type, object_id=obj.id, action=action,
                         target_project=WILDCARD))
    elif not on and existing is not None:
        s.delete(existing)


def delete_for(s, object_type: str, object_id: str) -> None:
    """The object is being deleted: its policies go with it."""
    s.execute(sa.delete(RbacPolicy).where(RbacPolicy.object_type == object_type,
                                          RbacPolicy.object_id == object_id))


# --- the API --------------------------------------------------------------------------

def view(p: RbacPolicy) -> dict:
    return {"id": p.id, **base.project_view(p.project_id), "object_type": p.object_type,
            "object_id": p.object_id, "action": p.action, "target_tenant": p.target_project}


def visible(ctx):
    return base.own_visible(RbacPolicy, ctx)


def _get_row(s, ctx, policy_id: str) -> RbacPolicy:
    row = s.scalar(sa.select(RbacPolicy).where(RbacPolicy.id == policy_id, visible(ctx)))
    if row is None:
        raise exc.RbacPolicyNotFound(policy_id)
    return row


def _object(s, ctx, object_type: str, object_id: str):
    """The object a policy is about, locked; only its owner (or an admin) shares it."""
    model, not_found, _ = OBJECT_TYPES[object_type]
    obj = s.scalar(sa.select(model).where(model.id == object_id).with_for_update())
    if obj is None:
        raise not_found(object_id)
    if obj.project_id != ctx.project_id and not base.sees_all(ctx):
        if not has_access(s, object_type, object_id, ctx.project_id):
            raise not_found(object_id)
        raise exc.InvalidInput(f"Only admins can manipulate policies on {object_type}s they "
                               "do not own")
    return obj


def _mirror(s, row: RbacPolicy, obj, on: bool) -> None:
    column = _MIRRORED.get((row.object_type, row.action))
    if column and row.target_project == WILDCARD and getattr(obj, column) != on:
        setattr(obj, column, on)
        base.touch(obj)


def create_policy(ctx, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "rbac_policy"), ATTRS, update=False)
    for name in ("object_type", "object_id", "action", "target_tenant"):
        if name not in values:
            raise exc.HTTPBadRequest(f"Failed to parse request. Required attribute '{name}' "
                                     "not specified")
    object_type, action = values["object_type"], values["action"]
    valid = OBJECT_TYPES[object_type][2]
    if action not in valid:
        raise exc.InvalidActionForType(action, object_type, list(valid))
    project_id = base.owner_project(ctx, values)
    target = {"project_id": project_id, "target_tenant": values["target_tenant"]}
    base.authorize(ctx, "create_rbac_policy", target)
    base.authorize(ctx, "create_rbac_policy:target_tenant", target)
    try:
        with db.transaction() as s:
            obj = _object(s, ctx, object_type, values["object_id"])
            quotas.check(s, ctx, project_id, "rbac_policy")
            row = RbacPolicy(id=base.new_id(), project_id=project_id, object_type=object_type,
                             object_id=obj.id, action=action,
                             target_project=values["target_tenant"])
            s.add(row)
            s.flush()
            _mirror(s, row, obj, True)
            return view(row)
    except sa.exc.IntegrityError as error:
        if db.is_duplicate(error):
            raise exc.DuplicateRbacPolicy() from None
        raise


def get_policy(ctx, policy_id: str) -> dict:
    with db.reader() as s:
        row = _get_row(s, ctx, policy_id)
        base.authorize(ctx, "get_rbac_policy", {"project_id": row.project_id})
        return view(row)


def list_policies(ctx, params: listing.Params) -> tuple[list[dict], listing.Page]:
    with db.reader() as s:
        page = listing.select_page(s, COLLECTION, params, visible(ctx))
        return [listing.select_fields(view(p), params) for p in page.rows], page


def update_policy(ctx, policy_id: str, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "rbac_policy"), ATTRS, update=True)
    try:
        with db.transaction() as s:
            row = _get_row(s, ctx, policy_id)
            target = {"project_id": row.project_id,
                      "target_tenant": values.get("target_tenant", row.target_project)}
            base.authorize(ctx, "update_rbac_policy", target)
            base.authorize(ctx, "update_rbac_policy:target_tenant", target)
            if values.get("target_tenant", row.target_project) != row.target_project:
                obj = _object(s, ctx, row.object_type, row.object_id)
                _check_not_in_use(s, row, obj, new_target=values["target_tenant"])
                _mirror(s, row, obj, False)
                row.target_project = values["target_tenant"]
                s.flush()
                _mirror(s, row, obj, True)
            return view(row)
    except sa.exc.IntegrityError as error:
        if db.is_duplicate(error):
            raise exc.DuplicateRbacPolicy() from None
        raise


def delete_policy(ctx, policy_id: str) -> None:
    with db.transaction() as s:
        row = _get_row(s, ctx, policy_id)
        base.authorize(ctx, "delete_rbac_policy", {"project_id": row.project_id})
        model = OBJECT_TYPES[row.object_type][0]
        obj = s.scalar(sa.select(model).where(model.id == row.object_id).with_for_update())
        if obj is not None:
            _check_not_in_use(s, row, obj)
            _mirror(s, row, obj, False)
        s.delete(row)


# --- who depends on a policy ----------------------------------------------------------

def _dependent_projects(s, row: RbacPolicy) -> dict[str, str]:
    """{project: what of it uses the object} for projects other than the owner's."""
    object_id = row.object_id
    queries = []
    if row.object_type == "network" and row.action == SHARED:
        queries = [("port", sa.select(Port.project_id, Port.id).where(
                        Port.network_id == object_id, Port.device_owner != "network:dhcp")),
                   ("subnet", sa.select(Subnet.project_id, Subnet.id).where(
                        Subnet.network_id == object_id))]
    elif row.object_type == "network":
        gateway_routers = sa.select(Port.device_id).where(
            Port.network_id == object_id, Port.device_owner == "network:router_gateway")
        queries = [("router", sa.select(Router.project_id, Router.id).where(
                        Router.id.in_(gateway_routers))),
                   ("floating IP", sa.select(FloatingIP.project_id, FloatingIP.id).where(
                        FloatingIP.floating_network_id == object_id))]
    elif row.object_type == "qos_policy":
        queries = [("port", sa.select(Port.project_id, Port.id).where(
                        Port.qos_policy_id == object_id)),
                   ("network", sa.select(Network.project_id, Network.id).where(
                        Network.qos_policy_id == object_id)),
                   ("router", sa.select(Router.project_id, Router.id).where(
                        Router.qos_policy_id == object_id))]
    elif row.object_type == "security_group":
        queries = [("port", sa.select(Port.project_id, Port.id).join(
                        PortSecurityGroup, PortSecurityGroup.port_id == Port.id).where(
                        PortSecurityGroup.security_group_id == object_id))]
    out: dict[str, str] = {}
    for kind, query in queries:
        for project_id, user_id in s.execute(query):
            out.setdefault(project_id, f"{kind} {user_id}")
    return out


def _check_not_in_use(s, row: RbacPolicy, obj, new_target: str | None = None) -> None:
    """409 if a project other than the owner uses the object only through ``row``."""
    others = set(s.scalars(sa.select(RbacPolicy.target_project).where(
        RbacPolicy.object_type == row.object_type, RbacPolicy.object_id == row.object_id,
        RbacPolicy.action == row.action, RbacPolicy.id != row.id)))
    if new_target is not None:
        others.add(new_target)
    if WILDCARD in others:
        return
    for project_id, what in _dependent_projects(s, row).items():
        if project_id in ("", obj.project_id) or project_id in others:
            continue
        if row.target_project in (WILDCARD, project_id):
            raise exc.RbacPolicyInUse(
                row.object_id, f"{row.object_type} {row.object_id} is used by project "
                               f"{project_id} ({what}).")
