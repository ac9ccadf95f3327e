"""Port updates: the entry point, and its fast path for updates that set plain columns
only; anything else goes to ports.update_in, the locked read-modify-write.

A port update that sets only plain columns of the port row (name, admin state, device,
binding: every boot's binding and every server delete's unbinding), with the SQLite
writer lock held for one UPDATE only.

The port, its network and its tags are read, the caller authorized, the checks made and
the new status and VIF worked out outside the write transaction; the write is then a
compare-and-swap on the revision number read. Every change to a port bumps it
(base.touch), so a port changed or deleted in between makes the UPDATE match nothing and
the caller falls back to the locked read-modify-write (ports.update_in), which decides
as before. The response is the row as read plus what was written.
"""
from __future__ import annotations

import functools

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.network import agent as host_agent
from pocketstack.network import base, ports
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import Network, Port
from pocketstack.network.port_schema import ATTRS


@base.retry_on_deadlock
def update_port(ctx, port_id: str, body: dict, if_revision: int | None = None) -> dict:
    values = v.parse(v.resource_body(body, "port"), ATTRS, update=True)
    effects = base.AfterCommit()
    port = (plain_update(ctx, port_id, values, effects, if_revision)
            if plain_applies(values) else None)
    if port is not None:
        out = ports.view(port, port.read_tags, ports.show_binding(ctx))
    else:
        with db.transaction() as s:
            port = ports.update_in(s, ctx, port_id, values,  # sets the network's policy
                                   effects, if_revision=if_revision)
            for collection in ("fixed_ips", "security_group_bindings"):
                getattr(port, collection)  # loaded here, for the view below
            tags = base.tags_of(s, port.id)
        # Rendered after the commit: on SQLite the write lock is held no longer than needed.
        out = ports.view(port, tags, ports.show_binding(ctx))
    ports.plug_bridge_ports([port])
    effects.run()
    host_agent.changed()  # security groups or addresses may have changed
    return {"port": out}


# request attribute -> Port attribute, the ones written to the port row alone
_PLAIN = {"name": "name", "description": "description", "admin_state_up": "admin_state_up",
         "device_id": "device_id", "device_owner": "device_owner",
         "binding:host_id": "host_id", "binding:profile": "profile",
         "binding:vnic_type": "vnic_type"}
# also written: what binding_state and base.touch derive
_DERIVED = ("status", "vif_type", "vif_details", "updated_at", "revision_number")

_READ = sa.select(Port).options(*ports.load_options()) \
    .where(Port.id == sa.bindparam("port_id"))


_TABLE = Port.__table__


@functools.cache
def _write_statement(columns: tuple) -> sa.Update:
    """The compare-and-swap UPDATE for one set of columns, built once (a statement and its
    cache key cost more to build than SQLite takes to run it; Port's attributes are named
    as its columns)."""
    return _TABLE.update().where(
        _TABLE.c.id == sa.bindparam("p_id"),
        _TABLE.c.revision_number == sa.bindparam("p_revision")).values(
        {c: sa.bindparam(f"v_{c}") for c in columns})


def plain_applies(values: dict) -> bool:
    return bool(values) and all(key in _PLAIN for key in values)


def plain_update(ctx, port_id: str, values: dict, effects: base.AfterCommit,
                 if_revision: int | None = None) -> Port | None:
    """The updated port (its tags as ``port.read_tags``), or None when it changed
    between the read and the write (the caller then takes the locked path).
    ``If-Match: revision_number=N`` is checked against the revision read: the
    compare-and-swap then writes only a port still at N, and a port changed in between
    goes to the locked path, which checks N again (and answers 412)."""
    with db.reader() as s:
        port = s.scalar(_READ.where(ports.visible(ctx)), {"port_id": port_id})
        if port is None:
            raise exc.PortNotFound(port_id)
        network = s.get(Network, port.network_id)
        tags = base.tags_of(s, port.id)
    # project and network of a port never change: the policy target read holds
    target = ports.policy_target(port.project_id, network)
    base.authorize(ctx, "update_port", target)
    ports.authorize_attributes(ctx, "update_port", values, target, network)
    base.check_revision(port, if_revision)
    # What update_in checks on a port whose security settings this update leaves alone.
    if not port.port_security_enabled and port.security_group_bindings:
        raise exc.PortSecurityPortHasSecurityGroup()
    ports.check_security(None, ctx, port.port_security_enabled, None,
                         port.allowed_address_pairs or [], port.project_id)
    was_active, read_revision = port.status == "ACTIVE", port.revision_number
    for key, value in values.items():
        setattr(port, _PLAIN[key], value)
    ports.binding_state(port)
    base.touch(port)
    columns = tuple(_PLAIN[k] for k in values) + _DERIVED
    params = {f"v_{c}": getattr(port, c) for c in columns}
    params.update(p_id=port_id, p_revision=read_revision)
    statement = _write_statement(columns)
    with db.transaction() as s:
        written = s.connection().execute(statement, params).rowcount == 1
    if not written:
        return None
    port.network_qos_policy_id = network.qos_policy_id
    port.read_tags = tags
    if ports.is_compute(port) and port.status == "ACTIVE" and not was_active:
        effects.event("network-vif-plugged", port.device_id, port.id)
    elif ports.is_compute(port) and was_active and port.status != "ACTIVE":
        effects.event("network-vif-unplugged", port.device_id, port.id)
    return port
