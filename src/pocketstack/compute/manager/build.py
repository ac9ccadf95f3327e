"""build_and_run_instance: seed steps 13-28 on the chosen host.

networking → block_device_mapping → spawning → ACTIVE, each transition a compare-and-swap
(instances.update) carrying the trace events of the step that just ended; a server
without volumes goes from networking straight to spawning. A failure
anywhere undoes what this attempt allocated (ports, guest, claim) and hands the server
back to the conductor for a reschedule; a lost race (the server was deleted or timed out
meanwhile) undoes the same and stops quietly.
"""
from __future__ import annotations

import logging

from pocketstack.common import config, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import block_devices, hostdb, states
from pocketstack.clients.image import ImageClient
from pocketstack.compute.manager import network, volumes
from pocketstack.compute.manager.errors import Superseded
from pocketstack.compute.trace import Step
from pocketstack.control import faults

LOG = logging.getLogger(__name__)


class BuildMixin:
    def build_and_run_instance(self, ctx, instance_uuid: str, attempt: int, node=None):
        if faults.match(self.host, "build_message") is not None:
            LOG.warning("Dropping build of %s on %s (fault injection)", instance_uuid, self.host)
            return
        # The load and the first step (scheduling -> networking) in one call: through the
        # conductor, one round trip fewer per build.
        inst, advanced = self.db.call("begin_build", instance_uuid=instance_uuid,
                                      attempt=attempt) or (None, False)
        if inst is None or inst.deleted or inst.attempt != attempt:
            if inst is None or inst.deleted:
                self.db.call("release_own_claim", hosts=[self.host],
                             instance_uuid=instance_uuid)
            return
        whole = Step(ctx, instance_uuid, "compute__do_build_and_run_instance", "compute",
                     self.host)
        vifs: list = []
        held: list = []  # volumes and attachments this attempt made (manager/volumes.py)
        try:
            if not advanced:  # its task moved on meanwhile (deleted, timed out)
                raise Superseded()
            self._build(ctx, inst, attempt, vifs, whole, held)
        except Superseded:
            # Deleted, or rescheduled after its build deadline while we worked: the next
            # attempt may hold ports, volumes and a claim under this server by now.
            undone = self._undo(ctx, inst, vifs, release=True, only_host=self.host, held=held,
                                keep_ports=self._is_live(instance_uuid))
            self._record(instance_uuid, whole.fail(
                "superseded: the server was deleted or rescheduled; undone: "
                + ("; ".join(undone) or "nothing")))
        except Exception as error:  # noqa: BLE001 - every failure is rescheduled or ERROR
            LOG.info("Build of %s failed on %s: %s", instance_uuid, self.host, error)
            # Fence before undoing everything the server holds: the conductor may have
            # rescheduled it meanwhile (build deadline), and the next attempt's ports,
            # attachments and claim are the server's too.
            if not self.db.call("take_over", instance_uuid=instance_uuid, attempt=attempt):
                undone = self._undo(ctx, inst, vifs, release=True, only_host=self.host,
                                    held=held, keep_ports=self._is_live(instance_uuid))
                self._record(instance_uuid, whole.fail(
                    f"{_describe(error)}; superseded meanwhile: undone: "
                    + ("; ".join(undone) or "nothing")))
                return
            attempt += 1
            # The ports stay the server's for the next attempt (floating IPs on them stay
            # too); the conductor frees them if none comes (ERROR).
            undone = self._undo(ctx, inst, vifs, release=True, held=held, keep_ports=True)
            cleanup = Step(ctx, instance_uuid, "compute_cleanup", "compute", self.host,
                           "; ".join(undone) or "nothing to undo").done()
            whole.fail(error)
            # A 4xx from a service we called is the request's fault, not this host's.
            host_fault = not (isinstance(error, exceptions.PocketstackError)
                              and 400 <= error.code < 500)
            self._failed_builds += host_fault
            self.conductor.reschedule(ctx, instance_uuid, attempt, self.host,
                                      _describe(error), events=[whole, cleanup],
                                      host_fault=host_fault)

    def _advance(self, inst, attempt, frm, to, events=(), **values) -> None:
        if not self.db.call("advance_build", instance_uuid=inst.uuid,
                            values=dict(values, task_state=to), expect_task=frm,
                            attempt=attempt, events=[hostdb.event(e) for e in events]):
            raise Superseded()

    def _record(self, instance_uuid: str, *steps) -> None:
        """Trace events no state change carries (trace.record, through the host's db)."""
        self.db.call("record", instance_uuid=instance_uuid,
                     events=[hostdb.event(s) for s in steps])

    def _is_live(self, instance_uuid: str) -> bool:
        return self.db.call("is_live", instance_uuid=instance_uuid)

    def _build(self, ctx, inst, attempt, vifs, whole, held):
        uuid = inst.uuid
        # seed 19-21: image metadata (and data into this host's cache)
        step = Step(ctx, uuid, "compute_get_image", "compute", self.host)
        image_meta = self._image(ctx, inst)
        step.done(detail=f"{image_meta.get('name') or inst.image_ref or 'no image'}"
                         f"{' (cached)' if image_meta.get('_cached') else ''}")
        image_step = step  # stored with the next step's write (networking began already)

        # seed 22-24: ports, then wait for network-vif-plugged
        step = Step(ctx, uuid, "compute_allocate_network", "compute", self.host)
        waiter = self.events.prepare(uuid)
        try:
            faults.check(self.host, "allocate_network")
            # A later attempt (a reschedule, a build resumed after a restart) binds the
            # ports the server has already instead of making new ones.
            plugged = network.allocate(ctx, inst, self.host, vifs, reuse=attempt > 0,
                                       is_live=self._is_live)
            step.done(detail=", ".join(f"{v['port_id']} on {v['network_name'] or v['network_id']}"
                                       for v in vifs) or "no networks requested")
            wait = Step(ctx, uuid, "compute_wait_vif_plugged", "compute", self.host)
            self._wait_plugged(waiter, vifs, wait, plugged)
        except Exception as error:
            self._record(uuid, image_step, step.fail(error) if step.finish is None else step)
            raise
        finally:
            waiter.close()
        events = [image_step, step, wait]
        if vifs:
            # SLAAC addresses of a subnet added meanwhile, floating IPs: what the server
            # shows in its addresses.
            info = Step(ctx, uuid, "compute_refresh_network_info", "compute", self.host)
            vifs[:] = network.refresh(ctx, vifs, ports_fresh=True)
            events.append(info.done(detail=f"{len(vifs)} port(s)"))
        stage = states.NETWORKING
        has_volumes = bool(block_devices.volumes_of(
            (inst.request_spec or {}).get("block_device_mapping") or []))
        if has_volumes:
            self._advance(inst, attempt, states.NETWORKING, states.BLOCK_DEVICE_MAPPING,
                          events=events, network_info=list(vifs))
            self.catch_up_network_change(ctx, uuid)
            events, stage = [], states.BLOCK_DEVICE_MAPPING
        # else no volume to attach: from networking straight to spawning, one write fewer

        # seed 25-27: volumes created, waited for and attached; their connection_info
        # goes to the driver
        step = Step(ctx, uuid, "compute_prep_block_device", "compute", self.host)
        volume_steps: list = []
        try:
            faults.check(self.host, "prep_block_device")
            # The API wrote a mapping row per volume of the request, and nothing attaches
            # a volume to a server still building: no volume in the request, no rows.
            block_info = self._prep_block_devices(ctx, inst, held, volume_steps) \
                if has_volumes else None
        except Exception as error:
            self._record(uuid, *events, *[s.fail(error) if s.finish is None else s
                                          for s in volume_steps], step.fail(error))
            raise
        attached = (block_info or {}).get("block_device_mapping") or []
        local = "" if (inst.request_spec or {}).get("is_bfv") else "; local root disk"
        step.done(detail=f"{len(attached)} volume(s){local}")
        # The network info goes with the first write after networking (a later one would
        # undo what a network-changed wrote meanwhile).
        self._advance(inst, attempt, stage, states.SPAWNING,
                      events=events + volume_steps + [step],
                      **({"network_info": list(vifs)} if stage == states.NETWORKING else {}))
        if stage == states.NETWORKING:
            self.catch_up_network_change(ctx, uuid)

        # seed 28: the hypervisor
        step = Step(ctx, uuid, "compute_spawn", "compute", self.host)
        self.driver.spawn(driver_view(inst), image_meta, vifs, block_info)
        step.done(detail=f"{self.driver.__class__.__name__} on {self.host}")
        whole.done()
        # The guest is up: a success of this host's, whatever became of the server. Any
        # success clears the host's failed-build count; the count is in the database (the
        # conductor adds to it, and it outlives a restart), so it is cleared there: an
        # in-memory count that starts at 0 never cleared what an earlier run left. In the
        # commit of the server's ACTIVE, where an UPDATE that matches nothing (the usual
        # case) costs less than a read of its own.
        self._failed_builds = 0
        if not self.db.call("finish_build", instance_uuid=uuid, hosts=[self.host],
                            values={"vm_state": states.ACTIVE, "task_state": None,
                                    "power_state": states.RUNNING, "launched_at": utcnow(),
                                    "build_deadline": None, "build_token": None,
                                    "progress": 100},
                            attempt=attempt, events=[hostdb.event(step),
                                                     hostdb.event(whole)]):
            raise Superseded()

    def cache_images(self, ctx, image_ids: list[str]) -> None:
        """2.81's image precache (POST /os-aggregates/{id}/images): bring each image into
        this host's cache; as nova, an image that cannot be had is logged and skipped."""
        for image_id in image_ids:
            try:
                meta = ImageClient(ctx).get(image_id)
                if meta is None or meta.get("status") != "active":
                    LOG.info("Not caching image %s on %s: not found or not active",
                             image_id, self.host)
                    continue
                self.driver.cache_image(ctx, meta, self.image_cache)
            except exceptions.PocketstackError as error:
                LOG.info("Caching image %s on %s failed: %s", image_id, self.host, error)

    def _image(self, ctx, inst) -> dict:
        spec = inst.request_spec or {}
        if spec.get("is_bfv"):
            # The root disk is a volume: nothing to download (the boot volume's image
            # metadata travels in the request spec).
            return dict(spec.get("image") or {})
        if not inst.image_ref:
            return {}
        meta = spec.get("image") or {}
        if meta.get("id") == inst.image_ref:
            # As nova's compute: the image metadata the API validated travels in the
            # request spec; the image service is asked only for data not yet cached.
            meta = dict(meta, **(spec.get("image_properties") or {}), status="active")
        else:  # a rebuild onto another image
            meta = ImageClient(ctx).get(inst.image_ref)
            if meta is None:
                raise exceptions.NotFound(f"Image {inst.image_ref} could not be found.")
            if meta.get("status") != "active":
                raise exceptions.BadRequest(f"Image {inst.image_ref} is not active.")
        meta.setdefault("id", inst.image_ref)
        try:
            meta["_cached"] = self.driver.cache_image(ctx, meta, self.image_cache)
        except exceptions.PocketstackError as error:
            raise exceptions.PocketstackError(f"Downloading image failed: {error}") from None
        return meta

    def _wait_plugged(self, waiter, vifs, step, plugged=frozenset()) -> None:
        timeout = config.CONF.compute.vif_plugging_timeout
        tags = {v["port_id"] for v in vifs} - set(plugged)
        if not tags or timeout <= 0:
            step.done(detail="not waiting")
            return
        faults.check(self.host, "vif_plugged")
        missing = waiter.wait(tags, timeout)
        if missing and config.CONF.compute.vif_plugging_is_fatal:
            step.fail(f"network-vif-plugged not received for {', '.join(sorted(missing))} "
                      f"within {timeout:g}s")
            raise VifPlugTimeout(step.detail)
        step.done(detail=f"{len(tags) - len(missing)}/{len(tags)} network-vif-plugged")

    def _undo(self, ctx, inst, vifs, release: bool, only_host: str | None = None,
              held: list | None = None, keep_ports: bool = False) -> list[str]:
        """Destroy the guest, give back the ports, volumes and the claim; with
        ``only_host``, just those this host's attempt holds (network.deallocate,
        volumes.release, claims.release). ``keep_ports``: the server lives on in another
        attempt, which binds the same ports (nova keeps a rescheduled server's ports)."""
        done = []
        try:
            self.driver.destroy(driver_view(inst))
        except Exception as error:  # noqa: BLE001
            LOG.warning("Destroying guest %s failed: %s", inst.uuid, error)
        if not keep_ports:
            done += self._give_back_ports(ctx, inst, vifs, only_host)
        elif vifs:
            done.append(f"kept {len(vifs)} port(s) for the next attempt")
        try:
            done += volumes.release(ctx, inst.uuid, held, own_only=only_host is not None,
                                    hdb=self.db)
        except Exception as error:  # noqa: BLE001 - the rest of the cleanup must happen
            LOG.warning("Releasing the volumes of %s failed: %s", inst.uuid, error)
        if release and (self.db.call("release_own_claim", hosts=[self.host],
                                     instance_uuid=inst.uuid) if only_host else
                        self.db.call("release_claim", instance_uuid=inst.uuid,
                                     consumer=inst.uuid)):
            done.append(f"released claim on {self.host}")
        return done

    @staticmethod
    def _give_back_ports(ctx, inst, vifs, only_host: str | None) -> list[str]:
        user_ports = [r["port_id"] for r in (inst.requested_networks or [])
                      if isinstance(r, dict) and r.get("port_id")]
        requested = inst.requested_networks
        return network.deallocate(ctx, inst.uuid, vifs, user_ports,
                                  requested_networks_empty=not (isinstance(requested, list)
                                                                and requested),
                                  only_host=only_host)


class VifPlugTimeout(exceptions.PocketstackError):
    code = 500


def _describe(error: BaseException) -> str:
    return getattr(error, "message", None) or str(error) or type(error).__name__


def driver_view(inst) -> dict:
    """What drivers get: the fake one uses the first few, the libvirt one the rest (domain
    metadata, config drive)."""
    return {"uuid": inst.uuid, "hostname": inst.hostname, "flavor": inst.flavor,
            "power_state": inst.power_state, "image_ref": inst.image_ref,
            "display_name": inst.display_name, "project_id": inst.project_id,
            "user_id": inst.user_id, "created_at": inst.created_at,
            "config_drive": inst.config_drive, "user_data": inst.user_data,
            "key_name": inst.key_name, "key_data": inst.key_data,
            "metadata": dict(inst.metadata_ or {}), "launch_index": inst.launch_index,
            "availability_zone": inst.availability_zone,
            "network_info": list(inst.network_info or [])}
