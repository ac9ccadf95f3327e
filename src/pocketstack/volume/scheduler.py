"""Choosing a backend for a new volume (cinder-scheduler's capacity filter and weigher in
one function): the backends the type allows (``volume_backend_name``), that can hold the
size, the one with the most free space first.

Free space is what the backend reports, or for backends that do not track allocation
themselves (file, thin LVM) their capacity minus the GiB of volumes and snapshots placed
on them; it is computed inside the caller's transaction, after the quota lock.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import config, exceptions
from pocketstack.volume import backends
from pocketstack.volume.models import Snapshot, Volume


class NoValidBackend(exceptions.BadRequest):
    pass


def host_of(backend: str) -> str:
    """cinder's volume host string: host@backend#pool."""
    return f"{config.CONF.host}@{backend}#{backend}"


def backend_of(host: str | None) -> str | None:
    if not host or "@" not in host:
        return None
    return host.split("@", 1)[1].split("#", 1)[0]


def allocated(s, backend: str) -> int:
    pattern = f"%@{backend}#%"
    volumes = s.scalar(sa.select(sa.func.coalesce(sa.func.sum(Volume.size), 0))
                       .where(Volume.host.like(pattern))) or 0
    snaps = s.scalar(sa.select(sa.func.coalesce(sa.func.sum(Snapshot.size), 0))
                     .join(Volume, Snapshot.volume_id == Volume.id)
                     .where(Volume.host.like(pattern))) or 0
    return int(volumes) + int(snaps)


def free_space(s, backend: str) -> tuple[int, int]:
    total, free = backends.get(backend).capacity()
    if free is None:
        free = total - allocated(s, backend)
    return total, free


def candidates(extra_specs: dict) -> list[str]:
    wanted = (extra_specs or {}).get("volume_backend_name")
    enabled = backends.enabled()
    if wanted:
        return [b for b in enabled if b == wanted]
    return enabled[:1] if enabled else []


def choose(s, extra_specs: dict, size: int) -> tuple[str | None, str | None]:
    """(backend, None), or (None, why not) when no backend has the free space now.

    A size no backend could ever hold, or a type naming no enabled backend, is 400 at once.
    """
    names = candidates(extra_specs)
    if not names:
        raise NoValidBackend(
            f"No valid backend was found: no enabled backend is named "
            f"{(extra_specs or {}).get('volume_backend_name')!r} (enabled: "
            f"{', '.join(backends.enabled()) or 'none'}).")
    spaces, down = {}, {}
    for n in names:
        try:
            spaces[n] = free_space(s, n)
        except exceptions.PocketstackError as error:  # e.g. Ceph unreachable
            down[n] = error.message
    if not spaces:
        return None, ("No valid backend was found: " + "; ".join(
            f"backend {n} is unavailable: {why}" for n, why in down.items()))
    if all(size > total for total, _ in spaces.values()):
        raise NoValidBackend(
            f"No valid backend was found: {size} GiB is larger than any backend "
            f"(largest: {max(t for t, _ in spaces.values())} GiB).")
    fitting = [n for n in names if spaces[n][1] >= size]
    if not fitting:
        return None, (f"No valid backend was found: not enough free space for {size} GiB "
                      f"(free: " + ", ".join(f"{n} {spaces[n][1]} GiB" for n in names) + ").")
    return max(fitting, key=lambda n: spaces[n][1]), None
