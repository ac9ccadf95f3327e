"""Per-project quotas on each kind of object (Octavia's /v2/lbaas/quotas)."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions
from pocketstack.loadbalancer import models as M
from pocketstack.loadbalancer import tree, validation

KINDS = {"load_balancer": M.LoadBalancer, "listener": M.Listener, "pool": M.Pool,
         "health_monitor": M.HealthMonitor, "member": M.Member, "l7policy": M.L7Policy,
         "l7rule": M.L7Rule}
# Octavia's deprecated spellings, still answered and accepted.
LEGACY = {"loadbalancer": "load_balancer", "healthmonitor": "health_monitor"}
LABEL = {"load_balancer": "Load Balancer", "listener": "Listener", "pool": "Pool",
         "health_monitor": "Health Monitor", "member": "Member", "l7policy": "L7 Policy",
         "l7rule": "L7 Rule"}


def defaults() -> dict:
    conf = config.CONF.loadbalancer
    return {kind: getattr(conf, f"default_{kind}_quota") for kind in KINDS}


def _with_legacy(values: dict) -> dict:
    out = dict(values)
    for old, new in LEGACY.items():
        out[old] = values[new]
    return out


def effective(s, project_id: str) -> dict:
    row = s.get(M.Quota, project_id)
    values = defaults()
    if row is not None:
        for kind in KINDS:
            if getattr(row, kind) is not None:
                values[kind] = getattr(row, kind)
    return values


def check(s, project_id: str, kind: str, adding: int = 1) -> None:
    """403 in Octavia's words when ``adding`` more of ``kind`` would pass the quota."""
    limit = effective(s, project_id)[kind]
    if limit != -1 and tree.count(s, KINDS[kind], project_id) + adding > limit:
        raise exceptions.Forbidden(f"Quota has been met for resources: {LABEL[kind]}")


def show(project_id: str) -> dict:
    with db.reader() as s:
        return {"quota": _with_legacy(effective(s, project_id))}


def listing(project_id: str | None) -> dict:
    with db.reader() as s:
        stmt = sa.select(M.Quota)
        if project_id:
            stmt = stmt.where(M.Quota.project_id == project_id)
        rows = list(s.scalars(stmt))
        out = []
        for row in rows:
            values = _with_legacy(effective(s, row.project_id))
            out.append(dict(values, project_id=row.project_id, tenant_id=row.project_id))
    return {"quotas": out, "quotas_links": []}


def update(project_id: str, body) -> dict:
    schema = {name: validation.Field("int", minimum=-1, maximum=2000000000)
              for name in list(KINDS) + list(LEGACY)}
    data = validation.parse(body, "quota", schema, create=False)
    for old, new in LEGACY.items():
        if old in data:
            if new in data and data[new] != data[old]:
                raise validation.validation_failure(
                    f"Both {old} and {new} were set with different values.")
            data[new] = data.pop(old)
    with db.transaction() as s:
        row = s.get(M.Quota, project_id)
        if row is None:
            row = M.Quota(project_id=project_id)
            s.add(row)
        for kind, value in data.items():
            setattr(row, kind, value)
        s.flush()
        return {"quota": _with_legacy(effective(s, project_id))}


def reset(project_id: str) -> None:
    with db.transaction() as s:
        row = s.get(M.Quota, project_id)
        if row is None:
            raise exceptions.NotFound(f"Quota {project_id} not found.")
        s.delete(row)
