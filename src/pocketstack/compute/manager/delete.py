"""terminate_instance on the host (interfaces and external events: interfaces.py)."""
from __future__ import annotations

import logging


from pocketstack.compute import hostdb
from pocketstack.compute.manager import network, volumes
from pocketstack.compute.trace import Step

LOG = logging.getLogger(__name__)


def finish_delete(ctx, inst, host: str | None, vifs=None, steps=(),
                  use_service_token: bool = False, hdb=None) -> None:
    """Release everything a server holds and mark it deleted. Idempotent: safe to run
    from the API (no host), the host, and a racing build cleanup. ``hdb``: how the
    caller reaches the cloud's state (compute/hostdb.py; in-process when not given)."""
    hdb = hdb or hostdb.Direct(host)
    user_ports = [r["port_id"] for r in (inst.requested_networks or [])
                  if isinstance(r, dict) and r.get("port_id")]
    step = Step(ctx, inst.uuid, "compute_cleanup", "compute" if host else "api", host)
    requested = inst.requested_networks
    done = network.deallocate(ctx, inst.uuid, vifs if vifs is not None else inst.network_info,
                              user_ports, use_service_token=use_service_token,
                              requested_networks_empty=not (isinstance(requested, list)
                                                            and requested))
    # Every attachment goes, and the volumes marked delete_on_termination.
    done += volumes.release_for_delete(ctx, inst.uuid, use_service_token=use_service_token,
                                       hdb=hdb)
    hdb.call("finish_delete", instance_uuid=inst.uuid,
             events=[hostdb.event(s) for s in steps], request_id=ctx.request_id,
             cleanup=dict(hostdb.event(step), done=done))


class DeleteMixin:
    def terminate_instance(self, ctx, instance_uuid: str):
        # What finish_delete uses, not the whole row.
        inst = self.db.call("peek_instance", instance_uuid=instance_uuid,
                            columns=["uuid", "requested_networks", "network_info"])
        if inst is None:
            return
        step = Step(ctx, instance_uuid, "compute_terminate_instance", "compute", self.host)
        try:
            self.driver.destroy({"uuid": inst.uuid})
            step.done()
        except Exception as error:  # noqa: BLE001 - the guest is gone for the user anyway
            step.fail(error)
        finish_delete(ctx, inst, self.host, steps=[step], hdb=self.db)
