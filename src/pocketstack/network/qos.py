"""QoS policies (/v2.0/qos/policies), recorded as neutron records them; writing them is
for admins, as in neutron. Ports and networks take a ``qos_policy_id`` (a port also shows
its network's as ``qos_network_policy_id``); a policy bound to either cannot be deleted
(409 QosPolicyInUse). Their rules are in qos_rules.py. Nothing enforces them yet: no
packets are shaped.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.network import base, listing, qos_rule_kinds, rbac
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import Network, Port, QosPolicy, Router, Tag


POLICY_ATTRS = {
    "name": v.Attr(v.string()),
    "description": v.Attr(v.string()),
    "shared": v.Attr(v.boolean),
    "is_default": v.Attr(v.boolean),
    "project_id": v.Attr(v.project_id, put=False),
    "tenant_id": v.Attr(v.project_id, put=False),
    "tags": v.Attr(v.tags, put=False),
}

COLLECTION = listing.Collection(
    name="qos/policies", model=QosPolicy, not_found=exc.QosPolicyNotFound,
    columns={"id": QosPolicy.id, "name": QosPolicy.name, "description": QosPolicy.description,
             "project_id": QosPolicy.project_id, "tenant_id": QosPolicy.project_id,
             "shared": QosPolicy.shared, "is_default": QosPolicy.is_default,
             "revision_number": QosPolicy.revision_number,
             "created_at": QosPolicy.created_at, "updated_at": QosPolicy.updated_at},
    ignored=frozenset({"rules"}),
)


def visible(ctx):
    if base.sees_all(ctx):
        return sa.true()
    return sa.or_(QosPolicy.project_id == ctx.project_id, QosPolicy.shared.is_(True),
                  rbac.granted("qos_policy", QosPolicy.id, ctx.project_id, (rbac.SHARED,)))


def check_usable(s, ctx, policy_id: str, project_id: str) -> None:
    """A port or network of ``project_id`` may use the policy: its own, shared with it
    (or with everyone), or any for an admin; else 404 as neutron."""
    policy = s.get(QosPolicy, policy_id)
    if policy is None or not (
            base.sees_all(ctx) or policy.project_id == project_id or policy.shared
            or rbac.has_access(s, "qos_policy", policy_id, project_id, (rbac.SHARED,))):
        raise exc.QosPolicyNotFound(policy_id)


def default_policy_id(s, project_id: str) -> str | None:
    return s.scalar(sa.select(QosPolicy.id).where(QosPolicy.project_id == project_id,
                                                  QosPolicy.is_default.is_(True)).limit(1))


def network_policies(s, ports: list) -> None:
    """Give each port its network's policy (``qos_network_policy_id`` in its view)."""
    ids = {p.network_id for p in ports}
    found = {}
    for network_id in list(ids):  # networks this session loaded already (a port update's)
        network = s.identity_map.get(s.identity_key(Network, network_id))
        if network is not None and "qos_policy_id" in network.__dict__:
            found[network_id] = network.qos_policy_id
            ids.discard(network_id)
    if ids:
        found.update(s.execute(sa.select(Network.id, Network.qos_policy_id)
                               .where(Network.id.in_(ids))).all())
    for port in ports:
        port.network_qos_policy_id = found.get(port.network_id)


def _check_not_bound(s, policy_id: str) -> None:
    for model, kind in ((Port, "port"), (Network, "network"), (Router, "router")):
        user = s.scalar(sa.select(model.id).where(model.qos_policy_id == policy_id).limit(1))
        if user:
            raise exc.QosPolicyInUse(policy_id, kind, user)


def get_row(s, ctx, policy_id: str, lock: bool = False) -> QosPolicy:
    query = sa.select(QosPolicy).where(QosPolicy.id == policy_id, visible(ctx))
    policy = s.scalar(query.with_for_update() if lock else query)
    if policy is None:
        raise exc.QosPolicyNotFound(policy_id)
    return policy


def view(s, policy: QosPolicy, tags, shared_with_caller: bool = False) -> dict:
    return {"id": policy.id, "name": policy.name, **base.project_view(policy.project_id),
            "shared": policy.shared or shared_with_caller, "is_default": policy.is_default,
            "rules": qos_rule_kinds.policy_rules(s, policy.id),
            **base.standard_view(policy, tags)}


def create_policy(ctx, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "policy"), POLICY_ATTRS, update=False)
    project_id = base.owner_project(ctx, values)
    base.authorize(ctx, "create_policy", {"project_id": project_id})
    with db.transaction() as s:
        policy = QosPolicy(id=base.new_id(), project_id=project_id,
                           name=values.get("name", ""),
                           description=values.get("description", ""),
                           shared=values.get("shared", False),
                           is_default=values.get("is_default", False))
        base.init_standard(policy)
        s.add(policy)
        s.flush()
        if policy.shared:
            rbac.set_wildcard(s, "qos_policy", policy, rbac.SHARED, True)
        if values.get("tags"):
            base.set_tags(s, policy.id, values["tags"])
        return view(s, policy, values.get("tags"))


def get_policy(ctx, policy_id: str) -> dict:
    with db.reader() as s:
        policy = get_row(s, ctx, policy_id)
        return view(s, policy, base.tags_of(s, policy.id),
                    policy.id in _shared_with_caller(s, ctx, [policy]))


def _shared_with_caller(s, ctx, policies: list) -> dict:
    return rbac.actions_for(s, "qos_policy", [p.id for p in policies], ctx.project_id)


def list_policies(ctx, params: listing.Params) -> tuple[list[dict], listing.Page]:
    with db.reader() as s:
        page = listing.select_page(s, COLLECTION, params, visible(ctx))
        tags = listing.tags_by_id(s, [p.id for p in page.rows])
        shared = _shared_with_caller(s, ctx, page.rows)
        items = [listing.select_fields(view(s, p, tags.get(p.id), p.id in shared), params)
                 for p in page.rows]
    return items, page


def update_policy(ctx, policy_id: str, body: dict, if_revision: int | None = None) -> dict:
    values = v.parse(v.resource_body(body, "policy"), POLICY_ATTRS, update=True)
    with db.transaction() as s:
        policy = get_row(s, ctx, policy_id, lock=True)
        base.authorize(ctx, "update_policy", {"project_id": policy.project_id})
        base.check_revision(policy, if_revision)
        for key in ("name", "description", "shared", "is_default"):
            if key in values:
                setattr(policy, key, values[key])
        rbac.set_wildcard(s, "qos_policy", policy, rbac.SHARED, policy.shared)
        base.touch(policy)
        s.flush()
        return view(s, policy, base.tags_of(s, policy.id))


def delete_policy(ctx, policy_id: str, if_revision: int | None = None) -> None:
    with db.transaction() as s:
        policy = get_row(s, ctx, policy_id, lock=True)
        base.authorize(ctx, "delete_policy", {"project_id": policy.project_id})
        base.check_revision(policy, if_revision)
        _check_not_bound(s, policy.id)
        rbac.delete_for(s, "qos_policy", policy.id)
        qos_rule_kinds.delete_for_policy(s, policy.id)
        s.execute(sa.delete(Tag).where(Tag.resource_id == policy.id))
        s.delete(policy)
