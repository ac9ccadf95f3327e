"""LibvirtDriver: real guests under libvirt/QEMU behind the ComputeDriver interface
(seed 001's ``spawn`` tree: _create_image → _create_configdrive → _get_guest_xml →
_create_domain_and_network → _wait_for_boot).

Each guest lives in ``<instances path>/<uuid>/``: ``disk`` (qcow2 overlay on the cached
base, or raw), ``disk.eph0``, ``disk.swap``, ``disk.config`` (config drive), ``console.log``
(the serial console) and ``libvirt.xml`` (the domain as defined). The domain's uuid is the
instance's; its ``<metadata>`` names the agent that owns it, so start-up reconciliation
and listings never touch another cloud's guests on a shared libvirtd.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import time
import uuid as uuidlib
import xml.etree.ElementTree as ET

from pocketstack.common import config, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import states
from pocketstack.compute.virt.driver import ComputeDriver
from pocketstack.compute.virt.libvirt import (host_netns, imagecache, iscsi_auth,
                                              volume_encryption)
from pocketstack.compute.virt.libvirt.disks import GuestDisks, rbd_backed
from pocketstack.compute.virt.libvirt.config import (Disk, GuestConfig, Interface, Metadata,
                                                     Port, device_xml, find_devices,
                                                     read_owner)
from pocketstack.compute.virt.libvirt.host import GuestError, Host
from pocketstack.compute.virt.libvirt.resize import ColdResize

LOG = logging.getLogger(__name__)

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
DEFAULT_CMDLINE = "root=/dev/vda console=tty0 console=ttyS0"
DETACH_TIMEOUT = 30.0  # seconds a guest gets to release a hot-unplugged device


class LibvirtDriver(GuestDisks, ColdResize, ComputeDriver):
    def __init__(self, host: str, data_dir: str):
        conf = config.CONF.libvirt
        self.host_name = host
        self.instances_path = os.path.abspath(
            conf.instances_path or os.path.join(data_dir, "compute", host, "instances"))
        os.makedirs(self.instances_path, exist_ok=True)
        self.cache = imagecache.ImageCache(os.path.join(self.instances_path, "_base"))
        self.host = Host(conf.connection_uri)
        self.lv = self.host.libvirt

    # --- helpers -----------------------------------------------------------------------

    def _dir(self, uuid: str) -> str:
        if not UUID_RE.match(uuid):
            raise exceptions.BadRequest(f"Invalid instance uuid {uuid!r}.")
        return os.path.join(self.instances_path, uuid)

    def _owned(self, dom) -> bool:
        try:
            return read_owner(dom.XMLDesc(0)) == (self.host_name, self.instances_path)
        except self.lv.libvirtError:
            return False

    def _dom(self, uuid: str):
        dom = self.host.lookup(uuid)
        if dom is None or not self._owned(dom):
            raise exceptions.NotFound(f"Guest {uuid} is not on {self.host_name}.")
        return dom

    def _call(self, what: str, func, *args):
        try:
            return func(*args)
        except self.lv.libvirtError as error:
            raise GuestError(f"{what} failed: {error.get_error_message()}") from None

    def _active(self, dom) -> bool:
        try:
            return bool(dom.isActive())
        except self.lv.libvirtError:
            return False

    def _wait(self, dom, lv_states, timeout: float) -> bool:
        return self.host.wait_for_state(dom, lv_states, timeout)

    # --- host --------------------------------------------------------------------------

    def init_host(self, host, instances):
        """Reconcile after a crash: guests and instance dirs of this agent that no
        instance of this host owns any more are removed."""
        known = {inst["uuid"] for inst in instances}
        for dom in self.host.conn().listAllDomains(0):
            uuid = dom.UUIDString()
            if uuid not in known and self._owned(dom):
                LOG.warning("Removing leftover guest %s (%s)", uuid, dom.name())
                self._remove_domain(dom)
        for name in os.listdir(self.instances_path):
            path = os.path.join(self.instances_path, name)
            if UUID_RE.match(name.removesuffix("_resize")) and \
                    name.removesuffix("_resize") not in known and self._dir_is_mine(path):
                LOG.warning("Removing leftover instance dir %s", name)
                shutil.rmtree(path, ignore_errors=True)

    def _dir_is_mine(self, path: str) -> bool:
        """Whether an instance dir is this agent's: its domain XML names this host (an
        instances path shared by several hosts holds the others' guests too), or it has
        none (a spawn that crashed before writing it). A kept ``<uuid>_resize`` beside the
        guest's dir of another host is a cold migration to that host not yet confirmed:
        its revert needs it."""
        owner = _dir_owner(path)
        if path.endswith("_resize"):
            moved_to = _dir_owner(path.removesuffix("_resize"))
            if moved_to is not None and moved_to[0] != self.host_name:
                return False
        return owner is None or owner[0] == self.host_name

    def resources(self):
        info = self.host.conn().getInfo()  # [model, memory MiB, cpus, …]
        disk = os.statvfs(self.instances_path)
        local_gb = max(1, disk.f_frsize * disk.f_blocks // imagecache.GiB)
        if rbd_backed():
            try:  # the disks live in the cluster: its size, as nova reports it
                local_gb = self._rbd().cluster_gb()
            except exceptions.PocketstackError as error:
                LOG.warning("Cannot read the Ceph cluster's size: %s", error)
        return {"vcpus": int(info[2]), "memory_mb": int(info[1]), "local_gb": local_gb,
                "hypervisor_type": "QEMU", "hypervisor_version": self._version(),
                "shared_storage": self._storage_id()}

    def _storage_id(self) -> str:
        """The name of the storage under instances_path ([libvirt] shared_storage_id, or
        the one in the path's marker file: the first host to start there makes it, at
        once, so hosts sharing the directory all read the same name and hosts with a
        local directory each have their own)."""
        if config.CONF.libvirt.shared_storage_id:
            return config.CONF.libvirt.shared_storage_id
        marker = os.path.join(self.instances_path, ".pocketstack-storage-id")
        if not os.path.exists(marker):
            tmp = f"{marker}.{self.host_name}.{os.getpid()}"
            with open(tmp, "w") as f:
                f.write(str(uuidlib.uuid4()))
            try:
                os.link(tmp, marker)  # fails if another host made it first
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        with open(marker) as f:
            return f.read().strip()

    def _version(self) -> int:
        try:
            return int(self.host.conn().getVersion())
        except self.lv.libvirtError:
            return 0

    # --- spawn (seed 28) ---------------------------------------------------------------

    def spawn(self, instance, image_meta, network_info, block_device_info):
        uuid = instance["uuid"]
        source = instance.get("evacuated_from")
        if source and self.take_over(instance, source):
            return
        inst_dir = self._dir(uuid)
        os.makedirs(inst_dir, exist_ok=True)
        guest = self._guest_config(instance, image_meta, network_info, block_device_info,
                                   inst_dir)
        xml = guest.to_xml()
        with open(os.path.join(inst_dir, "libvirt.xml"), "w") as f:
            f.write(xml)
        if config.CONF.libvirt.host_netns:
            host_netns.remember(inst_dir, {i.target_dev: i.bridge for i in guest.interfaces})
        conn = self.host.conn()
        dom = self._call("Defining the guest", conn.defineXML, xml)
        self._start(dom)

    def _start(self, dom) -> None:
        """Started paused, resumed once its taps are on their bridges (nova starts paused
        until network-vif-plugged; the manager has waited for that before spawn)."""
        if "<encryption" in dom.XMLDesc(0):  # LUKS volumes: their secrets first
            volume_encryption.restore(self.host, (self.host_name, self.instances_path),
                                      dom.XMLDesc(0))
        paused = True
        try:
            dom.createWithFlags(self.lv.VIR_DOMAIN_START_PAUSED)
        except self.lv.libvirtError as error:
            if error.get_error_code() not in (self.lv.VIR_ERR_INVALID_ARG,
                                              self.lv.VIR_ERR_NO_SUPPORT):
                raise GuestError(f"Starting the guest failed: "
                                 f"{error.get_error_message()}") from None
            paused = False  # a driver without paused starts (libvirt's test driver)
            self._call("Starting the guest", dom.create)
        netns = config.CONF.libvirt.host_netns
        if netns:
            host_netns.bring_home(netns, host_netns.remembered(self._dir(dom.UUIDString())))
        if paused:
            self._call("Resuming the guest", dom.resume)
        if not self._wait(dom, (self.lv.VIR_DOMAIN_RUNNING,), config.CONF.libvirt.boot_timeout):
            raise GuestError(f"The guest did not reach RUNNING within "
                             f"{config.CONF.libvirt.boot_timeout:g}s.")

    def _guest_config(self, instance, image_meta, network_info, block_device_info,
                      inst_dir) -> GuestConfig:
        conf = config.CONF.libvirt
        flavor = instance["flavor"]
        bdms = sorted((block_device_info or {}).get("block_device_mapping") or [],
                      key=lambda b: (b.get("boot_index") is None or b["boot_index"] < 0,
                                     b.get("boot_index") or 0))
        boot_volume = bdms and bdms[0].get("boot_index") == 0
        disks: list[Disk] = []
        kernel = initrd = cmdline = None
        names = iter(f"vd{c}" for c in "abcdefghijklmnopqrstuvwxyz")
        if boot_volume:
            disks.append(self._volume_disk(bdms.pop(0)["connection_info"], next(names)))
        elif image_meta.get("id"):
            disks.append(self._root_disk(instance, image_meta, inst_dir, next(names)))
            if image_meta.get("kernel_id"):
                kernel = self.cache.path(image_meta["kernel_id"])
                initrd = (self.cache.path(image_meta["ramdisk_id"])
                          if image_meta.get("ramdisk_id") else None)
                cmdline = image_meta.get("os_command_line") or DEFAULT_CMDLINE
        if int(flavor.get("ephemeral_gb") or 0) > 0:
            disks.append(self._ephemeral_disk(instance, inst_dir, next(names)))
        if int(flavor.get("swap") or 0) > 0:
            path = os.path.join(inst_dir, "disk.swap")
            disks.append(Disk(next(names), path,
                              driver_type=imagecache.create_swap_disk(path, int(flavor["swap"]))))
        for bdm in bdms:
            target = (bdm.get("mount_device") or "").rsplit("/", 1)[-1] or next(names)
            disks.append(self._volume_disk(bdm["connection_info"], target))
        if _wants_config_drive(instance):
            path = os.path.join(inst_dir, "disk.config")
            if build_config_drive(instance, network_info, path, self.host_name):
                disks.append(Disk("hdd", path, driver_type="raw", device="cdrom", bus="ide",
                                  readonly=True))
        return GuestConfig(
            uuid=instance["uuid"], memory_mb=int(flavor["memory_mb"]),
            vcpus=int(flavor["vcpus"]), virt_type=conf.virt_type, kernel=kernel,
            initrd=initrd, cmdline=cmdline, disks=disks,
            interfaces=[vif_interface(vif) for vif in network_info or []],
            console_log=os.path.join(inst_dir, "console.log"),
            metadata=self._metadata(instance, image_meta, network_info, boot_volume))

    def _metadata(self, instance, image_meta, network_info, boot_volume) -> Metadata:
        flavor = instance["flavor"]
        created = instance.get("created_at") or utcnow()
        if not isinstance(created, str):
            created = created.strftime("%Y-%m-%d %H:%M:%S")
        return Metadata(
            name=instance.get("display_name") or instance.get("hostname") or instance["uuid"],
            creation_time=created.replace("T", " ")[:19], flavor_name=flavor.get("name", ""),
            memory_mb=int(flavor["memory_mb"]), disk_gb=int(flavor.get("root_gb") or 0),
            swap_mb=int(flavor.get("swap") or 0),
            ephemeral_gb=int(flavor.get("ephemeral_gb") or 0), vcpus=int(flavor["vcpus"]),
            user_id=instance.get("user_id") or "", user_name=instance.get("user_name")
            or instance.get("user_id") or "", project_id=instance.get("project_id") or "",
            project_name=instance.get("project_name") or instance.get("project_id") or "",
            root_image=None if boot_volume else image_meta.get("id"),
            ports=[Port(v["port_id"], [ip["ip_address"] for ip in v.get("fixed_ips", [])])
                   for v in network_info or []],
            owner_host=self.host_name, owner_path=self.instances_path)

    # --- destroy -------------------------------------------------------------------------

    def destroy(self, instance):
        uuid = instance["uuid"]
        dom = self.host.lookup(uuid)
        if dom is not None and self._owned(dom):
            chap_secrets = iscsi_auth.secrets_of(ET.fromstring(dom.XMLDesc(0)))
            self._remove_domain(dom)
            self.host.release_unused_secrets(chap_secrets)
        shutil.rmtree(self._dir(uuid), ignore_errors=True)
        if not instance.get("keep_resize_source"):  # a revert still needs it
            shutil.rmtree(self._kept(uuid), ignore_errors=True)
            self._remove_disks(uuid)

    def _remove_domain(self, dom) -> None:
        """Destroy and undefine the guest; the LUKS secrets of its volumes go with it
        unless another guest uses them (whatever removes it: a delete, a resize, the
        start-up reconciliation)."""
        try:
            luks_secrets = volume_encryption.secrets_of(ET.fromstring(dom.XMLDesc(0)))
        except self.lv.libvirtError:
            luks_secrets = {}
        self._undefine(dom)
        self.host.release_unused_secrets(luks_secrets)

    def _undefine(self, dom) -> None:
        if self._active(dom):
            try:
                dom.destroy()
            except self.lv.libvirtError as error:
                if self._active(dom):
                    raise GuestError(f"Destroying the guest failed: "
                                     f"{error.get_error_message()}") from None
        try:
            dom.undefineFlags(self.lv.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE)
        except self.lv.libvirtError:
            try:
                dom.undefine()
            except self.lv.libvirtError as error:
                if error.get_error_code() != self.lv.VIR_ERR_NO_DOMAIN:
                    raise GuestError(f"Undefining the guest failed: "
                                     f"{error.get_error_message()}") from None

    # --- power ---------------------------------------------------------------------------

    def _clean_shutdown(self, dom) -> bool:
        """ACPI power button, then wait for the guest to power off."""
        if self.host.state(dom) != self.lv.VIR_DOMAIN_RUNNING:
            return False
        try:
            dom.shutdown()
        except self.lv.libvirtError:
            return False
        return self._wait(dom, (self.lv.VIR_DOMAIN_SHUTOFF,),
                          config.CONF.libvirt.shutdown_timeout)

    def power_off(self, instance):
        dom = self._dom(instance["uuid"])
        if self._active(dom) and not self._clean_shutdown(dom) and self._active(dom):
            self._call("Powering off the guest", dom.destroy)

    def power_on(self, instance):
        dom = self._dom(instance["uuid"])
        if not self._active(dom):
            self._start(dom)
        elif self.host.state(dom) == self.lv.VIR_DOMAIN_PAUSED:
            self._call("Resuming the guest", dom.resume)

    def reboot(self, instance, reboot_type):
        """SOFT: ACPI shutdown and start again, HARD after [libvirt] shutdown_timeout (as
        nova); HARD: destroy and start."""
        dom = self._dom(instance["uuid"])
        if reboot_type != "HARD" and self._clean_shutdown(dom):
            self._start(dom)
            return
        if self._active(dom):
            self._call("Destroying the guest", dom.destroy)
        self._start(dom)

    def pause(self, instance):
        self._call("Pausing the guest", self._dom(instance["uuid"]).suspend)

    def unpause(self, instance):
        self._call("Unpausing the guest", self._dom(instance["uuid"]).resume)

    def suspend(self, instance):
        """Managed save: memory to disk, QEMU exits; resume restores it."""
        self._call("Suspending the guest", self._dom(instance["uuid"]).managedSave, 0)

    def resume(self, instance):
        dom = self._dom(instance["uuid"])
        if not self._active(dom):
            self._start(dom)

    def get_power_state(self, instance_uuid):
        dom = self.host.lookup(instance_uuid)
        if dom is None or not self._owned(dom):
            return None
        lv = self.lv
        state = self.host.state(dom)
        if state in (lv.VIR_DOMAIN_RUNNING, lv.VIR_DOMAIN_BLOCKED, lv.VIR_DOMAIN_SHUTDOWN):
            return states.RUNNING
        if state == lv.VIR_DOMAIN_PAUSED:
            return states.PAUSED_POWER
        if state == lv.VIR_DOMAIN_SHUTOFF:
            try:
                saved = dom.hasManagedSaveImage(0)
            except lv.libvirtError:
                saved = False
            return states.SUSPENDED_POWER if saved else states.SHUTDOWN
        if state == lv.VIR_DOMAIN_CRASHED:
            return states.CRASHED
        if state == lv.VIR_DOMAIN_PMSUSPENDED:
            return states.SUSPENDED_POWER
        return states.NOSTATE

    def list_instance_uuids(self):
        return [dom.UUIDString() for dom in self.host.conn().listAllDomains(0)
                if self._owned(dom)]

    def get_console_output(self, instance_uuid):
        path = os.path.join(self._dir(instance_uuid), "console.log")
        limit = config.CONF.libvirt.console_log_bytes
        try:
            with open(path, "rb") as f:
                f.seek(max(0, os.path.getsize(path) - limit))
                return f.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    # --- hot-plug --------------------------------------------------------------------------

    def _live_flags(self, dom) -> int:
        flags = self.lv.VIR_DOMAIN_AFFECT_CONFIG
        if self._active(dom):
            flags |= self.lv.VIR_DOMAIN_AFFECT_LIVE
        return flags

    def attach_volume(self, instance, connection_info, mountpoint):
        dom = self._dom(instance["uuid"])
        target = (mountpoint or "").rsplit("/", 1)[-1]
        if not target:
            raise exceptions.BadRequest("A device name is needed to attach a volume.")
        disk = self._volume_disk(connection_info, target)
        self._call("Attaching the volume", dom.attachDeviceFlags, device_xml(disk),
                   self._live_flags(dom))

    def detach_volume(self, instance, connection_info, mountpoint):
        dom = self._dom(instance["uuid"])
        target = (mountpoint or "").rsplit("/", 1)[-1]
        element = self._device_element(dom, "disk", lambda d: d.find("target") is not None
                                       and d.find("target").get("dev") == target)
        if element is None:
            return  # already gone
        self._call("Detaching the volume", dom.detachDeviceFlags, element,
                   self._live_flags(dom))
        self._wait_detached(dom, "disk", target)
        self.host.release_unused_secrets(iscsi_auth.secrets_of(ET.fromstring(element)))
        self.host.release_unused_secrets(
            volume_encryption.secrets_of(ET.fromstring(element)))

    def extend_volume(self, instance, connection_info, mountpoint, new_size):
        """QEMU re-reads the disk's size (a running guest's kernel sees vdX grow)."""
        dom = self._dom(instance["uuid"])
        if not dom.isActive():
            return  # a stopped guest reads the size when it starts
        target = (mountpoint or "").rsplit("/", 1)[-1]
        encrypted = self._device_element(
            dom, "disk", lambda d: d.find("target") is not None
            and d.find("target").get("dev") == target and d.find("encryption") is not None)
        if encrypted is not None:
            new_size -= self._luks_payload_offset(connection_info)
        self._call("Growing the volume's disk", dom.blockResize, target, new_size,
                   self.lv.VIR_DOMAIN_BLOCK_RESIZE_BYTES)

    @staticmethod
    def _luks_payload_offset(connection_info) -> int:
        """Where a LUKS volume's payload starts (its header's size): QEMU grows the LUKS
        layer to the size it is given plus this, so the guest gets the volume's new size
        less it and the volume is not grown past its size (nova's
        _resize_attached_encrypted_volume). Only a volume the host opens as a path."""
        import json

        data = (connection_info or {}).get("data") or {}
        path = data.get("device_path")
        if (connection_info or {}).get("driver_volume_type") != "local" or not path:
            raise GuestError("Growing an attached encrypted volume is done for local "
                             "volumes only: detach it and attach it again to see its size.")
        info = json.loads(imagecache.qemu_img("info", "-U", "--output=json", path))
        try:
            return int(info["format-specific"]["data"]["payload-offset"])
        except (KeyError, TypeError, ValueError):
            raise GuestError(f"Volume {data.get('volume_id')} is not LUKS on its "
                             "backend.") from None

    def attach_interface(self, instance, vif):
        dom = self._dom(instance["uuid"])
        iface = vif_interface(vif)
        netns = config.CONF.libvirt.host_netns
        if netns:
            host_netns.add(self._dir(instance["uuid"]), iface.target_dev, iface.bridge)
        self._call("Attaching the interface", dom.attachDeviceFlags, device_xml(iface),
                   self._live_flags(dom))
        if netns and self._active(dom):
            host_netns.bring_home(netns, {iface.target_dev: iface.bridge})

    def detach_interface(self, instance, vif):
        dom = self._dom(instance["uuid"])
        mac = (vif.get("mac_address") or "").lower()
        tap = tap_name(vif["port_id"])
        element = self._device_element(
            dom, "interface",
            lambda i: (i.find("mac") is not None and i.find("mac").get("address") == mac)
            or (i.find("target") is not None and i.find("target").get("dev") == tap))
        if element is None:
            return
        self._call("Detaching the interface", dom.detachDeviceFlags, element,
                   self._live_flags(dom))
        self._wait_detached(dom, "interface", mac)
        if config.CONF.libvirt.host_netns:
            host_netns.forget(self._dir(instance["uuid"]), tap)

    def _wait_detached(self, dom, kind: str, key: str) -> None:
        """A live unplug completes when the guest lets the device go (ACPI hot-unplug);
        until then it is still attached, and the caller must not say otherwise."""
        deadline = time.monotonic() + DETACH_TIMEOUT
        while True:
            devices = find_devices(dom.XMLDesc(0))
            if key not in (devices["disks"] if kind == "disk" else devices["macs"]):
                return
            if time.monotonic() > deadline:
                raise GuestError(f"The guest did not release {kind} {key} within "
                                 f"{DETACH_TIMEOUT:g}s.")
            time.sleep(0.2)

    def _device_element(self, dom, tag: str, match) -> str | None:
        root = ET.fromstring(dom.XMLDesc(0))
        for device in root.findall(f"devices/{tag}"):
            if match(device):
                return ET.tostring(device, encoding="unicode")
        return None

    def devices(self, instance_uuid: str) -> dict:
        """{"disks": {dev: source}, "macs": {mac: tap}} of the guest (tests, tools)."""
        return find_devices(self._dom(instance_uuid).XMLDesc(0))


def _dir_owner(path: str) -> tuple[str, str] | None:
    """(host, instances path) the domain XML in an instance dir names, if any."""
    try:
        with open(os.path.join(path, "libvirt.xml")) as f:
            return read_owner(f.read())
    except OSError:
        return None


def tap_name(port_id: str) -> str:
    return ("tap" + port_id)[:14]


def bridge_name(vif: dict) -> str:
    details = vif.get("vif_details") or {}
    return details.get("bridge_name") or ("brq" + vif["network_id"])[:14]


def vif_interface(vif: dict) -> Interface:
    return Interface(mac=vif["mac_address"], bridge=bridge_name(vif),
                     target_dev=tap_name(vif["port_id"]), mtu=vif.get("mtu"),
                     bare_tap=bool(config.CONF.libvirt.host_netns))


def _wants_config_drive(instance: dict) -> bool:
    force = getattr(config.CONF, "force_config_drive", False)
    return bool(force) or str(instance.get("config_drive") or "").lower() in ("true", "1", "yes")


def build_config_drive(instance: dict, network_info: list, path: str, host: str) -> bool:
    """The config drive ISO (label config-2) from the metadata package, what the server's
    row adds read as ``host`` reads it (compute/hostdb.py: through the conductor on a host
    without the database); False when that package is not installed in this build."""
    try:
        from pocketstack.compute.metadata import configdrive
    except ImportError:
        LOG.warning("Config drive requested for %s but pocketstack.compute.metadata is "
                    "unavailable; the guest gets the metadata service only",
                    instance["uuid"])
        return False
    from pocketstack.compute import hostdb

    host_db = hostdb.for_host(host)
    configdrive.build_config_drive(
        instance, network_info, path,
        load=lambda uuid: host_db.call("metadata_instance", instance_uuid=uuid))
    return True
