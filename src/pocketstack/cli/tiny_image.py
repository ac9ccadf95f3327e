"""The tiny test guest (our cirros): the host's Debian cloud kernel plus a busybox
initramfs whose init proves from inside the guest what the cloud gave it.

Its init loads the virtio, cdrom and power-button modules (in the dependency order
`modprobe --show-depends` computes at build time), leases an address with udhcpc on every
NIC and prints it, prints the instance uuid, hostname and key from the config drive (label
config-2) and from the metadata service, runs the user data when it starts with ``#!``,
powers off on an ACPI power-button press (so a soft stop or reboot is clean) and lists its
block devices and NICs whenever they change (a hot-plugged volume or NIC shows up; a new
NIC is leased too). Every line it prints
starts with ``pocketstack-tiny:`` so tests and people can grep the console log.

The initramfs is a gzip'd cpio "newc" archive written here in Python: no root, no
`cpio` tool, device nodes included.
"""
from __future__ import annotations

import glob
import gzip
import os
import re
import shutil
import stat
import subprocess

MODULES = ("virtio_pci", "virtio_blk", "virtio_net", "isofs", "sr_mod", "ata_piix",
           "evdev", "button")
BUSYBOX_CANDIDATES = ("/bin/busybox", "/usr/bin/busybox")
# no_timer_check: under software emulation on a loaded host the kernel's IO-APIC timer
# check can miss its ticks and panic ("IO-APIC + timer doesn't work!"); cloud images
# boot with it for the same reason.
COMMAND_LINE = "console=ttyS0 quiet no_timer_check"
PREFIX = "pocketstack-tiny"

INIT = r"""#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp /sbin /usr/bin /usr/sbin /mnt/config
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
say() { echo "pocketstack-tiny: $*"; }
jget() { grep -o "\"$1\": *\"[^\"]*\"" | head -n 1 | sed 's/.*: *"\(.*\)"$/\1/'; }
# busybox-static's wget crashes on Debian 12: a plain HTTP/1.0 GET through nc instead.
http_get() {
  printf 'GET %s HTTP/1.0\r\nHost: 169.254.169.254\r\n\r\n' "$1" \
    | nc -w 5 169.254.169.254 80 2>/dev/null | tr -d '\r' > /tmp/http.out
  head -n 1 /tmp/http.out | grep -q ' 200 ' || return 1
  sed '1,/^$/d' /tmp/http.out
}
facts() { echo "uuid=$(jget uuid < $1) hostname=$(jget hostname < $1) key=$(keyname < $1)"; }
keyname() { grep -o '"public_keys": *{ *"[^"]*"' | sed 's/.*"\([^"]*\)"$/\1/'; }
say "booting, kernel $(uname -r)"
for m in $(cat /etc/modules.order); do insmod /lib/modules/$m 2>/dev/null; done
# what the flavor gave it (a resize shows here)
sizes=""
for d in /sys/block/vd*; do [ -e $d/size ] && sizes="$sizes ${d##*/}=$(cat $d/size)"; done
say "hardware cpus=$(grep -c ^processor /proc/cpuinfo)" \
    "memory=$(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo)kB sectors:$sizes"
ip link set lo up

# A power-button press (libvirt's ACPI shutdown) powers off cleanly.
for ev in /sys/class/input/event*; do
  if grep -q "Power Button" $ev/device/name 2>/dev/null; then
    (dd if=/dev/input/${ev##*/} bs=24 count=1 >/dev/null 2>&1
     say "power button pressed, powering off"; sync; poweroff -f) &
  fi
done

leased=""
for path in /sys/class/net/*; do
  nic=${path##*/}
  [ "$nic" = lo ] && continue
  ip link set $nic up
  if udhcpc -i $nic -s /etc/udhcpc.script -O staticroutes -O mtu -t 15 -T 1 -n -q \
       >/dev/null 2>&1; then leased=1; else say "$nic: no DHCP lease"; fi
done

dev=$(findfs LABEL=config-2 2>/dev/null)
if [ -n "$dev" ] && mount -t iso9660 -o ro $dev /mnt/config 2>/dev/null; then
  md=/mnt/config/openstack/latest/meta_data.json
  say "config-drive $dev $(facts $md)"
  ud=/mnt/config/openstack/latest/user_data
  [ -f $ud ] && cp $ud /tmp/user_data
else
  say "config-drive none"
fi

ok=""
[ -n "$leased" ] && for try in 1 2 3; do
  if http_get /openstack/latest/meta_data.json > /tmp/md.json; then
    ok=1; break
  fi
  sleep 1
done
if [ -n "$ok" ]; then
  say "metadata-service $(facts /tmp/md.json)"
  hostname "$(jget hostname < /tmp/md.json)"
  [ -f /tmp/user_data ] || http_get /openstack/latest/user_data > /tmp/user_data \
    || rm -f /tmp/user_data
elif [ -n "$leased" ]; then
  say "metadata-service unreachable"
else
  say "metadata-service skipped: no network"
fi

if [ -s /tmp/user_data ] && head -c 2 /tmp/user_data | grep -q '#!'; then
  chmod +x /tmp/user_data
  /tmp/user_data
  say "user-data exited $?"
fi
say "up"

# Block devices and NICs whenever they change; a hot-plugged NIC gets its DHCP lease.
last=""
nets=$(cd /sys/class/net && echo *)
say "net-devices $nets"
while true; do
  now=$(cd /sys/block && echo *)
  if [ "$now" != "$last" ]; then say "block-devices $now"; last="$now"; fi
  was="$nets"
  nets=$(cd /sys/class/net && echo *)
  if [ "$nets" != "$was" ]; then
    say "net-devices $nets"
    for nic in $nets; do
      case " $was " in *" $nic "*) continue ;; esac
      ip link set $nic up
      (udhcpc -i $nic -s /etc/udhcpc.script -O staticroutes -O mtu -t 15 -T 1 -n -q \
         >/dev/null 2>&1 || say "$nic: no DHCP lease") &
    done
  fi
  sleep 2
done
"""

UDHCPC_SCRIPT = r"""#!/bin/sh
case "$1" in
  deconfig) ip addr flush dev $interface; ip link set $interface up ;;
  bound|renew)
    ip addr flush dev $interface
    ip addr add $ip/$mask dev $interface
    [ -n "$mtu" ] && ip link set $interface mtu $mtu
    [ -n "$router" ] && ip route add default via ${router%% *} dev $interface 2>/dev/null
    set -- $staticroutes
    while [ $# -ge 2 ]; do ip route add $1 via $2 dev $interface 2>/dev/null; shift 2; done
    # The metadata proxy lives on the DHCP port (neutron's isolated metadata).
    [ -n "$serverid" ] && ip route add 169.254.169.254/32 via $serverid dev $interface 2>/dev/null
    echo "pocketstack-tiny: $interface leased $ip/$mask" > /dev/console
    ;;
esac
"""


class TinyImageError(Exception):
    pass


def find_kernel() -> tuple[str, str]:
    """(path, version) of the newest Debian cloud kernel in /boot."""
    kernels = sorted(glob.glob("/boot/vmlinuz-*cloud*"))
    if not kernels:
        raise TinyImageError("no /boot/vmlinuz-*cloud* kernel: install linux-image-cloud-amd64 "
                             "(make libvirt does)")
    path = kernels[-1]
    version = os.path.basename(path)[len("vmlinuz-"):]
    if not os.access(path, os.R_OK):
        raise TinyImageError(f"{path} is not readable (run as root)")
    return path, version


def find_busybox() -> str:
    for path in BUSYBOX_CANDIDATES:
        if os.path.isfile(path):
            with open(path, "rb") as f:
                head = f.read(4096)
            # A dynamically linked busybox (PT_INTERP names ld.so) would need its libraries.
            if b"ld-linux" not in head:
                return path
    raise TinyImageError("no static busybox: install busybox-static (make libvirt does)")


def module_order(version: str, modules=MODULES) -> list[str]:
    """The .ko files to insmod, dependencies first, each once."""
    proc = subprocess.run(["modprobe", "-a", "-S", version, "--show-depends", *modules],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise TinyImageError(f"modprobe --show-depends failed: {proc.stderr.strip()}")
    order: list[str] = []
    for line in proc.stdout.splitlines():
        match = re.match(r"insmod (\S+)", line)
        if match and match.group(1) not in order:
            order.append(match.group(1))
    return order


class Cpio:
    """A cpio "newc" archive (the format the kernel unpacks as initramfs)."""

    def __init__(self):
        self.parts: list[bytes] = []
        self.ino = 1

    def _add(self, name: str, mode: int, data: bytes = b"", rdev: tuple[int, int] = (0, 0)):
        fields = (self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1],
                  len(name) + 1, 0)
        header = b"070701" + b"".join(b"%08x" % f for f in fields)
        self.ino += 1
        entry = header + name.encode() + b"\0"
        entry += b"\0" * (-len(entry) % 4)
        entry += data + b"\0" * (-len(data) % 4)
        self.parts.append(entry)

    def directory(self, name: str) -> None:
        self._add(name, stat.S_IFDIR | 0o755)

    def file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        self._add(name, stat.S_IFREG | mode, data)

    def char_device(self, name: str, major: int, minor: int) -> None:
        self._add(name, stat.S_IFCHR | 0o600, rdev=(major, minor))

    def symlink(self, name: str, target: str) -> None:
        self._add(name, stat.S_IFLNK | 0o777, target.encode())

    def finish(self) -> bytes:
        self._add("TRAILER!!!", 0)
        return b"".join(self.parts)


def build_initramfs(version: str, busybox: str) -> bytes:
    archive = Cpio()
    for d in ("bin", "dev", "etc", "lib", "lib/modules", "proc", "sys", "tmp", "mnt"):
        archive.directory(d)
    archive.char_device("dev/console", 5, 1)
    archive.char_device("dev/null", 1, 3)
    with open(busybox, "rb") as f:
        archive.file("bin/busybox", f.read(), 0o755)
    archive.symlink("bin/sh", "busybox")
    names = []
    for path in module_order(version):
        name = os.path.basename(path)
        with open(path, "rb") as f:
            data = f.read()
        if name.endswith(".xz"):
            import lzma

            data, name = lzma.decompress(data), name[:-3]
        elif name.endswith(".zst"):
            raise TinyImageError(f"{path}: zstd-compressed modules are not supported")
        archive.file(f"lib/modules/{name}", data)
        names.append(name)
    archive.file("etc/modules.order", ("\n".join(names) + "\n").encode())
    archive.file("etc/udhcpc.script", UDHCPC_SCRIPT.encode(), 0o755)
    archive.file("init", INIT.encode(), 0o755)
    return gzip.compress(archive.finish(), compresslevel=6, mtime=0)


def build_root_disk(path: str, size: int = 64 << 20) -> None:
    """The machine image: an empty qcow2 (the guest runs from its initramfs), made here
    as `qemu-img create` would."""
    from pocketstack.common.image_formats import qcow2_image

    with open(path, "wb") as f:
        f.write(qcow2_image(size))


def build(workdir: str) -> dict:
    """Kernel, initramfs and root disk in ``workdir``; returns their paths."""
    kernel, version = find_kernel()
    busybox = find_busybox()
    paths = {"kernel": os.path.join(workdir, f"vmlinuz-{version}"),
             "ramdisk": os.path.join(workdir, f"initramfs-{version}.gz"),
             "machine": os.path.join(workdir, "tiny-root.qcow2"), "version": version}
    shutil.copyfile(kernel, paths["kernel"])
    with open(paths["ramdisk"], "wb") as f:
        f.write(build_initramfs(version, busybox))
    build_root_disk(paths["machine"])
    return paths
