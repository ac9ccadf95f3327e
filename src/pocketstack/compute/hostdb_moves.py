"""A compute host's operations for moving a server (hostdb.py has the others): the end
of a live migration or an evacuation (manager/migrate.py), and each transaction block of
a resize or cold migration (manager/resize.py), run where the database is."""
from __future__ import annotations

import types


from pocketstack.common import db
from pocketstack.compute import (instances, resize, states, trace)
from pocketstack.compute.scheduler import claims
from pocketstack.compute.host_operations import (FLAVOR_USAGE, INSTANCE, PLACE, STATES,
                                                 StoredStep, bus_values, event_row,
                                                 operation)


# --- live migration and evacuation (manager/migrate.py) -------------------------------


@operation(INSTANCE)
def set_migration_status(instance_uuid: str, migration_uuid: str, status: str) -> bool:
    return resize.set_status(migration_uuid, status)


@operation(INSTANCE)
def fail_move(instance_uuid: str, migration_uuid: str, event: dict, reason: str,
              request_id: str, vm_state: str | None = None) -> None:
    """migrate.fail, for a host: the destination's claim dropped, the source's back."""
    from pocketstack.compute import migrate

    migrate.fail(types.SimpleNamespace(request_id=request_id), instance_uuid,
                 migration_uuid, StoredStep(event), reason, vm_state=vm_state)


@operation(INSTANCE, writes=(*STATES, *PLACE))
def finish_move(instance_uuid: str, migration_uuid: str, values: dict, expect_task,
                events: list[dict], request_id: str, status: str) -> bool:
    """The end of a live migration or an evacuation, in one commit: the server on its new
    host, the source's claim (under the migration) given back, the migration ``status``
    (error, and the server's claim given back, if it was deleted meanwhile)."""
    with db.transaction() as s:
        ok = instances.update(instance_uuid, bus_values(values), expect_task=expect_task,
                              events=[StoredStep(e) for e in events], session=s)
        claims.release(migration_uuid, session=s)
        resize.set_status(migration_uuid, status if ok else "error", session=s)
        if ok:
            trace.finish_action(s, request_id, instance_uuid)
        else:
            claims.release(instance_uuid, session=s)
    return ok

# --- resize (manager/resize.py): each a transaction block of the flow, moved here --------


@operation(INSTANCE, returns_instance=True)
def get_migration(instance_uuid: str, migration_uuid: str):
    """The server's migration (the conductor checked that it is this server's)."""
    return resize.get_migration(migration_uuid)


@operation(INSTANCE)
def release_for_delete(instance_uuid: str, release_claim: bool) -> None:
    """A server deleted mid-resize: its migration's claims given back (and its own)."""
    with db.transaction() as s:
        resize.release_for_delete(s, instance_uuid)
        if release_claim:
            claims.release(instance_uuid, session=s)


@operation(INSTANCE)
def release_claim(instance_uuid: str, consumer: str) -> bool:
    """The claim held by the server or by its migration (``consumer``)."""
    return claims.release(consumer)


@operation(INSTANCE, writes=(*STATES, *PLACE, "flavor", "progress"))
def advance_resize(instance_uuid: str, migration_uuid: str, values: dict, expect_task,
                   status: str, expect_status: str | None = None,
                   events: list[dict] = (), request_id: str | None = None) -> bool:
    """One step of a resize: the server's task and the migration's status together (and
    the action's finish, given its ``request_id``, when it is the last)."""
    with db.transaction() as s:
        ok = instances.update(instance_uuid, values, expect_task=expect_task, session=s)
        trace.store_rows(s, [event_row(e) for e in events])
        ok = ok and resize.set_status(migration_uuid, status, expect=expect_status,
                                      session=s)
        if ok and request_id is not None:
            trace.finish_action(s, request_id, instance_uuid)
        return ok


@operation(INSTANCE, writes=("vm_state", *FLAVOR_USAGE))
def confirm_resize(instance_uuid: str, migration_uuid: str, values: dict | None,
                   event: dict, request_id: str) -> None:
    """The source's claim given back, the migration confirmed and, for a live server,
    its state from the new flavor (the event says whether a claim was released)."""
    with db.transaction() as s:
        released = claims.release(migration_uuid, session=s)
        resize.set_status(migration_uuid, "confirmed", session=s)
        if values is not None:
            event = dict(event, detail=event["detail"] + (
                ", source claim released" if released else ""))
            if instances.update(instance_uuid, values, expect_vm=states.RESIZED,
                                expect_task=None, session=s):
                trace.store_rows(s, [event_row(event)])
                trace.finish_action(s, request_id, instance_uuid)
            else:
                trace.store_rows(s, [event_row(event)])


@operation(INSTANCE, writes=(*STATES, *PLACE, "flavor", *FLAVOR_USAGE))
def finish_revert(instance_uuid: str, migration_uuid: str, values: dict,
                  events: list[dict], request_id: str) -> bool:
    """The source's claim back to the server, its old flavor and host; the migration
    reverted (or in error, and the claim given back, if the server moved on)."""
    with db.transaction() as s:
        claims.move_back(migration_uuid, instance_uuid, session=s)
        ok = instances.update(instance_uuid, values, expect_task=states.RESIZE_REVERTING,
                              session=s)
        trace.store_rows(s, [event_row(e) for e in events])
        resize.set_status(migration_uuid, "reverted" if ok else "error", session=s)
        if ok:
            trace.finish_action(s, request_id, instance_uuid)
        else:
            claims.release(instance_uuid, session=s)
        return ok


@operation(INSTANCE)
def rollback_resize(instance_uuid: str, migration_uuid: str, event: dict, reason: str,
                    request_id: str, error_state: bool = False, expect_task=None) -> None:
    """resize.rollback, for a host: the destination's claim dropped, the source's back."""
    m = resize.get_migration(migration_uuid)
    resize.rollback(types.SimpleNamespace(request_id=request_id), instance_uuid, m,
                    StoredStep(event), reason, error_state=error_state,
                    expect_task=expect_task)
