"""The simulated hypervisor: guests are entries in memory with a power state and a console
log; every operation takes [fake] *_delay seconds and consults the fault-injection rules
(control/faults.py), so tests can make a spawn fail on one host or a reboot hang."""
from __future__ import annotations

import threading
import time

from pocketstack.common import config
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import states
from pocketstack.compute.virt.driver import ComputeDriver
from pocketstack.control import faults


class FakeDriver(ComputeDriver):
    def __init__(self, host: str):
        self.host = host
        self.guests: dict[str, dict] = {}
        # Guests that left this host for a resize, kept until confirm (dropped) or revert
        # (restored): nova keeps the source disk the same way.
        self.migrated: dict[str, dict] = {}
        self.lock = threading.Lock()

    def _op(self, operation: str, delay: float) -> None:
        faults.check(self.host, operation)
        if delay:
            time.sleep(delay)

    def hold_transition(self) -> None:
        delay = config.CONF.fake.transition_delay
        if delay:
            time.sleep(delay)

    def _log(self, uuid: str, line: str) -> None:
        guest = self.guests.get(uuid)
        if guest is not None:
            guest["console"].append(f"[{utcnow():%Y-%m-%d %H:%M:%S}] {line}")
            del guest["console"][:-500]

    def _set(self, uuid: str, power: int, line: str) -> None:
        with self.lock:
            if uuid not in self.guests:
                from pocketstack.common.exceptions import NotFound

                raise NotFound(f"Guest {uuid} is not on {self.host}.")
            self.guests[uuid]["power"] = power
            self._log(uuid, line)

    def init_host(self, host, instances):
        with self.lock:
            for inst in instances:
                if inst["power_state"] in (states.RUNNING, states.PAUSED_POWER,
                                           states.SUSPENDED_POWER, states.SHUTDOWN):
                    self.guests[inst["uuid"]] = {"power": inst["power_state"], "console": []}
                    self._log(inst["uuid"], "adopted after a restart of the compute service")

    def resources(self):
        conf = config.CONF.fake
        return {"vcpus": conf.vcpus, "memory_mb": conf.memory_mb, "local_gb": conf.local_gb,
                "hypervisor_type": "fake", "hypervisor_version": 1000}

    def spawn(self, instance, image_meta, network_info, block_device_info):
        self._op("spawn", config.CONF.fake.spawn_delay)
        name = instance.get("hostname") or instance["uuid"]
        with self.lock:
            self.guests[instance["uuid"]] = {"power": states.RUNNING, "console": []}
            self._log(instance["uuid"], f"Booting {image_meta.get('name') or 'image'} on "
                                        f"{self.host} ({instance['flavor']['vcpus']} vCPU, "
                                        f"{instance['flavor']['memory_mb']} MB)")
            volumes = {}
            for bdm in (block_device_info or {}).get("block_device_mapping") or []:
                describe_connection(bdm["connection_info"])
                volumes[bdm["mount_device"]] = bdm["connection_info"]
                self._log(instance["uuid"], f"{bdm['mount_device']}: volume "
                          f"{bdm['connection_info']['data'].get('volume_id')}"
                          f"{' (boot)' if bdm.get('boot_index') == 0 else ''}")
            self.guests[instance["uuid"]]["volumes"] = volumes
            for vif in network_info:
                for ip in vif.get("fixed_ips", []):
                    self._log(instance["uuid"],
                              f"eth{network_info.index(vif)}: {vif.get('mac_address')} "
                              f"{ip['ip_address']}")
            self._log(instance["uuid"], f"{name} login:")

    def destroy(self, instance):
        self._op("destroy", config.CONF.fake.destroy_delay)
        with self.lock:
            self.guests.pop(instance["uuid"], None)

    def power_off(self, instance):
        self._op("power_off", config.CONF.fake.power_delay)
        self._set(instance["uuid"], states.SHUTDOWN, "reboot: Power down")

    def power_on(self, instance):
        self._op("power_on", config.CONF.fake.power_delay)
        self._set(instance["uuid"], states.RUNNING, "Booting (power on)")

    def reboot(self, instance, reboot_type):
        self._op("reboot", config.CONF.fake.power_delay)
        self._set(instance["uuid"], states.RUNNING, f"Restarting system ({reboot_type})")

    def pause(self, instance):
        self._op("pause", config.CONF.fake.power_delay)
        self._set(instance["uuid"], states.PAUSED_POWER, "paused")

    def unpause(self, instance):
        self._op("unpause", config.CONF.fake.power_delay)
        self._set(instance["uuid"], states.RUNNING, "unpaused")

    def suspend(self, instance):
        self._op("suspend", config.CONF.fake.power_delay)
        self._set(instance["uuid"], states.SUSPENDED_POWER, "suspended to disk")

    def resume(self, instance):
        self._op("resume", config.CONF.fake.power_delay)
        self._set(instance["uuid"], states.RUNNING, "resumed")

    def snapshot(self, instance):
        self._op("snapshot", config.CONF.fake.power_delay)
        # A qcow2 header first: the image service checks data against its disk_format.
        from pocketstack.common.image_formats import qcow2_header

        return qcow2_header(1 << 30) + f"fake snapshot of {instance['uuid']}\n".encode()

    # --- interfaces ----------------------------------------------------------------------

    def attach_interface(self, instance, vif):
        self._op("attach_interface", 0)
        ips = ", ".join(ip["ip_address"] for ip in vif.get("fixed_ips", []))
        with self.lock:
            self._log(instance["uuid"], f"hot-plugged {vif.get('mac_address')} {ips}")

    def detach_interface(self, instance, vif):
        self._op("detach_interface", 0)
        with self.lock:
            self._log(instance["uuid"], f"unplugged {vif.get('mac_address') or vif['port_id']}")

    # --- volumes -----------------------------------------------------------------------

    def attach_volume(self, instance, connection_info, mountpoint):
        self._op("attach_volume", 0)
        where = describe_connection(connection_info)
        with self.lock:
            guest = self.guests.get(instance["uuid"])
            if guest is None:
                from pocketstack.common.exceptions import NotFound

                raise NotFound(f"Guest {instance['uuid']} is not on {self.host}.")
            guest.setdefault("volumes", {})[mountpoint] = connection_info
            self._log(instance["uuid"], f"{mountpoint}: volume "
                                        f"{connection_info['data'].get('volume_id')} attached"
                                        f" ({where})")

    def detach_volume(self, instance, connection_info, mountpoint):
        self._op("detach_volume", 0)
        with self.lock:
            guest = self.guests.get(instance["uuid"])
            if guest is not None:
                guest.get("volumes", {}).pop(mountpoint, None)
                self._log(instance["uuid"], f"{mountpoint}: volume detached")

    def extend_volume(self, instance, connection_info, mountpoint, new_size):
        self._op("extend_volume", 0)
        with self.lock:
            if mountpoint not in (self.guests.get(instance["uuid"]) or {}).get("volumes", {}):
                from pocketstack.common.exceptions import NotFound

                raise NotFound(f"No volume at {mountpoint} of {instance['uuid']}.")
            self._log(instance["uuid"], f"{mountpoint}: volume grew to {new_size} bytes")

    def attached_volumes(self, instance_uuid: str) -> dict:
        """{mountpoint: connection_info} of the guest (what tests look at)."""
        guest = self.guests.get(instance_uuid)
        return dict((guest or {}).get("volumes") or {})

    # --- resize ------------------------------------------------------------------------

    def prep_resize(self, instance):
        self._op("prep_resize", 0)

    def migrate_disk_and_power_off(self, instance, new_flavor):
        self._op("migrate_disk", config.CONF.fake.power_delay)
        if new_flavor["root_gb"] < instance["flavor"]["root_gb"]:
            # libvirt refuses to shrink a disk; nothing has moved yet
            from pocketstack.common.exceptions import BadRequest

            raise BadRequest("Unable to resize disk down.")
        with self.lock:
            guest = self.guests.pop(instance["uuid"], None)
            if guest is not None:
                self.migrated[instance["uuid"]] = guest
                guest["power"] = states.SHUTDOWN
                guest["console"].append(f"[{utcnow():%Y-%m-%d %H:%M:%S}] reboot: Power down "
                                        f"(resize)")

    def finish_migration(self, instance, network_info, power_on):
        self._op("finish_migration", config.CONF.fake.spawn_delay)
        with self.lock:
            self.guests[instance["uuid"]] = {
                "power": states.RUNNING if power_on else states.SHUTDOWN, "console": []}
            self._log(instance["uuid"], f"Resized on {self.host} to "
                                        f"{instance['flavor']['name']} "
                                        f"({instance['flavor']['vcpus']} vCPU, "
                                        f"{instance['flavor']['memory_mb']} MB)")

    def confirm_migration(self, instance):
        with self.lock:
            self.migrated.pop(instance["uuid"], None)

    def finish_revert_migration(self, instance, network_info, power_on):
        self._op("finish_revert_migration", 0)
        with self.lock:
            guest = self.migrated.pop(instance["uuid"], None) or {"console": []}
            guest["power"] = states.RUNNING if power_on else states.SHUTDOWN
            self.guests[instance["uuid"]] = guest
            self._log(instance["uuid"], f"Resize reverted on {self.host}")

    def get_power_state(self, instance_uuid):
        guest = self.guests.get(instance_uuid)
        return None if guest is None else guest["power"]

    def list_instance_uuids(self):
        return list(self.guests)

    def get_console_output(self, instance_uuid):
        guest = self.guests.get(instance_uuid)
        return "" if guest is None else "\n".join(guest["console"]) + "\n"


def describe_connection(connection_info: dict) -> str:
    """What a real host would open for ``connection_info`` (a file or block device, an
    RBD image, an iSCSI LUN); a connection it could not open is refused here too."""
    from pocketstack.common.exceptions import BadRequest

    kind = (connection_info or {}).get("driver_volume_type")
    data = (connection_info or {}).get("data") or {}
    if kind in ("local", "file") and data.get("device_path"):
        return f"{kind} {data['device_path']}"
    if kind == "rbd" and data.get("name") and data.get("hosts"):
        return f"rbd {data['name']} via {','.join(data['hosts'])}"
    if kind == "iscsi" and data.get("target_iqn") and data.get("target_portal"):
        where = f"iscsi {data['target_portal']} {data['target_iqn']} " \
                f"lun {data.get('target_lun') or 0}"
        if data.get("auth_method") is None:
            return where
        # a real host logs in with them: without both, the target would refuse it
        if data["auth_method"] != "CHAP" or not (data.get("auth_username")
                                                 and data.get("auth_password")):
            raise BadRequest(f"iscsi auth_method {data['auth_method']!r} needs CHAP with "
                             "auth_username and auth_password.")
        return f"{where} as CHAP user {data['auth_username']}"
    raise BadRequest(f"Unsupported volume connection {kind!r} (or its data is incomplete).")
