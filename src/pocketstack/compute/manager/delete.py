"""terminate_instance on the host, external events, interface attach/detach."""
from __future__ import annotations

import logging

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import instances, states, trace
from pocketstack.compute.manager import network
from pocketstack.compute.models import Instance
from pocketstack.compute.scheduler import claims
from pocketstack.compute.trace import Step

LOG = logging.getLogger(__name__)


def finish_delete(ctx, inst, host: str | None, vifs=None, steps=(),
                  use_service_token: bool = False) -> None:
    """Release everything a server holds and mark it deleted. Idempotent: safe to run
    from the API (no host), the host, and a racing build cleanup."""
    user_ports = [r["port_id"] for r in (inst.requested_networks or [])
                  if isinstance(r, dict) and r.get("port_id")]
    step = Step(ctx, inst.uuid, "compute_cleanup", "compute" if host else "api", host)
    requested = inst.requested_networks
    done = network.deallocate(ctx, inst.uuid, vifs if vifs is not None else inst.network_info,
                              user_ports, use_service_token=use_service_token,
                              requested_networks_empty=not (isinstance(requested, list)
                                                            and requested))
    with db.transaction() as s:
        if claims.release(inst.uuid, session=s):
            done.append("released claim")
        from pocketstack.compute.resize import release_for_delete

        done += release_for_delete(s, inst.uuid)
        row = s.get(Instance, inst.uuid)
        if row is not None and not row.deleted:
            now = utcnow()
            row.deleted, row.deleted_at, row.terminated_at = True, now, now
            row.vm_state, row.task_state, row.power_state = states.DELETED, None, states.NOSTATE
            row.updated_at = now
        trace.store(s, list(steps) + [step.done(detail="; ".join(done) or "nothing held")])
        trace.finish_action(s, ctx.request_id, inst.uuid)


class DeleteMixin:
    def terminate_instance(self, ctx, instance_uuid: str):
        inst = instances.load(instance_uuid)
        if inst is None:
            return
        step = Step(ctx, instance_uuid, "compute_terminate_instance", "compute", self.host)
        try:
            self.driver.destroy({"uuid": inst.uuid})
            step.done()
        except Exception as error:  # noqa: BLE001 - the guest is gone for the user anyway
            step.fail(error)
        finish_delete(ctx, inst, self.host, steps=[step])

    def external_instance_event(self, ctx, events: list[dict]):
        for event in events:
            self.events.deliver(event["server_uuid"], event["name"], event.get("tag") or "",
                                event.get("status", "completed"))

    def attach_interface(self, ctx, instance_uuid: str, request: dict) -> dict:
        inst = instances.get(ctx, instance_uuid)
        vifs: list = []
        from types import SimpleNamespace

        shim = SimpleNamespace(uuid=inst.uuid, availability_zone=inst.availability_zone,
                               requested_networks=[request], request_spec=inst.request_spec)
        try:
            network.allocate(ctx, shim, self.host, vifs)
        except exceptions.PocketstackError:
            network.deallocate(ctx, inst.uuid, vifs, [request.get("port_id")] if
                               request.get("port_id") else [])
            raise
        vifs = network.refresh(ctx, vifs)
        with db.transaction() as s:
            row = s.get(Instance, instance_uuid)
            row.network_info = list(row.network_info or []) + vifs
            if request.get("port_id"):
                row.requested_networks = list(row.requested_networks or []) + [request] \
                    if isinstance(row.requested_networks, list) else [request]
        return vifs[0]

    def detach_interface(self, ctx, instance_uuid: str, port_id: str) -> None:
        inst = instances.get(ctx, instance_uuid)
        vif = next((v for v in inst.network_info or [] if v["port_id"] == port_id), None)
        if vif is None:
            raise exceptions.NotFound(f"Port {port_id} is not attached")
        network.deallocate(ctx, "-", [vif], [] if vif.get("created") else [port_id])
        with db.transaction() as s:
            row = s.get(Instance, instance_uuid)
            row.network_info = [v for v in row.network_info or [] if v["port_id"] != port_id]
