"""Scheduler RPC client (topic ``scheduler``).

1.0 - select_destinations(spec, instance_uuids) -> [{host, node, node_id, alternates}]
"""
from pocketstack.common import rpc


class SchedulerAPI:
    _client = None

    @property
    def client(self):
        self._client = rpc.current_client(self._client, "scheduler")
        return self._client

    def select_destinations(self, ctx, spec: dict, instance_uuids: list[str]) -> list[dict]:
        return self.client.call(ctx, "select_destinations", spec=spec,
                                instance_uuids=instance_uuids)
