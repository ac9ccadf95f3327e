"""Counted quotas (nova's model since Pike): usage is counted from the instance rows, not
reserved, and checked again after the rows are written so concurrent creates cannot both
slip under the limit."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions
from pocketstack.compute.models import Instance, Quota

RESOURCES = ("instances", "cores", "ram", "metadata_items", "injected_files",
             "injected_file_content_bytes", "injected_file_path_bytes", "key_pairs",
             "server_groups", "server_group_members")
_CONF_NAME = {"injected_file_path_bytes": "injected_file_path_length"}


class QuotaExceeded(exceptions.OverQuota):
    code = 403


def defaults() -> dict[str, int]:
    conf = config.CONF.quota
    return {r: getattr(conf, _CONF_NAME.get(r, r)) for r in RESOURCES}


# Built once: every server create runs both (statement construction and its cache key
# cost more than SQLite's answer). Core tables, so the ORM adds nothing per execution.
_q, _i = Quota.__table__.c, Instance.__table__.c
# The quota class "default" (os-quota-class-sets) is kept under this pseudo project: it
# overrides the configured defaults, a project's own limits override both.
DEFAULT_CLASS = "quota-class:default"
_LIMITS = (sa.select(_q.resource, _q.hard_limit)
           .where(_q.project_id.in_([sa.bindparam("project_id"), DEFAULT_CLASS]))
           .order_by((_q.project_id == DEFAULT_CLASS).desc()))
_USAGE = (sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(_i.vcpus), 0),
                    sa.func.coalesce(sa.func.sum(_i.memory_mb), 0))
          .where(_i.project_id == sa.bindparam("project_id"), _i.deleted.is_(False)))


def _run(session, fn):
    if session is not None:
        return fn(session)
    with db.reader() as s:
        return fn(s)


def limits(project_id: str, session=None) -> dict[str, int]:
    def run(s):
        out = defaults()
        for resource, hard in s.connection().execute(_LIMITS, {"project_id": project_id}):
            out[resource] = hard
        return out

    return _run(session, run)


def class_defaults(session=None) -> dict[str, int]:
    """What a project without limits of its own gets: the configured defaults under the
    quota class "default" (nova's quota_class_get_default)."""
    return limits(DEFAULT_CLASS, session)


def usage(project_id: str, session=None) -> dict[str, int]:
    def run(s):
        count, cores, ram = s.connection().execute(_USAGE, {"project_id": project_id}).one()
        return {"instances": count, "cores": int(cores), "ram": int(ram)}

    return _run(session, run)


def check_instances(project_id: str, count: int, flavor: dict, *, already_written: int = 0,
                    min_count: int | None = None, lim: dict | None = None,
                    used: dict | None = None) -> int:
    """How many of ``count`` servers fit (at least ``min_count``), else 403. ``lim`` and
    ``used`` may be given when the caller already read them."""
    lim = lim if lim is not None else limits(project_id)
    used = used if used is not None else usage(project_id)
    if already_written:
        used = {k: v - (already_written * (1 if k == "instances" else
                                           flavor["vcpus"] if k == "cores" else
                                           flavor["memory_mb"])) for k, v in used.items()}
    per = {"instances": 1, "cores": flavor["vcpus"], "ram": flavor["memory_mb"]}
    allowed = count
    for resource, unit in per.items():
        limit = lim[resource]
        if limit < 0 or unit == 0:
            continue
        fit = (limit - used[resource]) // unit
        allowed = min(allowed, fit)
    if allowed >= (min_count or count):
        return min(allowed, count)
    over = [r for r, unit in per.items() if 0 <= lim[r] < used[r] + unit * (min_count or count)]
    resource = over[0] if over else "instances"
    raise QuotaExceeded(
        f"Quota exceeded for {resource}: Requested {per[resource] * (min_count or count)}, "
        f"but already used {used[resource]} of {lim[resource]} {resource}")
