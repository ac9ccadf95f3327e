"""Start-up of the load balancer service: the provider driver's worker (main process
only: API worker processes leave their changes to its periodic look)."""
from __future__ import annotations

from pocketstack.loadbalancer import driver


def start(cloud) -> list:
    if getattr(cloud, "api_worker", False):
        return []
    return [driver.Driver(cloud.data_dir).start()]
