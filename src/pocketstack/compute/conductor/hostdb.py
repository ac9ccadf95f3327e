"""The conductor's side of compute/hostdb.py: a compute host's named operations, run
after checking that the asking host may ask them.

The asking host is the one whose own identity user's token the call carries
(host_identity.py). It may run only the operations compute/hostdb.py lists (no table,
no query of its own choosing), on its own service rows (``hosts``) and on servers
scheduled to it (``instance``: the server's host, or the source or destination of its
migration in progress). Anything else is refused with a 403 and logged: a compute host that asks for
another host's server is compromised or badly misconfigured."""
from __future__ import annotations

import inspect
import logging

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.compute import hostdb, instances, resize
from pocketstack.compute.conductor import host_identity
from pocketstack.compute.models import BlockDeviceMapping, ComputeNode, Instance, Migration
from pocketstack.compute.scheduler import claims

LOG = logging.getLogger(__name__)

# A migration in these states still has both hosts working on the server (resizes', then
# live migrations' and evacuations').
_MOVING = resize.IN_PROGRESS + ("accepted", "preparing", "running")


def _refuse(host: str, op: str, why: str) -> exceptions.Forbidden:
    LOG.warning("Refused %s from compute host %s: %s", op, host, why)
    return exceptions.Forbidden(f"Host {host} may not run {op}: {why}.")


def serves(host: str, instance_uuid) -> bool:
    """``instance_uuid`` is scheduled to ``host``: its host, the source or destination of
    its migration in progress, or the holder of its claim (the scheduler claims on the
    chosen host before the host is written on the server: an unshelve)."""
    if not isinstance(instance_uuid, str):
        return False
    with db.reader() as s:
        owner = s.scalar(sa.select(Instance.host).where(Instance.uuid == instance_uuid))
        if owner == host:
            return True
        if s.scalar(sa.select(Migration.id).where(
                Migration.instance_uuid == instance_uuid, Migration.status.in_(_MOVING),
                sa.or_(Migration.source_compute == host, Migration.dest_compute == host))
                .limit(1)) is not None:
            return True
        nodes = set(s.scalars(sa.select(ComputeNode.hypervisor_hostname)
                              .where(ComputeNode.host == host)).all())
    return claims.holder_host(instance_uuid) in nodes | {host}


def _of_server(uuid, instance_uuid: str) -> bool:
    if uuid == instance_uuid:
        return True
    with db.reader() as s:
        return isinstance(uuid, str) and s.scalar(sa.select(Migration.instance_uuid).where(
            Migration.uuid == uuid)) == instance_uuid


def _bdm_of_server(bdm_id, instance_uuid: str) -> bool:
    with db.reader() as s:
        return isinstance(bdm_id, int) and s.scalar(
            sa.select(BlockDeviceMapping.instance_uuid)
            .where(BlockDeviceMapping.id == bdm_id)) == instance_uuid


def check(host, op, args) -> tuple[hostdb.Operation, bool, dict]:
    """The operation ``host`` may run with ``args``, whether it is to run (a read of a
    server that is not the host's is answered ``operation.foreign`` instead: None, as
    for a server that does not exist) and what the check read for it to reuse (the
    server's row for an operation that ``preloads`` it, read in this call: never a row
    kept from an earlier one, which could let a host the server has left through)."""
    if not isinstance(host, str) or not host:
        raise _refuse(str(host), str(op), "no host named")
    operation = hostdb.OPERATIONS.get(op) if isinstance(op, str) else None
    if operation is None:
        raise _refuse(host, str(op), "not an operation a compute host may ask")
    if not isinstance(args, dict):
        raise _refuse(host, op, "arguments are not a mapping")
    if operation.scope == hostdb.HOSTS or "hosts" in args:
        # Host names given (the rows an operation writes for its hosts: service and node
        # rows, the claim released only on the host's own provider) are the asker's only.
        names = args.get("hosts")
        others = [h for h in names if h != host] if isinstance(names, list) else [names]
        if others or not names:
            raise _refuse(host, op, f"names other hosts {others}")
    extra = {}
    if operation.fenced:
        # Its compare-and-swap names the asking host: nothing to read first.
        if "asker" in args or not isinstance(args.get("instance_uuid"), str):
            raise _refuse(host, op, "no server named, or the asking host named by the host")
        extra["asker"] = host
    if operation.preloads:
        if "row" in args:
            raise _refuse(host, op, "a row is the conductor's to read")
        row = instances.load(args["instance_uuid"]) \
            if isinstance(args.get("instance_uuid"), str) else None
        if row is not None and row.host == host:
            extra["row"] = row  # its host: the server is this host's (serves' first test)
    if operation.scope == hostdb.HOSTS:
        pass
    elif not extra and not serves(host, args.get("instance_uuid")):
        if operation.foreign != hostdb.REFUSE and isinstance(args.get("instance_uuid"), str):
            return operation, False, extra
        raise _refuse(host, op, f"server {args.get('instance_uuid')} is not on this host")
    else:
        # A migration or claim named beside the server must be that server's own.
        for name in ("migration_uuid", "consumer"):
            if name in args and not _of_server(args[name], args["instance_uuid"]):
                raise _refuse(host, op, f"{args[name]} is not server "
                                        f"{args['instance_uuid']}'s")
        if "bdm_id" in args and not _bdm_of_server(args["bdm_id"], args["instance_uuid"]):
            raise _refuse(host, op, f"mapping {args['bdm_id']} is not server "
                                    f"{args['instance_uuid']}'s")
        if operation.writes is not None:
            _check_writes(host, op, operation.writes, args.get("values"),
                          args.get("migration_uuid"))
        if "bdm_id" in args and operation.writes is not None:
            _check_block_device(host, op, args["bdm_id"], args.get("values"),
                                args.get("expect"))
    return operation, True, extra


def _check_block_device(host: str, op: str, bdm_id: int, values: dict, expect) -> None:
    """A mapping's new values (their columns are checked already) are of their column's
    kind, compare only its ids, and set a volume only where the host creates one: a
    volume mapping from an image, snapshot or blank that has none yet (or clear it). A
    host must not point its server at another volume, which is not its to attach."""
    if not isinstance(values, dict):
        raise _refuse(host, op, "values are not a mapping")
    ids = ("attachment_id", "volume_id")
    if expect is not None and (not isinstance(expect, dict) or any(
            k not in ids for k in expect)):
        raise _refuse(host, op, "may compare only the mapping's attachment and volume")
    for column, value in [*values.items(), *(expect or {}).items()]:
        if column in ids and value is not None and not (
                isinstance(value, str) and 0 < len(value) <= 36):
            raise _refuse(host, op, f"{column} is not an id")
    if not isinstance(values.get("connection_info"), (dict, type(None))):
        raise _refuse(host, op, "connection_info is not a mapping")
    if values.get("volume_id") is None:
        return
    b = BlockDeviceMapping
    with db.reader() as s:
        source, dest, volume = s.execute(sa.select(
            b.source_type, b.destination_type, b.volume_id).where(b.id == bdm_id)).first() \
            or ("volume", "volume", None)
    if source == "volume" or dest != "volume" or volume is not None:
        raise _refuse(host, op, f"may not set the volume of mapping {bdm_id} "
                                f"(from {source}, volume {volume})")


def _check_writes(host: str, op: str, writes: frozenset, values, migration_uuid) -> None:
    """``values`` sets only columns ``op`` may write, and places the server only on the
    asking host, nowhere, or where the server's migration goes (a live migration's source
    ends it): a host must not move its servers into another project, to another user or
    onto another host."""
    if values is None:
        return
    if not isinstance(values, dict):
        raise _refuse(host, op, "values are not a mapping")
    others = sorted(str(k) for k in values if k not in writes)
    if others:
        raise _refuse(host, op, f"may not write {', '.join(others)}")
    place, node = values.get("host"), values.get("node")
    if place is None and node is None:
        return
    if not isinstance(place, (str, type(None))) or not isinstance(node, (str, type(None))):
        raise _refuse(host, op, "a host or node that is not a name")
    with db.reader() as s:
        dest = s.execute(sa.select(Migration.dest_compute, Migration.dest_node).where(
            Migration.uuid == migration_uuid)).first() if isinstance(
                migration_uuid, str) else None
        if place not in (None, host) and (dest is None or place != dest[0]):
            raise _refuse(host, op, f"may not place a server on host {place}")
        nodes = set() if node is None else set(s.scalars(
            sa.select(ComputeNode.hypervisor_hostname).where(ComputeNode.host == host)))
    if node is not None and node not in nodes and (dest is None or node != dest[1]):
        raise _refuse(host, op, f"may not place a server on node {node}")


class HostDBMixin:
    def host_db(self, ctx, host: str, op: str, args: dict):
        why = host_identity.refusal(ctx, host)  # the name is the token's, or nothing runs
        if why:
            raise _refuse(str(host), str(op), why)
        operation, run, extra = check(host, op, args)
        if not run:
            LOG.info("Answered %s from compute host %s with %r: server %s is not on it",
                     op, host, operation.foreign, args.get("instance_uuid"))
            return operation.foreign
        try:
            inspect.signature(operation.func).bind(**args)
        except TypeError as error:  # arguments the operation does not take
            raise exceptions.BadRequest(f"{op}: {error}") from None
        answer = operation.func(**args, **extra)
        return hostdb.instance_columns(answer) if operation.returns_instance else answer
