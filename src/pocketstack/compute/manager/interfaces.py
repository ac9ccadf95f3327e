"""Interfaces on the host: attach (create or bind a port, wait for network-vif-plugged,
hot-plug), detach (unplug, delete the port we created or unbind the user's), and the
network service's events — network-vif-plugged wakes a waiting build or attach,
network-vif-deleted (someone deleted an attached port) drops it from the server,
network-changed refreshes the server's addresses."""
from __future__ import annotations

import logging
import threading
import weakref
from types import SimpleNamespace

from pocketstack.common import config, exceptions
from pocketstack.compute import hostdb, instances, states
from pocketstack.compute.manager import network
from pocketstack.compute.trace import Step

LOG = logging.getLogger(__name__)


class InterfaceAttachFailed(exceptions.PocketstackError):
    code = 500


def _describe(error) -> str:
    return getattr(error, "message", None) or str(error) or type(error).__name__


class InterfaceMixin:
    _iface_locks: weakref.WeakValueDictionary | None = None
    _iface_guard = threading.Lock()

    def _iface_lock(self, uuid: str) -> threading.Lock:
        """One attach/detach at a time per server (as nova's instance lock); the event
        registry also holds one waiter per server. A lock lives while someone holds or
        waits for it: a dict of every server ever attached to would only grow."""
        with self._iface_guard:
            if self._iface_locks is None:
                self._iface_locks = weakref.WeakValueDictionary()
            return self._iface_locks.setdefault(uuid, threading.Lock())

    def attach_interface(self, ctx, instance_uuid: str, request: dict) -> dict:
        with self._iface_lock(instance_uuid):
            return self._attach(ctx, instance_uuid, request)

    def _attach(self, ctx, instance_uuid, request):
        inst = self.db.call("load_instance", instance_uuid=instance_uuid)
        if inst is None or inst.deleted:
            raise instances.not_found(instance_uuid)
        shim = SimpleNamespace(uuid=inst.uuid, availability_zone=inst.availability_zone,
                               requested_networks=[request], request_spec=inst.request_spec,
                               project_id=inst.project_id)
        step = Step(ctx, instance_uuid, "compute_attach_interface", "compute", self.host)
        vifs: list = []
        waiter = self.events.prepare(instance_uuid)
        try:
            network.allocate(ctx, shim, self.host, vifs, is_live=self._is_live)
            timeout = config.CONF.compute.vif_plugging_timeout
            if timeout > 0:
                missing = waiter.wait({v["port_id"] for v in vifs}, timeout)
                if missing and config.CONF.compute.vif_plugging_is_fatal:
                    raise InterfaceAttachFailed(
                        f"network-vif-plugged not received for {', '.join(sorted(missing))} "
                        f"within {timeout:g}s")
            vifs[:] = network.refresh(ctx, vifs)
            self.driver.attach_interface({"uuid": instance_uuid}, vifs[0])
            self.db.call("add_vifs", instance_uuid=instance_uuid, vifs=vifs, request=request,
                         events=[hostdb.event(step.done(
                             detail=f"{vifs[0]['port_id']} on {vifs[0]['network_name']}"))],
                         request_id=ctx.request_id)
        except Exception as error:  # noqa: BLE001 - undo, then tell the caller
            LOG.info("Attaching an interface to %s failed: %s", instance_uuid, error)
            undone = network.deallocate(ctx, "-", vifs, [request["port_id"]]
                                        if request.get("port_id") else [])
            step.fail(f"{_describe(error)}; undone: {'; '.join(undone) or 'nothing'}")
            self.db.call("finish_action", instance_uuid=instance_uuid, values=None,
                         expect_task=None, events=[hostdb.event(step)],
                         request_id=ctx.request_id, result="Error")
            if isinstance(error, exceptions.PocketstackError) and error.code < 500:
                raise
            raise InterfaceAttachFailed(f"Failed to attach network adapter device to "
                                        f"{instance_uuid}: {_describe(error)}") from None
        finally:
            waiter.close()
        return vifs[0]

    def detach_interface(self, ctx, instance_uuid: str, port_id: str) -> None:
        with self._iface_lock(instance_uuid):
            inst = self.db.call("load_instance", instance_uuid=instance_uuid)
            if inst is None or inst.deleted:
                return
            vif = next((v for v in inst.network_info or [] if v["port_id"] == port_id), None)
            step = Step(ctx, instance_uuid, "compute_detach_interface", "compute", self.host)
            if vif is None:
                self.db.call("finish_action", instance_uuid=instance_uuid, values=None,
                             expect_task=None, request_id=None, events=[hostdb.event(
                                 step.done(detail=f"{port_id} was already detached"))])
                return
            try:
                self.driver.detach_interface({"uuid": instance_uuid}, vif)
            except Exception as error:  # noqa: BLE001 - the port stays attached
                self.db.call("finish_action", instance_uuid=instance_uuid, values=None,
                             expect_task=None, events=[hostdb.event(step.fail(error))],
                             request_id=ctx.request_id, result="Error")
                return
            done = network.deallocate(ctx, "-", [vif], [] if vif.get("created") else [port_id])
            self._forget_port(instance_uuid, port_id, [step.done(detail="; ".join(done))],
                              ctx.request_id)

    def _forget_port(self, instance_uuid: str, port_id: str, steps, request_id=None) -> bool:
        return self.db.call("forget_port", instance_uuid=instance_uuid, port_id=port_id,
                            events=[hostdb.event(step) for step in steps],
                            request_id=request_id)

    def external_instance_event(self, ctx, events: list[dict]):
        for event in events:
            uuid, name = event["server_uuid"], event["name"]
            tag, status = event.get("tag") or "", event.get("status", "completed")
            self.events.deliver(uuid, name, tag, status)
            try:
                if name == "network-vif-deleted" and tag:
                    self._vif_deleted(ctx, uuid, tag)
                elif name == "network-changed":
                    self._network_changed(ctx, uuid)
                elif name == "volume-extended" and tag and status == "completed":
                    self.extend_attached_volume(ctx, uuid, tag)
            except Exception:  # noqa: BLE001 - an event must never break the host
                LOG.exception("Handling %s for %s failed", name, uuid)

    def _change_applied(self, uuid: str) -> bool:
        """Forget ``uuid`` in the changes not applied yet; whether it was there."""
        with self._iface_guard:
            if uuid not in (self._changes_unapplied or ()):
                return False
            self._changes_unapplied.discard(uuid)
            return True

    def catch_up_network_change(self, ctx, uuid: str) -> None:
        """A build has just written its network info: a network-changed that came while
        it had none (a floating IP put on a port it had just made, after it read the
        floating IPs) is applied now, not lost."""
        if self._change_applied(uuid):
            self._network_changed(ctx, uuid)

    def _vif_deleted(self, ctx, uuid: str, port_id: str) -> None:
        """A port of the server was deleted in the network service: unplug and forget it
        (nova's _process_instance_vif_deleted_event)."""
        with self._iface_lock(uuid):
            # A few columns, not the row: every port a delete removes sends this event.
            inst = self.db.call("peek_instance", instance_uuid=uuid,
                                columns=["deleted", "task_state", "network_info"])
            if inst is None or inst.deleted or inst.task_state == states.DELETING or not any(
                    v["port_id"] == port_id for v in inst.network_info or []):
                # Deleting: the delete removed the port itself and the whole server goes
                # (its cleanup step says so); forgetting the port first only raced it.
                return
            try:
                self.driver.detach_interface({"uuid": uuid}, {"port_id": port_id})
            except Exception:  # noqa: BLE001 - the port is gone either way
                pass
            step = Step(ctx, uuid, "compute_network_vif_deleted", "compute", self.host,
                        f"{port_id} was deleted in the network service")
            self._forget_port(uuid, port_id, [step.done()])

    # Servers a network-changed came for while they had no network info to refresh: a
    # build that had not written its own yet (see catch_up_network_change).
    _changes_unapplied: set | None = None

    def _network_changed(self, ctx, uuid: str) -> None:
        with self._iface_guard:  # noted first: the build may write its info just now
            if self._changes_unapplied is None:
                self._changes_unapplied = set()
            self._changes_unapplied.add(uuid)
        inst = self.db.call("load_instance", instance_uuid=uuid)
        if inst is None or inst.deleted or not inst.network_info:
            if inst is None or inst.deleted or inst.vm_state != states.BUILDING:
                self._change_applied(uuid)
            return
        self._change_applied(uuid)
        fresh = network.refresh(ctx, list(inst.network_info))
        self.db.call("refresh_vifs", instance_uuid=uuid, fresh=fresh)
