"""Conductor RPC client (topic ``conductor``).

1.0 - schedule_and_build_instances(instance_uuids), reschedule(instance_uuid, attempt,
      failed_host, reason, events), resize_instance(instance_uuid, flavor)
1.1 - reschedule(..., host_fault): False for a failure caused by the request (a 4xx from
      another service), which neither counts against the host nor is retried elsewhere
1.2 - host_db(host, op, args): a compute host's read or write of the cloud's state, by
      name (compute/hostdb.py), checked against the asking host
"""
from pocketstack.common import rpc


class ConductorAPI:
    _client = None

    @property
    def client(self):
        self._client = rpc.current_client(self._client, "conductor")
        return self._client

    def schedule_and_build_instances(self, ctx, instance_uuids: list[str]) -> None:
        self.client.cast(ctx, "schedule_and_build_instances", instance_uuids=instance_uuids)

    def reschedule(self, ctx, instance_uuid: str, attempt: int, failed_host: str | None,
                   reason: str, events=(), host_fault: bool = True) -> None:
        rows = [{"event": e.name, "service": e.service, "host": e.host,
                 "start": e.start.isoformat(), "finish": e.finish.isoformat() if e.finish else None,
                 "result": e.result, "detail": e.detail, "traceback": e.traceback}
                for e in events]
        self.client.cast(ctx, "reschedule", instance_uuid=instance_uuid, attempt=attempt,
                         failed_host=failed_host, reason=reason, events=rows,
                         host_fault=host_fault)

    def resize_instance(self, ctx, instance_uuid: str, flavor: dict) -> None:
        self.client.cast(ctx, "resize_instance", instance_uuid=instance_uuid, flavor=flavor)

    def host_db(self, ctx, host: str, op: str, args: dict, timeout: float | None = None):
        client = self.client.prepare(timeout=timeout) if timeout else self.client
        return client.call(ctx, "host_db", host=host, op=op, args=args)
