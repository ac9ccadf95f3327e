"""ComputeManager: the RPC endpoint of one compute host (topic compute, server = host).
Split by concern: build.py (seed steps 13-28), power.py (server actions), delete.py
(terminate, events, interfaces), periodic.py (heartbeat, sync, recovery), volumes.py
(block devices, volume attach/detach)."""
from __future__ import annotations

import os

from pocketstack.common.timeutils import utcnow
from pocketstack.compute import hostdb
from pocketstack.compute.conductor.rpcapi import ConductorAPI
from pocketstack.compute.manager.build import BuildMixin
from pocketstack.compute.manager.delete import DeleteMixin
from pocketstack.compute.manager.events import EventRegistry
from pocketstack.compute.manager.interfaces import InterfaceMixin
from pocketstack.compute.manager.lifecycle import LifecycleMixin
from pocketstack.compute.manager.migrate import MigrateMixin
from pocketstack.compute.manager.periodic import PeriodicMixin
from pocketstack.compute.manager.power import PowerMixin
from pocketstack.compute.manager.resize import ResizeMixin
from pocketstack.compute.manager.volumes import VolumeMixin


class ComputeManager(BuildMixin, PowerMixin, DeleteMixin, PeriodicMixin, ResizeMixin,
                     InterfaceMixin, VolumeMixin, LifecycleMixin, MigrateMixin):
    def __init__(self, host: str, driver, data_dir: str, image_cache: str | None = None):
        self.host = host
        self.driver = driver
        self.events = EventRegistry()
        self.conductor = ConductorAPI()
        self.db = hostdb.for_host(host)  # the cloud's state: in-process or via the conductor
        # One cache per host; simulated hosts of one process share one (compute/fleet.py).
        self.image_cache = image_cache or os.path.join(data_dir, "compute", host, "_base")
        os.makedirs(self.image_cache, exist_ok=True)
        self._failed_builds = 0
        # What this host's database rows older than this were waiting for (an attach
        # call, say) went with the process before it (periodic.init_host).
        self.started_at = utcnow()
