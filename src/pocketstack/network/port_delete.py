"""Deleting a port (neutron's delete_port): a floating IP lets go of it, its tags, addresses
and security-group bindings go with it, DHCP is rewritten and compute hears
network-vif-deleted. The API path deletes with prebuilt statements under the writer lock
only; ``delete_in`` is for callers that hold a loaded port (routers, floating
IPs, the DHCP port).
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.common.timeutils import utcnow
from pocketstack.network import base
from pocketstack.network import agent as host_agent
from pocketstack.network import exceptions as exc
from pocketstack.network.models import FloatingIP, Network, Port, Router, Tag
from pocketstack.network.ports import PROTECTED_OWNERS, get_row, is_compute, policy_target


@base.retry_on_deadlock
def delete_port(ctx, port_id: str, if_revision: int | None = None) -> None:
    effects = base.AfterCommit()
    # Found and authorized before the write transaction: a port's project and network
    # never change, so the check holds for the row deleted below (the SQLite
    # writer lock is held for the delete itself only).
    with db.reader() as s:
        port = get_row(s, ctx, port_id)
        network = s.get(Network, port.network_id)
    base.authorize(ctx, "delete_port", policy_target(port.project_id, network))
    with db.transaction() as s:
        # Locked: of two concurrent deletes, the second finds nothing (404), as in neutron.
        # The owner is read again: it may have changed since.
        port = s.execute(_DELETE_FACTS, {"port_id": port_id}).first()
        if port is None:
            raise exc.PortNotFound(port_id)
        base.check_revision(port, if_revision)
        _refuse_service_port(s, port)
        _delete_unloaded(s.connection(), port, effects)
    effects.run()
    host_agent.changed()


# What delete_in needs of the port, as one row.
_DELETE_FACTS = sa.select(Port.id, Port.network_id, Port.device_owner, Port.device_id,
                          Port.revision_number) \
    .where(Port.id == sa.bindparam("port_id")).with_for_update()


# delete_in's statements on the tables: delete_port loads no ORM object to keep in step,
# and the ORM's bulk statements cost several times what SQLite takes to run these.
_FIP, _TAG, _PORT = FloatingIP.__table__, Tag.__table__, Port.__table__
_LET_GO_OF_PORT = _FIP.update().where(_FIP.c.fixed_port_id == sa.bindparam("port_id")).values(
    fixed_port_id=None, fixed_ip_address=None, router_id=None, status="DOWN",
    updated_at=sa.bindparam("now"), revision_number=_FIP.c.revision_number + 1)
_DELETE_TAGS = _TAG.delete().where(_TAG.c.resource_id == sa.bindparam("port_id"))
_DELETE_PORT = _PORT.delete().where(_PORT.c.id == sa.bindparam("port_id"))


def _delete_unloaded(conn, port, effects: base.AfterCommit) -> None:
    """delete_in for a port the session has not loaded (nor its floating IPs)."""
    for fip in conn.execute(_PUBLISHED_VIA_PORT, {"port_id": port.id}):
        _unpublish(conn, fip, effects)
    conn.execute(_LET_GO_OF_PORT, {"port_id": port.id, "now": utcnow()})
    for statement in (_DELETE_TAGS, _DELETE_PORT):
        conn.execute(statement, {"port_id": port.id})
    effects.dhcp(port.network_id)
    if is_compute(port):
        effects.event("network-vif-deleted", port.device_id, port.id)


# Floating IPs on the port whose DNS record came from it (dns_publish.py)
_PUBLISHED_VIA_PORT = sa.select(
    _FIP.c.id, _FIP.c.floating_ip_address, _FIP.c.dns_name, _FIP.c.dns_domain,
    _FIP.c.published_dns_name, _FIP.c.published_dns_domain).where(
    _FIP.c.fixed_port_id == sa.bindparam("port_id"), _FIP.c.published_dns_name != "")


def _unpublish(conn, fip, effects: base.AfterCommit) -> None:
    """The port's floating IP loses the record the port gave it (one of its own stays)."""
    if not fip.published_dns_name or (fip.dns_name and fip.dns_domain):
        return
    effects.dns_change(None, fip.floating_ip_address,
                       (fip.published_dns_name, fip.published_dns_domain), None)
    conn.execute(_FIP.update().where(_FIP.c.id == fip.id).values(
        published_dns_name="", published_dns_domain=""))


def _refuse_service_port(s, port: Port) -> None:
    if port.device_owner not in PROTECTED_OWNERS:
        return
    model = FloatingIP if port.device_owner == "network:floatingip" else Router
    if port.device_id and s.get(model, port.device_id) is not None:
        raise exc.ServicePortInUse(port.id, f"has device owner {port.device_owner}")


def delete_in(s, port: Port, effects: base.AfterCommit) -> None:
    # A floating IP pointing at the port lets go of it (neutron disassociates).
    for fip in s.scalars(sa.select(FloatingIP).where(FloatingIP.fixed_port_id == port.id)):
        fip.fixed_port_id = fip.fixed_ip_address = fip.router_id = None
        fip.status = "DOWN"
        _unpublish(s.connection(), fip, effects)
        base.touch(fip)
    s.execute(sa.delete(Tag).where(Tag.resource_id == port.id))
    # Its addresses and security group bindings go with the row: ON DELETE CASCADE in the
    # schema (SQLite with foreign_keys=ON, common/db.py), two statements fewer per port in
    # every server delete.
    s.execute(sa.delete(Port).where(Port.id == port.id))
    effects.dhcp(port.network_id)
    if is_compute(port):
        effects.event("network-vif-deleted", port.device_id, port.id)
