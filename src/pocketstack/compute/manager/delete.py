"""terminate_instance on the host (interfaces and external events: interfaces.py)."""
from __future__ import annotations

import logging

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import instances, states, trace
from pocketstack.compute.manager import network, volumes
from pocketstack.compute.models import Migration
from pocketstack.compute.scheduler import claims
from pocketstack.compute.trace import Step

LOG = logging.getLogger(__name__)


def finish_delete(ctx, inst, host: str | None, vifs=None, steps=(),
                  use_service_token: bool = False) -> None:
    """Release everything a server holds and mark it deleted. Idempotent: safe to run
    from the API (no host), the host, and a racing build cleanup."""
    user_ports = [r["port_id"] for r in (inst.requested_networks or [])
                  if isinstance(r, dict) and r.get("port_id")]
    step = Step(ctx, inst.uuid, "compute_cleanup", "compute" if host else "api", host)
    requested = inst.requested_networks
    done = network.deallocate(ctx, inst.uuid, vifs if vifs is not None else inst.network_info,
                              user_ports, use_service_token=use_service_token,
                              requested_networks_empty=not (isinstance(requested, list)
                                                            and requested))
    # Every attachment goes, and the volumes marked delete_on_termination.
    done += volumes.release_for_delete(ctx, inst.uuid, use_service_token=use_service_token)
    with db.transaction() as s:
        if claims.release(inst.uuid, session=s):
            done.append("released claim")
        from pocketstack.compute.resize import release_for_delete

        # A Core look first: almost no server is deleted mid-resize, and the ORM's
        # look costs several times this under the writer lock.
        if s.connection().execute(_RESIZING, {"uuid": inst.uuid}).first() is not None:
            done += release_for_delete(s, inst.uuid)
        from pocketstack.compute.server_groups import forget_member

        forget_member(s, inst.uuid)
        now = utcnow()
        # One UPDATE (a no-op on a row already deleted), the events with it.
        instances.update(inst.uuid, {"deleted": True, "deleted_at": now, "terminated_at": now,
                                     "vm_state": states.DELETED, "task_state": None,
                                     "power_state": states.NOSTATE, "build_token": None},
                         events=list(steps) + [step.done(detail="; ".join(done)
                                                         or "nothing held")], session=s)
        trace.finish_action(s, ctx.request_id, inst.uuid)


def _resizing_statement():
    from pocketstack.compute.resize import IN_PROGRESS

    table = Migration.__table__
    return sa.select(table.c.id).where(table.c.instance_uuid == sa.bindparam("uuid"),
                                       table.c.status.in_(IN_PROGRESS)).limit(1)


_RESIZING = _resizing_statement()  # built once: every delete asks


class DeleteMixin:
    def terminate_instance(self, ctx, instance_uuid: str):
        # What finish_delete uses, not the whole row.
        inst = instances.peek(instance_uuid, "uuid", "requested_networks", "network_info")
        if inst is None:
            return
        step = Step(ctx, instance_uuid, "compute_terminate_instance", "compute", self.host)
        try:
            self.driver.destroy({"uuid": inst.uuid})
            step.done()
        except Exception as error:  # noqa: BLE001 - the guest is gone for the user anyway
            step.fail(error)
        finish_delete(ctx, inst, self.host, steps=[step])
