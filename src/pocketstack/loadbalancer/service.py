"""Start-up of the load balancer service: the provider driver's worker (main process
only: API worker processes leave their changes to its periodic look)."""
from __future__ import annotations

from pocketstack.common import config
from pocketstack.loadbalancer import driver


def start(cloud) -> list:
    if getattr(cloud, "api_worker", False):
        return []
    plane = None
    if config.CONF.loadbalancer.data_plane == "haproxy":
        from pocketstack.loadbalancer import dataplane

        plane = dataplane.HAProxyPlane(cloud.data_dir)
    return [driver.Driver(plane).start()]
