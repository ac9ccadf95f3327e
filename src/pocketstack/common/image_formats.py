"""What an image's bytes are, in the way glance's format inspector tells (glance 2024+
checks every upload and import against the declared ``disk_format``, and refuses qcow2
files that point at other files).

Only fixed offsets are read: the first 64 KiB cover every signature we look for (the
ISO 9660 volume descriptor sits at 32 KiB), plus the last 512 bytes for a fixed VHD's
footer. Anything without a known signature is raw.

Shared by image (checks uploads) and compute (a snapshot's header), as upstream's
services share oslo.utils' format inspector.
"""
from __future__ import annotations

import os
import struct

HEAD = 64 * 1024
ISO_OFFSETS = (0x8001, 0x8801, 0x9001)  # "CD001" in one of the first volume descriptors
# Formats we recognise; the others (ami, ari, aki, ploop) are not checked, as in glance.
INSPECTED = ("raw", "qcow2", "vmdk", "vhd", "vhdx", "vdi", "iso")
QCOW2_EXTERNAL_DATA_FILE = 1 << 2  # incompatible feature bit


def detect(head: bytes, tail: bytes = b"") -> str:
    """The format the bytes are in: one of INSPECTED, or "luks"."""
    if head.startswith(b"QFI\xfb"):
        return "qcow2"
    # Sparse VMDK only: a descriptor file names other files (glance refuses those too).
    if head.startswith(b"KDMV"):
        return "vmdk"
    if head.startswith(b"vhdxfile"):
        return "vhdx"
    if head.startswith(b"conectix") or tail.startswith(b"conectix"):
        return "vhd"
    if head[0x40:0x44] == b"\x7f\x10\xda\xbe":
        return "vdi"
    if head.startswith(b"LUKS\xba\xbe"):
        return "luks"
    if any(head[o:o + 5] == b"CD001" for o in ISO_OFFSETS):
        return "iso"
    return "raw"


def _qcow2_problem(head: bytes) -> str | None:
    if len(head) < 32:
        return "QCOW2 header is truncated"
    version, = struct.unpack(">I", head[4:8])
    backing_offset, = struct.unpack(">Q", head[8:16])
    if backing_offset:
        return "QCOW2 image has a backing file"
    if version >= 3 and len(head) >= 80:
        incompatible, = struct.unpack(">Q", head[72:80])
        if incompatible & QCOW2_EXTERNAL_DATA_FILE:
            return "QCOW2 image has an external data file"
    return None


def problem(disk_format: str | None, path: str) -> str | None:
    """Why the file at ``path`` may not be stored as ``disk_format`` (None: it may)."""
    with open(path, "rb") as f:
        return problem_at(disk_format, os.fstat(f.fileno()).st_size,
                          lambda length, offset: os.pread(f.fileno(), length, offset))


def problem_at(disk_format: str | None, size: int, read_at) -> str | None:
    """``problem`` for data of ``size`` bytes read by ``read_at(length, offset)`` (data
    that is not a local file, e.g. an RBD image)."""
    # Empty data (the CLI uploads its empty stdin when it is not a terminal) is nothing
    # to inspect.
    if disk_format not in INSPECTED or size == 0:
        return None
    head = read_at(min(HEAD, size), 0)
    tail = read_at(512, size - 512) if size >= 512 else b""
    found = detect(head, tail)
    # An ISO is also a valid raw disk (glance lets "raw" hold one).
    if found != disk_format and not (disk_format == "raw" and found == "iso"):
        return (f"Image data does not match the declared disk_format '{disk_format}' "
                f"(it looks like {found})")
    if found == "qcow2":
        return _qcow2_problem(head)
    return None


def qcow2_header(virtual_size: int) -> bytes:
    """A qcow2 v2 header describing an empty disk of ``virtual_size`` bytes (for data
    made up by the simulated hypervisor: snapshots)."""
    return struct.pack(">4sIQIIQIIQQIIQ", b"QFI\xfb", 2, 0, 0, 16, virtual_size, 0, 0,
                       0, 0, 0, 0, 0).ljust(512, b"\0")


def qcow2_image(virtual_size: int) -> bytes:
    """A complete, valid qcow2 (v3) image of an empty disk of ``virtual_size`` bytes, as
    `qemu-img create -f qcow2` makes one: `qemu-img check` passes and qemu reads it.
    ``qcow2_header`` is only a header, which qemu refuses.

    Four 64 KiB clusters: the header; the L1 table (all entries zero: no L2 table, so
    every cluster of the disk reads as zeros); the refcount table, whose one entry points
    at the refcount block; and that block, counting each of the four clusters once.
    """
    cluster_bits = 16
    cluster = 1 << cluster_bits
    l1_size = max(1, -(-virtual_size // ((cluster // 8) * cluster)))  # an L2 maps 512 MiB
    if l1_size * 8 > cluster or virtual_size % 512:
        raise ValueError(f"no single-cluster L1 qcow2 for {virtual_size} bytes")
    header = struct.pack(
        ">4sIQIIQIIQQIIQQQQII",
        b"QFI\xfb", 3,
        0, 0,            # no backing file
        cluster_bits, virtual_size,
        0,               # not encrypted
        l1_size, 1 * cluster,
        2 * cluster, 1,  # refcount table: offset, clusters
        0, 0,            # no snapshots
        0, 0, 0,         # incompatible, compatible, autoclear features
        4, 104)          # 16-bit refcounts; the length of this header
    refcount_table = struct.pack(">Q", 3 * cluster)
    refcount_block = struct.pack(">4H", 1, 1, 1, 1)
    return b"".join(part.ljust(cluster, b"\0")
                    for part in (header, b"", refcount_table, refcount_block))
