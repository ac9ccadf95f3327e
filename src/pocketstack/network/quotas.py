"""Per-project quotas for networks, subnets, ports, routers, floating IPs, security groups
and rules, RBAC policies and subnet pools, as neutron's /v2.0/quotas API shows them (-1 is
unlimited).

Usage is counted in the creating transaction; over the limit is a 409 OverQuota.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import config, db
from pocketstack.network import base
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import (FloatingIP, Network, Port, Quota, RbacPolicy, Router,
                                        SecurityGroup, SecurityGroupRule, Subnet, SubnetPool)

MODELS = {"network": Network, "subnet": Subnet, "port": Port, "router": Router,
          "floatingip": FloatingIP, "security_group": SecurityGroup,
          "security_group_rule": SecurityGroupRule, "rbac_policy": RbacPolicy,
          "subnetpool": SubnetPool}
RESOURCES = tuple(MODELS)


# One round trip per check: the project's limit (if set) and its usage.
LIMIT_AND_USAGE = {
    name: sa.select(
        sa.select(Quota.hard_limit).where(Quota.project_id == sa.bindparam("project_id"),
                                          Quota.resource == sa.bindparam("resource"))
        .scalar_subquery(),
        sa.select(sa.func.count()).select_from(model).where(
            model.project_id == sa.bindparam("project_id")).scalar_subquery())
    for name, model in MODELS.items()}


def defaults() -> dict[str, int]:
    conf = config.CONF.network_quotas
    return {name: getattr(conf, f"quota_{name}") for name in RESOURCES}


def limits(s, project_id: str) -> dict[str, int]:
    values = defaults()
    for row in s.scalars(sa.select(Quota).where(Quota.project_id == project_id)):
        if row.resource in values:
            values[row.resource] = row.hard_limit
    return values


def usage(s, project_id: str, resource: str) -> int:
    model = MODELS[resource]
    return s.scalar(sa.select(sa.func.count()).select_from(model).where(
        model.project_id == project_id)) or 0


def check(s, ctx, project_id: str, resource: str, delta: int = 1) -> None:
    """Raise OverQuota if ``delta`` more ``resource`` would exceed the project's limit."""
    limit, used = base.core(s, LIMIT_AND_USAGE[resource],
                            {"project_id": project_id, "resource": resource}).one()
    enforce(resource, limit, used, delta)


def enforce(resource: str, limit: int | None, used: int, delta: int = 1) -> None:
    """OverQuota unless ``delta`` more fit; ``limit`` None means the default."""
    if limit is None:
        limit = defaults()[resource]
    if 0 <= limit < used + delta:
        raise exc.OverQuota([resource])


# --- API -------------------------------------------------------------------------

def _authorize_read(ctx, project_id: str) -> None:
    base.authorize(ctx, "get_quota", {"project_id": project_id})


def get_quota(ctx, project_id: str) -> dict:
    _authorize_read(ctx, project_id)
    with db.reader() as s:
        return {"quota": limits(s, project_id)}


def get_default(ctx, project_id: str) -> dict:
    _authorize_read(ctx, project_id)
    return {"quota": defaults()}


def get_details(ctx, project_id: str) -> dict:
    _authorize_read(ctx, project_id)
    with db.reader() as s:
        return {"quota": {name: {"limit": limit, "used": usage(s, project_id, name),
                                 "reserved": 0}
                          for name, limit in limits(s, project_id).items()}}


def list_quotas(ctx) -> dict:
    """Projects whose quotas differ from the defaults; for admins only, as in neutron."""
    if not base.sees_all(ctx):
        raise exc.AdminRequired("Only admin can view or configure quota")
    with db.reader() as s:
        projects = list(s.scalars(sa.select(Quota.project_id).distinct()))
        return {"quotas": [{**limits(s, p), **base.project_view(p)} for p in projects]}


@base.retry_on_deadlock
def update_quota(ctx, project_id: str, body: dict) -> dict:
    base.authorize(ctx, "update_quota", {"project_id": project_id})
    values = v.resource_body(body, "quota")
    check_limit = v.boolean(values.get("check_limit", False), "check_limit")
    force = v.boolean(values.get("force", False), "force")
    wanted = {k: val for k, val in values.items() if k not in ("check_limit", "force")}
    unknown = sorted(k for k in wanted if k not in RESOURCES)
    if unknown:
        raise exc.QuotaResourceUnknown(unknown)
    wanted = {k: v.integer(-1, 2 ** 31 - 1)(val, k) for k, val in wanted.items()}
    with db.transaction() as s:
        if check_limit and not force:
            unders = [k for k, limit in wanted.items()
                      if limit >= 0 and usage(s, project_id, k) > limit]
            if unders:
                raise exc.InvalidQuotaValue(unders)
        for resource, limit in wanted.items():
            row = s.get(Quota, (project_id, resource))
            if row is None:
                s.add(Quota(project_id=project_id, resource=resource, hard_limit=limit))
            else:
                row.hard_limit = limit
        s.flush()
        return {"quota": limits(s, project_id)}


@base.retry_on_deadlock
def delete_quota(ctx, project_id: str) -> None:
    base.authorize(ctx, "delete_quota", {"project_id": project_id})
    with db.transaction() as s:
        s.execute(sa.delete(Quota).where(Quota.project_id == project_id))
