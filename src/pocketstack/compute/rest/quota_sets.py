"""/os-quota-sets/{project_id} (+/defaults, /detail) and /limits."""
from __future__ import annotations

from pocketstack.common import db, exceptions
from pocketstack.compute import quotas
from pocketstack.compute.models import Quota
from pocketstack.compute.rest.common import at_least, authorize, body, respond

# Quotas nova stopped showing at 2.36 (network proxies) and 2.57 (personality).
_NETWORK = ("floating_ips", "fixed_ips", "security_groups", "security_group_rules")
_FILES = ("injected_files", "injected_file_content_bytes", "injected_file_path_bytes")


def _shown(req) -> list[str]:
    names = [r for r in quotas.RESOURCES if not (at_least(req, "2.57") and r in _FILES)]
    if not at_least(req, "2.36"):
        names += list(_NETWORK)
    return names


# Nova's defaults for them; below 2.36 an update stores them as any other limit (nova keeps
# them although nothing counts against them any more).
_LEGACY = {"floating_ips": 10, "fixed_ips": -1, "security_groups": 10,
           "security_group_rules": 20}


def _values(req, limits: dict) -> dict:
    return {r: limits.get(r, _LEGACY.get(r, -1)) for r in _shown(req)}


def show(req):
    project_id = req.params["project_id"]
    authorize(req, "os_compute_api:os-quota-sets:show", {"project_id": project_id})
    return respond(req, {"quota_set": dict(_values(req, quotas.limits(project_id)),
                                           id=project_id)})


def defaults(req):
    authorize(req, "os_compute_api:os-quota-sets:defaults")
    return respond(req, {"quota_set": dict(_values(req, quotas.class_defaults()),
                                           id=req.params["project_id"])})


def detail(req):
    project_id = req.params["project_id"]
    authorize(req, "os_compute_api:os-quota-sets:detail", {"project_id": project_id})
    limits = _values(req, quotas.limits(project_id))
    used = quotas.usage(project_id)
    out = {r: {"limit": v, "in_use": used.get(r, 0), "reserved": 0} for r, v in limits.items()}
    return respond(req, {"quota_set": dict(out, id=project_id)})


MAX_LIMIT = 2147483647


def update(req):
    project_id = req.params["project_id"]
    authorize(req, "os_compute_api:os-quota-sets:update", {"project_id": project_id})
    props = {r: {"type": ["integer", "string"], "pattern": r"^-?[0-9]{1,19}$",
                 "minimum": -1}  # 19 digits: int() stays cheap (it refuses 4,300)
             for r in _shown(req)}
    props["force"] = {"type": ["boolean", "string"]}
    data = body(req, {"type": "object", "properties": {"quota_set": {
        "type": "object", "properties": props, "additionalProperties": False}},
        "required": ["quota_set"], "additionalProperties": False})["quota_set"]
    with db.transaction() as s:
        for resource, value in data.items():
            if resource == "force":
                continue
            value = int(value)
            if value < -1:
                raise exceptions.BadRequest(f"Quota limit {value} for {resource} must be "
                                            "-1 or greater.")
            if value > MAX_LIMIT:  # nova's db MAX_INT (a bigger one was a 500 from the DB)
                raise exceptions.BadRequest(f"Quota limit {value} for {resource} must be "
                                            f"less than or equal to {MAX_LIMIT}.")
            row = s.get(Quota, (project_id, resource))
            if row is None:
                s.add(Quota(project_id=project_id, resource=resource, hard_limit=value))
            else:
                row.hard_limit = value
    values = _values(req, quotas.limits(project_id))
    return respond(req, {"quota_set": values})


def delete(req):
    project_id = req.params["project_id"]
    authorize(req, "os_compute_api:os-quota-sets:delete", {"project_id": project_id})
    import sqlalchemy as sa

    with db.transaction() as s:
        s.execute(sa.delete(Quota).where(Quota.project_id == project_id))
    return respond(req, None, 202)


def limits(req):
    authorize(req, "os_compute_api:limits")
    project_id = req.context.project_id
    if req.query.get("tenant_id") and req.context.is_admin:
        project_id = req.query["tenant_id"]
    lim = quotas.limits(project_id)
    used = quotas.usage(project_id)
    absolute = {"maxTotalInstances": lim["instances"], "maxTotalCores": lim["cores"],
                "maxTotalRAMSize": lim["ram"], "maxServerMeta": lim["metadata_items"],
                "maxTotalKeypairs": lim["key_pairs"], "maxServerGroups": lim["server_groups"],
                "maxServerGroupMembers": lim["server_group_members"],
                "totalInstancesUsed": used["instances"], "totalCoresUsed": used["cores"],
                "totalRAMUsed": used["ram"], "totalServerGroupsUsed": _groups_used(project_id)}
    if not at_least(req, "2.57"):
        absolute.update(maxPersonality=lim["injected_files"],
                        maxPersonalitySize=lim["injected_file_content_bytes"])
    if not at_least(req, "2.36"):
        legacy = {r: lim.get(r, _LEGACY[r]) for r in _LEGACY}
        absolute.update(maxSecurityGroups=legacy["security_groups"],
                        maxSecurityGroupRules=legacy["security_group_rules"],
                        maxTotalFloatingIps=legacy["floating_ips"], totalSecurityGroupsUsed=0,
                        totalFloatingIpsUsed=0)
    if not at_least(req, "2.39"):
        absolute["maxImageMeta"] = 128
    return respond(req, {"limits": {"rate": [], "absolute": absolute}})


def _groups_used(project_id: str) -> int:
    import sqlalchemy as sa

    from pocketstack.compute.models import ServerGroup

    with db.reader() as s:
        return s.scalar(sa.select(sa.func.count()).select_from(ServerGroup)
                        .where(ServerGroup.project_id == project_id))
