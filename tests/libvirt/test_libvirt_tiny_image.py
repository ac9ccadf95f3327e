"""The tiny guest's initramfs — a cpio the kernel can unpack, with busybox, the
virtio modules in dependency order and an init script busybox's shell accepts."""
from __future__ import annotations

import glob
import gzip
import shutil
import subprocess

import pytest

from pocketstack.cli import tiny_image


def read_newc(data: bytes) -> dict[str, tuple[int, bytes]]:
    """name -> (mode, data) of a cpio newc archive."""
    out, pos = {}, 0
    while True:
        header = data[pos:pos + 110]
        assert header[:6] == b"070701", header[:6]
        fields = [int(header[6 + 8 * i:14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = fields[1], fields[6], fields[11]
        pos += 110
        name = data[pos:pos + namesize - 1].decode()
        pos += namesize
        pos += -pos % 4
        body = data[pos:pos + size]
        pos += size
        pos += -pos % 4
        if name == "TRAILER!!!":
            return out
        out[name] = (mode, body)


def test_cpio_writer_round_trips():
    archive = tiny_image.Cpio()
    archive.directory("etc")
    archive.file("etc/motd", b"hello", 0o644)
    archive.char_device("dev/console", 5, 1)
    archive.symlink("bin/sh", "busybox")
    entries = read_newc(archive.finish())
    assert entries["etc/motd"] == (0o100644, b"hello")
    assert entries["bin/sh"] == (0o120777, b"busybox")
    assert entries["dev/console"][0] == 0o020600


@pytest.mark.skipif(not glob.glob("/boot/vmlinuz-*cloud*") or not shutil.which("modprobe")
                    or not shutil.which("busybox"),
                    reason="needs the Debian cloud kernel, kmod and busybox-static "
                           "(make libvirt)")
def test_initramfs_has_busybox_modules_in_order_and_a_valid_init(tmp_path):
    _, version = tiny_image.find_kernel()
    entries = read_newc(gzip.decompress(tiny_image.build_initramfs(
        version, tiny_image.find_busybox())))
    order = entries["etc/modules.order"][1].decode().split()
    assert order.index("virtio.ko") < order.index("virtio_pci.ko")
    assert order.index("virtio_ring.ko") < order.index("virtio_net.ko")
    assert order.index("cdrom.ko") < order.index("sr_mod.ko")
    for name in order:
        assert f"lib/modules/{name}" in entries
    init = tmp_path / "init"
    init.write_bytes(entries["init"][1])
    assert entries["init"][0] & 0o111
    # busybox's shell parses the init and the DHCP hook without running them
    for name in ("init", "etc/udhcpc.script"):
        path = tmp_path / name.replace("/", "_")
        path.write_bytes(entries[name][1])
        proc = subprocess.run(["busybox", "sh", "-n", str(path)], capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr
