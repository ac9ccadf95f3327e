"""The guest configuration as a small typed model, rendered to libvirt domain XML with
xml.etree (nova's _get_guest_config → LibvirtConfigGuest.to_xml, seed 001 step 28).

Only what pocketstack's guests use: direct kernel boot or disk boot, virtio disks (file,
block, or RBD/iSCSI over the network), a config-drive cdrom, bridge interfaces with their
tap name, MAC and MTU, a serial console written to a file (the console-log API reads it)
and nova's ``<metadata>`` block (flavor, owner, root image, ports) plus one pocketstack
element that marks which compute host owns the domain, so several clouds can share one
libvirtd without touching each other's guests.
"""
from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

NOVA_NS = "http://openstack.org/xmlns/libvirt/nova/1.1"
POCKETSTACK_NS = "https://pocketstack.dev/xmlns/libvirt/1.0"
ET.register_namespace("nova", NOVA_NS)
ET.register_namespace("pocketstack", POCKETSTACK_NS)


def domain_name(instance_uuid: str) -> str:
    """nova's ``instance-%08x``; nova formats its integer row id, pocketstack (UUID keys)
    the first 32 bits of the uuid, so the name is stable across restarts and hosts."""
    return "instance-%08x" % int(instance_uuid.replace("-", "")[:8], 16)


@dataclasses.dataclass
class NetworkSource:
    """A disk QEMU opens itself over the network (nova's LibvirtConfigGuestDisk with
    source_type network): an RBD image or an iSCSI LUN."""
    protocol: str                    # rbd | iscsi
    name: str                        # pool/image, or iqn/lun
    hosts: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    auth_username: str | None = None
    secret_type: str = "ceph"        # ceph | iscsi
    secret_uuid: str | None = None


@dataclasses.dataclass
class Disk:
    target: str                      # vda, vdb, hdd …
    source: str                      # path of the file or block device; network: its name
    source_type: str = "file"        # file | block | network
    driver_type: str = "qcow2"       # qcow2 | raw
    device: str = "disk"             # disk | cdrom
    bus: str = "virtio"              # virtio | ide
    readonly: bool = False
    serial: str | None = None        # the volume id, as nova sets it
    network: NetworkSource | None = None
    cache: str | None = None         # writeback for RBD, as nova
    discard: str | None = None       # unmap: thin RBD images give freed blocks back
    encryption_secret: str | None = None  # uuid of the LUKS passphrase secret (QEMU decrypts)

    def element(self) -> ET.Element:
        disk = ET.Element("disk", type=self.source_type, device=self.device)
        driver = ET.SubElement(disk, "driver", name="qemu", type=self.driver_type)
        if self.cache:
            driver.set("cache", self.cache)
        if self.discard:
            driver.set("discard", self.discard)
        if self.network is not None:
            net = self.network
            source = ET.SubElement(disk, "source", protocol=net.protocol, name=net.name)
            for host, port in net.hosts:
                ET.SubElement(source, "host", name=host, port=str(port))
            if net.auth_username:
                auth = ET.SubElement(disk, "auth", username=net.auth_username)
                ET.SubElement(auth, "secret", type=net.secret_type, uuid=net.secret_uuid)
        else:
            ET.SubElement(disk, "source", {"file" if self.source_type == "file" else "dev":
                                           self.source})
        ET.SubElement(disk, "target", dev=self.target, bus=self.bus)
        if self.encryption_secret:
            encryption = ET.SubElement(disk, "encryption", format="luks")
            ET.SubElement(encryption, "secret", type="passphrase", uuid=self.encryption_secret)
        if self.readonly:
            ET.SubElement(disk, "readonly")
        if self.serial:
            ET.SubElement(disk, "serial").text = self.serial
        return disk


@dataclasses.dataclass
class Interface:
    mac: str
    bridge: str
    target_dev: str                  # tap + port id[:11], as nova and neutron name it
    mtu: int | None = None
    model: str = "virtio"
    bare_tap: bool = False           # type='ethernet': the driver plugs it ([libvirt] host_netns)

    def element(self) -> ET.Element:
        iface = ET.Element("interface", type="ethernet" if self.bare_tap else "bridge")
        ET.SubElement(iface, "mac", address=self.mac)
        ET.SubElement(iface, "model", type=self.model)
        if not self.bare_tap:
            ET.SubElement(iface, "source", bridge=self.bridge)
        ET.SubElement(iface, "target", dev=self.target_dev)
        if self.mtu:
            ET.SubElement(iface, "mtu", size=str(self.mtu))
        return iface


@dataclasses.dataclass
class Port:
    uuid: str
    ips: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Metadata:
    """nova's <nova:instance> block, plus the owning host for pocketstack."""
    name: str
    creation_time: str               # "YYYY-MM-DD HH:MM:SS"
    flavor_name: str
    memory_mb: int
    disk_gb: int
    swap_mb: int
    ephemeral_gb: int
    vcpus: int
    user_id: str
    user_name: str
    project_id: str
    project_name: str
    root_image: str | None           # image id, None when booted from a volume
    ports: list[Port] = dataclasses.field(default_factory=list)
    owner_host: str = ""
    owner_path: str = ""             # the instances dir of the owning compute agent
    version: str = "0.1.0"

    def element(self) -> ET.Element:
        meta = ET.Element("metadata")
        inst = ET.SubElement(meta, f"{{{NOVA_NS}}}instance")

        def nova(parent, tag, text=None, **attrs):
            node = ET.SubElement(parent, f"{{{NOVA_NS}}}{tag}", attrs)
            if text is not None:
                node.text = str(text)
            return node

        nova(inst, "package", version=self.version)
        nova(inst, "name", self.name)
        nova(inst, "creationTime", self.creation_time)
        flavor = nova(inst, "flavor", name=self.flavor_name)
        for tag, value in (("memory", self.memory_mb), ("disk", self.disk_gb),
                           ("swap", self.swap_mb), ("ephemeral", self.ephemeral_gb),
                           ("vcpus", self.vcpus)):
            nova(flavor, tag, value)
        owner = nova(inst, "owner")
        nova(owner, "user", self.user_name, uuid=self.user_id)
        nova(owner, "project", self.project_name, uuid=self.project_id)
        if self.root_image:
            nova(inst, "root", type="image", uuid=self.root_image)
        ports = nova(inst, "ports")
        for port in self.ports:
            node = nova(ports, "port", uuid=port.uuid)
            for ip in port.ips:
                nova(node, "ip", type="fixed", address=ip,
                     ipVersion="6" if ":" in ip else "4")
        ET.SubElement(meta, f"{{{POCKETSTACK_NS}}}owner", host=self.owner_host,
                      path=self.owner_path)
        return meta


@dataclasses.dataclass
class GuestConfig:
    uuid: str
    memory_mb: int
    vcpus: int
    virt_type: str = "qemu"          # qemu (software emulation) | kvm
    kernel: str | None = None        # direct kernel boot (image kernel_id/ramdisk_id)
    initrd: str | None = None
    cmdline: str | None = None
    disks: list[Disk] = dataclasses.field(default_factory=list)
    interfaces: list[Interface] = dataclasses.field(default_factory=list)
    console_log: str | None = None
    metadata: Metadata | None = None

    @property
    def name(self) -> str:
        return domain_name(self.uuid)

    def element(self) -> ET.Element:
        dom = ET.Element("domain", type=self.virt_type)
        ET.SubElement(dom, "name").text = self.name
        ET.SubElement(dom, "uuid").text = self.uuid
        if self.metadata is not None:
            dom.append(self.metadata.element())
        ET.SubElement(dom, "memory", unit="KiB").text = str(self.memory_mb * 1024)
        ET.SubElement(dom, "vcpu").text = str(self.vcpus)
        os_ = ET.SubElement(dom, "os")
        ET.SubElement(os_, "type", arch="x86_64", machine="pc").text = "hvm"
        if self.kernel:
            ET.SubElement(os_, "kernel").text = self.kernel
            if self.initrd:
                ET.SubElement(os_, "initrd").text = self.initrd
            if self.cmdline:
                ET.SubElement(os_, "cmdline").text = self.cmdline
        else:
            ET.SubElement(os_, "boot", dev="hd")
        features = ET.SubElement(dom, "features")
        ET.SubElement(features, "acpi")
        ET.SubElement(features, "apic")
        ET.SubElement(dom, "clock", offset="utc")
        ET.SubElement(dom, "on_poweroff").text = "destroy"
        ET.SubElement(dom, "on_reboot").text = "restart"
        ET.SubElement(dom, "on_crash").text = "destroy"
        devices = ET.SubElement(dom, "devices")
        for disk in self.disks:
            devices.append(disk.element())
        for iface in self.interfaces:
            devices.append(iface.element())
        if self.console_log:
            for tag in ("serial", "console"):
                chardev = ET.SubElement(devices, tag, type="file")
                ET.SubElement(chardev, "source", path=self.console_log, append="on")
                target = ET.SubElement(chardev, "target", port="0")
                if tag == "console":
                    target.set("type", "serial")
        ET.SubElement(devices, "memballoon", model="virtio")
        return dom

    def to_xml(self) -> str:
        root = self.element()
        ET.indent(root)
        return ET.tostring(root, encoding="unicode") + "\n"


def device_xml(device: Disk | Interface) -> str:
    """One device for attachDeviceFlags/detachDeviceFlags (hot-plug)."""
    return ET.tostring(device.element(), encoding="unicode")


def read_owner(xml: str) -> tuple[str, str] | None:
    """(host, instances path) of the pocketstack agent that defined this domain, or None
    for domains pocketstack did not create."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError:
        return None
    owner = root.find(f"metadata/{{{POCKETSTACK_NS}}}owner")
    if owner is None:
        return None
    return owner.get("host", ""), owner.get("path", "")


def find_devices(xml: str) -> dict:
    """{"disks": {target dev: source}, "macs": {mac: tap}} of a live domain (a network
    disk's source is its name, e.g. pool/image)."""
    root = ET.fromstring(xml)
    disks, macs = {}, {}
    for disk in root.findall("devices/disk"):
        target = disk.find("target")
        source = disk.find("source")
        if target is not None:
            disks[target.get("dev")] = (source.get("file") or source.get("dev")
                                        or source.get("name")  # network: pool/image
                                        if source is not None else None)
    for iface in root.findall("devices/interface"):
        mac = iface.find("mac")
        tap = iface.find("target")
        if mac is not None:
            macs[mac.get("address")] = tap.get("dev") if tap is not None else None
    return {"disks": disks, "macs": macs}
