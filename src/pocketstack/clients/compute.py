"""Nova's API as the other services call it: neutron's external events (seed step 24's
network-vif-plugged), and whether a server exists (cinder's clean-up of attachments)."""
from __future__ import annotations

from pocketstack.clients.base import Client
from pocketstack.common import exceptions

ANY_STATUS = range(100, 600)


class ComputeClient(Client):
    base_path = "/compute/v2.1"

    def external_events(self, events: list[dict], timeout: float = 10.0,
                        microversion: str | None = None):
        """POST os-server-external-events; the response whatever its status (the caller
        tells a server that is gone from a compute that is absent). ``microversion`` for
        an event name newer than 2.1 (volume-reimaged: 2.93)."""
        headers = {"OpenStack-API-Version": f"compute {microversion}"} if microversion \
            else None
        return self.request("POST", "/os-server-external-events", json={"events": events},
                            ok=ANY_STATUS, timeout=timeout, headers=headers)

    def server_exists(self, server_id: str) -> bool:
        """False only when compute answers 404 (no such server, or deleted)."""
        try:
            self.request("GET", f"/servers/{server_id}", ok=(200,))
            return True
        except exceptions.NotFound:
            return False
