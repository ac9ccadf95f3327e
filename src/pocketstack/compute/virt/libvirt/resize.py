"""Cold resize and cold migration of a libvirt guest (the LibvirtDriver's resize methods),
and the take-over of an evacuated guest's disks.

As nova's libvirt driver with shared instance storage: the source powers the guest off and
keeps its directory as <uuid>_resize (its disks and its domain XML as it stood, hot-plugged
devices included); the destination — the same host, or another host whose instances path
is the same shared directory (``[libvirt] instances_path`` on a filesystem every host
mounts, as the one-machine lab's hosts share theirs) — makes the new guest from copies
grown to the new flavor, owned by itself; confirm drops the kept one on the source and
revert brings it back there. A destination that does not see the guest's directory in its
instances path refuses in prep_resize, before anything moves (nova would copy the disks
over ssh; pocketstack does not log in to other machines). RBD disks (images_type = rbd)
stay in the cluster: a snapshot keeps them for a revert, as nova's rbd backend does;
volumes stay where they are.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

from pocketstack.common import exceptions
from pocketstack.compute.virt.libvirt import imagecache
from pocketstack.compute.virt.libvirt.disks import rbd_backed
from pocketstack.compute.virt.libvirt.host import GuestError


class ColdResize:
    """Mixed into LibvirtDriver: uses its _dir, _dom, _call, _start, _owned,
    _remove_domain, power_off, host and lv."""

    def _kept(self, uuid: str) -> str:
        return self._dir(uuid) + "_resize"

    def migrate_disk_and_power_off(self, instance, new_flavor):
        uuid, old = instance["uuid"], instance["flavor"]
        for key, what in (("root_gb", "disk"), ("ephemeral_gb", "ephemeral disk")):
            if int(new_flavor.get(key) or 0) < int(old.get(key) or 0):
                raise exceptions.BadRequest(f"Unable to resize {what} down.")
        if (int(new_flavor.get("ephemeral_gb") or 0) and not int(old.get("ephemeral_gb") or 0)
                or int(new_flavor.get("swap") or 0) != int(old.get("swap") or 0)):
            raise exceptions.BadRequest("Adding an ephemeral disk or changing the swap "
                                        "size is not supported by resize on libvirt hosts.")
        dom = self._dom(uuid)
        if not os.path.isdir(self._dir(uuid)):
            raise GuestError(f"The guest's directory is not in {self.instances_path}.")
        self.power_off(instance)
        self._rbd_resize_step(uuid, "snapshot")
        xml = self._call("Reading the guest", dom.XMLDesc, self.lv.VIR_DOMAIN_XML_INACTIVE)
        kept = self._kept(uuid)
        shutil.rmtree(kept, ignore_errors=True)
        os.rename(self._dir(uuid), kept)
        with open(os.path.join(kept, "libvirt.xml"), "w") as f:
            f.write(xml)  # as it stands now: hot-plugged volumes and ports included
        self._remove_domain(dom)

    def prep_resize(self, instance):
        """On the destination, before the source powers the guest off: a guest of another
        host can come here only if its directory is in this host's instances path (shared
        instance storage, what nova's marker-file check finds out)."""
        source = instance.get("source_host")
        if source and source != self.host_name and not self._on_shared_storage(instance):
            raise GuestError(self._not_shared(source))

    def _on_shared_storage(self, instance) -> bool:
        uuid = instance["uuid"]
        return any(os.path.isfile(os.path.join(d, "libvirt.xml"))
                   for d in (self._dir(uuid), self._kept(uuid)))

    def _not_shared(self, source: str) -> str:
        return (f"The guest's directory is not in {self.host_name}'s instances path "
                f"{self.instances_path}: moving a libvirt guest from {source} to "
                f"{self.host_name} needs shared instance storage (the same [libvirt] "
                f"instances_path on a filesystem both hosts mount).")

    def finish_migration(self, instance, network_info, power_on):
        uuid, flavor = instance["uuid"], instance["flavor"]
        kept = self._kept(uuid)
        if not os.path.isdir(kept):
            source = instance.get("source_host")
            raise GuestError(self._not_shared(source) if source and source != self.host_name
                             else f"The guest's disks are not on {self.host_name}: moving "
                                  f"a libvirt guest this way is not supported.")
        inst_dir = self._dir(uuid)
        shutil.rmtree(inst_dir, ignore_errors=True)
        os.makedirs(inst_dir)
        for name in ("disk", "disk.eph0", "disk.swap", "disk.config", "console.log",
                     "taps.json"):
            if os.path.exists(os.path.join(kept, name)):
                # a qcow2 overlay copies in no time; raw disks stay sparse
                subprocess.run(["cp", "--sparse=always", os.path.join(kept, name),
                                os.path.join(inst_dir, name)], check=True,
                               capture_output=True)
        for name, size_gb in (("disk", flavor.get("root_gb")),
                              ("disk.eph0", flavor.get("ephemeral_gb"))):
            path = os.path.join(inst_dir, name)
            size = int(size_gb or 0) * imagecache.GiB
            info = imagecache.image_info(path) if size and os.path.exists(path) else {}
            if info and int(info.get("virtual-size") or 0) < size:
                imagecache.qemu_img("resize", "-q", "-f", info["format"], path, str(size))
        self._rbd_resize_step(uuid, "grow", flavor)
        with open(os.path.join(kept, "libvirt.xml")) as f:
            xml = owned_xml(resized_xml(f.read(), flavor), self.host_name,
                            self.instances_path)
        with open(os.path.join(inst_dir, "libvirt.xml"), "w") as f:
            f.write(xml)
        self._ceph_secrets_of(xml)
        dom = self._call("Defining the guest", self.host.conn().defineXML, xml)
        if power_on:
            self._start(dom)

    def _ceph_secrets_of(self, xml: str) -> None:
        """The libvirt secrets of the guest's Ceph disks and volumes, on this host's
        libvirtd (a guest from another host may name secrets this one has not made)."""
        for auth in ET.fromstring(xml).findall("devices/disk/auth"):
            secret = auth.find("secret")
            if secret is not None and secret.get("type") == "ceph" and secret.get("uuid"):
                self._secrets().ensure(secret.get("uuid"), auth.get("username"))

    def take_over(self, instance, source: str) -> bool:
        """An evacuation to this host: with shared instance storage the guest's directory
        is here — its disks, config drive and domain XML (volumes and ports included) — and
        the guest is defined again as this host's and started, its disks kept (nova's
        rebuild on shared storage). False when the directory is not here (the caller
        rebuilds the guest from its image; RBD disks are kept by that rebuild)."""
        uuid = instance["uuid"]
        path = os.path.join(self._dir(uuid), "libvirt.xml")
        if not os.path.isfile(path):
            return False
        dom = self.host.lookup(uuid)
        if dom is not None and not self._owned(dom):
            # one libvirtd for several hosts (a lab): the dead host's definition is still
            # there; a guest still running there is not dead, and is left alone
            if self._active(dom):
                raise GuestError(f"The guest still runs under libvirt as {source}'s: "
                                 f"its compute service is down, its QEMU is not.")
            self._remove_domain(dom)
        with open(path) as f:
            xml = owned_xml(f.read(), self.host_name, self.instances_path)
        with open(path + ".tmp", "w") as f:
            f.write(xml)
        os.replace(path + ".tmp", path)
        self._ceph_secrets_of(xml)
        dom = self._call("Defining the guest", self.host.conn().defineXML, xml)
        self._start(dom)
        return True

    def confirm_migration(self, instance):
        shutil.rmtree(self._kept(instance["uuid"]), ignore_errors=True)
        self._rbd_resize_step(instance["uuid"], "drop")

    def _rbd_resize_step(self, uuid: str, step: str, flavor: dict | None = None) -> None:
        """RBD disks stay where they are (the cluster is shared): as nova, a snapshot
        keeps the old disks for a revert, the new flavor grows them in place."""
        from pocketstack.compute.virt.libvirt.rbd import RESIZE_SNAP

        if not rbd_backed():
            return
        rbd = self._rbd()
        sizes = {rbd.name(uuid): (flavor or {}).get("root_gb"),
                 rbd.name(uuid, "disk.eph0"): (flavor or {}).get("ephemeral_gb")}
        for name, size_gb in sizes.items():
            if not rbd.exists(name):
                continue
            with rbd.rbd.Image(rbd.ioctx(), name) as image:
                snaps = {snap["name"] for snap in image.list_snaps()}
                if step == "snapshot" and RESIZE_SNAP not in snaps:
                    image.create_snap(RESIZE_SNAP)
                elif step == "grow" and int(size_gb or 0) * imagecache.GiB > image.size():
                    image.resize(int(size_gb) * imagecache.GiB)
                elif step == "revert" and RESIZE_SNAP in snaps:
                    image.rollback_to_snap(RESIZE_SNAP)  # its data and its size
                    image.remove_snap(RESIZE_SNAP)
                elif step == "drop" and RESIZE_SNAP in snaps:
                    image.remove_snap(RESIZE_SNAP)

    def finish_revert_migration(self, instance, network_info, power_on):
        uuid = instance["uuid"]
        kept = self._kept(uuid)
        if not os.path.isdir(kept):
            raise GuestError(f"The guest's old disks are gone from {self.host_name}.")
        dom = self.host.lookup(uuid)
        if dom is not None and self._owned(dom):
            self._remove_domain(dom)  # the resized guest, if the destination left it
        shutil.rmtree(self._dir(uuid), ignore_errors=True)
        os.rename(kept, self._dir(uuid))
        self._rbd_resize_step(uuid, "revert")
        with open(os.path.join(self._dir(uuid), "libvirt.xml")) as f:
            dom = self._call("Defining the guest", self.host.conn().defineXML, f.read())
        if power_on:
            self._start(dom)



def owned_xml(xml: str, host: str, instances_path: str) -> str:
    """The domain XML owned by the compute agent of ``host`` (its metadata's owner)."""
    from pocketstack.compute.virt.libvirt.config import POCKETSTACK_NS

    root = ET.fromstring(xml)
    owner = root.find(f"metadata/{{{POCKETSTACK_NS}}}owner")
    if owner is None:
        raise GuestError("The guest's domain XML names no owner.")
    owner.set("host", host)
    owner.set("path", instances_path)
    return ET.tostring(root, encoding="unicode")


def resized_xml(xml: str, flavor: dict) -> str:
    """The domain XML with the flavor's memory and vCPUs (and nova's flavor block)."""
    from pocketstack.compute.virt.libvirt.config import NOVA_NS

    root = ET.fromstring(xml)
    kib = str(int(flavor["memory_mb"]) * 1024)
    for tag in ("memory", "currentMemory"):
        node = root.find(tag)
        if node is not None:
            node.text, node.attrib = kib, {"unit": "KiB"}
    vcpu = root.find("vcpu")
    vcpu.text = str(int(flavor["vcpus"]))
    vcpu.attrib.pop("current", None)
    block = root.find(f"metadata/{{{NOVA_NS}}}instance/{{{NOVA_NS}}}flavor")
    if block is not None:
        block.set("name", flavor.get("name", ""))
        for tag, value in (("memory", flavor["memory_mb"]), ("disk", flavor.get("root_gb")),
                           ("swap", flavor.get("swap")),
                           ("ephemeral", flavor.get("ephemeral_gb")),
                           ("vcpus", flavor["vcpus"])):
            node = block.find(f"{{{NOVA_NS}}}{tag}")
            if node is not None:
                node.text = str(int(value or 0))
    return ET.tostring(root, encoding="unicode")
