"""What a server action checks before it starts (nova's check_instance_lock and
check_instance_state, and whether the server's host is up), and ``begin``, which checks
and then claims the server for the action. The API halves of the actions (actions.py,
lifecycle.py, resize.py, migrate.py, volumes.py, interfaces.py) share these: they live
down here so that none of those modules has to import another for them."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.compute import instances, trace
from pocketstack.compute.models import Service
from pocketstack.compute.scheduler.host_state import service_is_up
from pocketstack.compute.trace import Step


def invalid_state(inst, action: str, attr: str = "vm_state") -> exceptions.Conflict:
    value = inst.vm_state if attr == "vm_state" else inst.task_state
    return exceptions.Conflict(f"Cannot '{action}' instance {inst.uuid} while it is in "
                               f"{attr} {value}")


def check_locked(ctx, inst) -> None:
    """A locked server refuses actions from anyone but an admin (nova's check_instance_lock)."""
    if inst.locked_by and not ctx.is_admin:
        raise exceptions.Conflict(f"Instance {inst.uuid} is locked")


def check(ctx, inst, vm_ok, name: str) -> None:
    """What ``begin`` checks, for an action that makes something (an image) before it
    claims the server: a refused request must leave nothing behind."""
    check_locked(ctx, inst)
    if inst.vm_state not in vm_ok:
        raise invalid_state(inst, name)
    if inst.task_state is not None:
        raise invalid_state(inst, name, "task_state")
    if not inst.host:
        raise exceptions.Conflict(f"Cannot '{name}' instance {inst.uuid}: it has no host.")


def begin(ctx, inst, action: str, vm_ok, task: str | None, name: str) -> None:
    """The checks, then the server claimed for ``action`` (task_state ``task`` by
    compare-and-swap, unless None) and the action recorded, in one commit."""
    check(ctx, inst, vm_ok, name)
    with db.transaction() as s:
        if task is not None and not instances.update(inst.uuid, {"task_state": task},
                                                     expect_task=None, session=s):
            raise invalid_state(instances.load(inst.uuid), name, "task_state")
        trace.start_action(s, ctx, inst.uuid, action)
        trace.store(s, [Step(ctx, inst.uuid, f"api_{action}", "api", None).done()])


def host_up(host: str | None) -> bool:
    if not host:
        return False
    with db.reader() as s:
        row = s.connection().execute(_HOST_SERVICE, {"host": host}).first()
    return row is not None and service_is_up(row[0], row[1])


# Built once: every delete (and most actions) asks.
_HOST_SERVICE = sa.select(Service.__table__.c.last_seen_up, Service.__table__.c.forced_down) \
    .where(Service.__table__.c.host == sa.bindparam("host"),
           Service.__table__.c.binary == "nova-compute")
