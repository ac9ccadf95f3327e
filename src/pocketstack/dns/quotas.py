"""Designate's quotas: per project, defaults from [dns] quota_*; -1 is no limit."""
from __future__ import annotations

from pocketstack.common import config, db, policy
from pocketstack.dns import errors
from pocketstack.dns.models import Quota

RESOURCES = ("zones", "zone_recordsets", "zone_records", "recordset_records",
             "api_export_size")


# designate's managed_resource_tenant_id: the project of the reverse zones the service
# makes for floating IPs' PTR records (reverse.py), held by no quota
MANAGED_PROJECT = "00000000-0000-0000-0000-000000000000"


def limits(s, project_id: str) -> dict:
    if project_id == MANAGED_PROJECT:
        return {r: -1 for r in RESOURCES}
    out = {r: getattr(config.CONF.dns, f"quota_{r}") for r in RESOURCES}
    for row in s.query(Quota).filter_by(project_id=project_id):
        if row.resource in out:
            out[row.resource] = row.hard_limit
    return out


def check(s, project_id: str, resource: str, wanted: int) -> None:
    limit = limits(s, project_id)[resource]
    if 0 <= limit < wanted:
        raise errors.over_quota(resource)


def get(ctx, project_id: str) -> dict:
    policy.authorize(ctx, "get_quotas", {"project_id": project_id})
    with db.reader() as s:
        return limits(s, project_id)


def update(ctx, project_id: str, body) -> dict:
    policy.authorize(ctx, "set_quota", {"project_id": project_id})
    if not isinstance(body, dict) or not body or set(body) - set(RESOURCES):
        raise errors.bad_request("Provided object does not match schema")
    for value in body.values():
        if isinstance(value, bool) or not isinstance(value, int) \
                or not -1 <= value <= 2147483647:
            raise errors.bad_request("Provided object does not match schema")
    with db.transaction() as s:
        for resource, value in body.items():
            row = s.query(Quota).filter_by(project_id=project_id, resource=resource).first()
            if row is None:
                s.add(Quota(project_id=project_id, resource=resource, hard_limit=value))
            else:
                row.hard_limit = value
        s.flush()
        return limits(s, project_id)


def reset(ctx, project_id: str) -> None:
    policy.authorize(ctx, "reset_quotas", {"project_id": project_id})
    with db.transaction() as s:
        s.query(Quota).filter_by(project_id=project_id).delete()
