"""Server groups (nova's InstanceGroup): create with quota and a recheck, members that
are live servers only, delete. The scheduler reads ``policy``/``rules`` through the boot's
request spec (compute/api.py _group) and the ServerGroup(Anti)Affinity filters and the
soft-(anti-)affinity weighers."""
from __future__ import annotations

import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.compute import quotas
from pocketstack.compute.models import Instance, ServerGroup, ServerGroupMember

POLICIES = ("anti-affinity", "affinity", "soft-anti-affinity", "soft-affinity")


def not_found(uuid: str) -> exceptions.NotFound:
    return exceptions.NotFound(f"Instance group {uuid} could not be found.")


def get(ctx, uuid: str, session=None) -> ServerGroup:
    """The group ``ctx`` may see: another project's group is a 404, as for servers."""
    def load(s):
        row = s.get(ServerGroup, uuid)
        if row is None or (not ctx.is_admin and row.project_id != ctx.project_id):
            raise not_found(uuid)
        return row

    if session is not None:
        return load(session)
    with db.reader() as s:
        return load(s)


def members(session, uuids: list[str]) -> dict[str, list[str]]:
    """Live members of each group (deleted servers are not shown, as nova)."""
    out: dict[str, list[str]] = {u: [] for u in uuids}
    if not uuids:
        return out
    rows = session.execute(
        sa.select(ServerGroupMember.group_uuid, ServerGroupMember.instance_uuid)
        .join(Instance, Instance.uuid == ServerGroupMember.instance_uuid)
        .where(ServerGroupMember.group_uuid.in_(uuids), Instance.deleted.is_(False))
        .order_by(Instance.created_at)).all()
    for group, inst in rows:
        out[group].append(inst)
    return out


def _count(s, project_id: str) -> int:
    return s.scalar(sa.select(sa.func.count()).select_from(ServerGroup)
                    .where(ServerGroup.project_id == project_id))


def _check_quota(project_id: str, already_written: int = 0) -> None:
    limit = quotas.limits(project_id)["server_groups"]
    if limit < 0:
        return
    with db.reader() as s:
        used = _count(s, project_id) - already_written
    if used + 1 > limit:
        raise quotas.QuotaExceeded("Quota exceeded, too many server groups.")


def create(ctx, name: str, policy: str, rules: dict | None) -> ServerGroup:
    if policy not in POLICIES:
        raise exceptions.BadRequest(f"Invalid policy {policy}")
    rules = dict(rules or {})
    if rules and policy != "anti-affinity":
        raise exceptions.BadRequest("Only anti-affinity policy supports rules.")
    if "max_server_per_host" in rules:
        rules["max_server_per_host"] = int(rules["max_server_per_host"])
    _check_quota(ctx.project_id)
    row = ServerGroup(uuid=str(uuidlib.uuid4()), name=name, project_id=ctx.project_id,
                      user_id=ctx.user_id, policy=policy, rules=rules)
    with db.transaction() as s:
        s.add(row)
    try:  # the recheck: two creates that both counted before either wrote
        _check_quota(ctx.project_id, already_written=1)
    except quotas.QuotaExceeded:
        with db.transaction() as s:
            s.execute(sa.delete(ServerGroup).where(ServerGroup.uuid == row.uuid))
        raise
    return row


def delete(ctx, uuid: str) -> None:
    with db.transaction() as s:
        row = get(ctx, uuid, session=s)
        s.execute(sa.delete(ServerGroupMember).where(ServerGroupMember.group_uuid == row.uuid))
        s.execute(sa.delete(ServerGroup).where(ServerGroup.uuid == row.uuid))


def forget_member(session, instance_uuid: str) -> None:
    """A deleted server leaves its group (and stops counting toward its member quota)."""
    session.connection().execute(_FORGET_MEMBER, {"uuid": instance_uuid})


# Core, built once: every delete runs it, and the ORM's bulk delete would also search the
# session for loaded members to update (there are none where it runs).
_FORGET_MEMBER = sa.delete(ServerGroupMember.__table__).where(
    ServerGroupMember.__table__.c.instance_uuid == sa.bindparam("uuid"))
