"""/os-migrations (admin: every resize, cold and live migration, evacuation) and
/servers/{id}/migrations (a server's live migrations in progress), as nova's."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions, numbers
from pocketstack.common.timeutils import isotime_naive
from pocketstack.compute import instances
from pocketstack.compute.models import Flavor, Migration
from pocketstack.compute.rest.common import (at_least, authorize, changes_time, limit_marker,
                                             respond)

LIVE_IN_PROGRESS = ("queued", "preparing", "running")


def _flavor_ids(s, rows) -> dict[str, int]:
    ids = {f for m in rows for f in ((m.old_flavor or {}).get("flavorid"),
                                     (m.new_flavor or {}).get("flavorid")) if f}
    if not ids:
        return {}
    return dict(s.execute(sa.select(Flavor.flavorid, Flavor.id)
                          .where(Flavor.flavorid.in_(ids))).all())


def _view(req, m: Migration, flavor_ids: dict) -> dict:
    out = {"id": m.id, "instance_uuid": m.instance_uuid, "status": m.status,
           "source_compute": m.source_compute, "source_node": m.source_node,
           "dest_compute": m.dest_compute, "dest_node": m.dest_node,
           "dest_host": "127.0.0.1" if m.dest_compute else None,
           "old_instance_type_id": flavor_ids.get((m.old_flavor or {}).get("flavorid")),
           "new_instance_type_id": flavor_ids.get((m.new_flavor or {}).get("flavorid")),
           "created_at": isotime_naive(m.created_at), "updated_at": isotime_naive(m.updated_at)}
    if at_least(req, "2.23"):
        out["migration_type"] = m.migration_type
        if m.migration_type == "live-migration" and m.status in LIVE_IN_PROGRESS:
            path = f"servers/{m.instance_uuid}/migrations/{m.id}"
            out["links"] = [{"rel": "self", "href": f"{req.service_url}/v2.1/{path}"},
                            {"rel": "bookmark", "href": f"{req.service_url}/{path}"}]
    if at_least(req, "2.59"):
        out["uuid"] = m.uuid
    if at_least(req, "2.80"):
        out["user_id"], out["project_id"] = m.user_id, m.project_id
    return out


def list_migrations(req):
    authorize(req, "os_compute_api:os-migrations:index")
    q = req.query
    stmt = sa.select(Migration)
    for key, col in (("instance_uuid", Migration.instance_uuid), ("status", Migration.status),
                     ("source_compute", Migration.source_compute)):
        if q.get(key):
            stmt = stmt.where(col == q[key])
    if q.get("host"):
        stmt = stmt.where(sa.or_(Migration.source_compute == q["host"],
                                 Migration.dest_compute == q["host"]))
    if q.get("migration_type") and at_least(req, "2.23"):
        stmt = stmt.where(Migration.migration_type == q["migration_type"])
    if at_least(req, "2.59"):
        since = changes_time(req.query, "changes-since")
        if since is not None:
            stmt = stmt.where(Migration.updated_at >= since)
    if at_least(req, "2.66"):
        before = changes_time(req.query, "changes-before")
        if before is not None:
            stmt = stmt.where(Migration.updated_at <= before)
    if at_least(req, "2.80"):  # 2.80: filter by the user and project that migrated
        for key, col in (("user_id", Migration.user_id),
                         ("project_id", Migration.project_id)):
            if q.get(key):
                stmt = stmt.where(col == q[key])
    paged = at_least(req, "2.59")
    stmt = stmt.order_by(Migration.created_at.desc(), Migration.id.desc())
    with db.reader() as s:
        rows = s.scalars(stmt).all()
        if paged:
            limit, marker = limit_marker(req)
            if marker:
                ids = [m.uuid for m in rows]
                if marker not in ids:
                    raise exceptions.BadRequest(f"Marker {marker} could not be found.")
                rows = rows[ids.index(marker) + 1:]
            rows = rows[:limit]
        flavor_ids = _flavor_ids(s, rows)
    items = [_view(req, m, flavor_ids) for m in rows]
    out = {"migrations": items}
    if paged and q.get("limit") and items and len(items) >= int(q["limit"]):
        out["migrations_links"] = [{"rel": "next", "href": f"{req.service_url}/v2.1/"
                                    f"os-migrations?limit={q['limit']}&marker={rows[-1].uuid}"}]
    return respond(req, out)


def _server_view(req, m: Migration) -> dict:
    out = {"id": m.id, "server_uuid": m.instance_uuid, "status": m.status,
           "source_compute": m.source_compute, "source_node": m.source_node,
           "dest_compute": m.dest_compute, "dest_node": m.dest_node,
           "dest_host": "127.0.0.1" if m.dest_compute else None,
           "created_at": isotime_naive(m.created_at), "updated_at": isotime_naive(m.updated_at),
           "memory_total_bytes": 0, "memory_processed_bytes": 0,
           "memory_remaining_bytes": 0, "disk_total_bytes": 0, "disk_processed_bytes": 0,
           "disk_remaining_bytes": 0}
    if at_least(req, "2.59"):
        out["uuid"] = m.uuid
    if at_least(req, "2.80"):
        out["user_id"], out["project_id"] = m.user_id, m.project_id
    return out


def _live(req):
    inst = instances.get(req.context, req.params["server_id"])
    stmt = sa.select(Migration).where(Migration.instance_uuid == inst.uuid,
                                      Migration.migration_type == "live-migration",
                                      Migration.status.in_(LIVE_IN_PROGRESS))
    return inst, stmt


def list_server_migrations(req):
    authorize(req, "os_compute_api:servers:migrations:index")
    _, stmt = _live(req)
    with db.reader() as s:
        rows = s.scalars(stmt.order_by(Migration.id)).all()
    return respond(req, {"migrations": [_server_view(req, m) for m in rows]})


def show_server_migration(req):
    authorize(req, "os_compute_api:servers:migrations:show")
    inst, stmt = _live(req)
    ident = req.params["migration_id"]
    with db.reader() as s:
        m = (s.scalar(stmt.where(Migration.id == int(ident)))
             if numbers.is_int_text(ident) else None)  # "²".isdigit() is True
    if m is None:
        raise exceptions.NotFound(f"In-progress live migration {ident} is not found for "
                                  f"server {inst.uuid}.")
    return respond(req, {"migration": _server_view(req, m)})
