"""The bytes of encrypted volumes: LUKS, as QEMU reads and writes it natively.

A volume of a type whose encryption provider is ``luks`` is LUKS-formatted when it is
made (cinder formats a volume from an image, nova a blank one on first attach; here the
volume service does both, so a volume is never plaintext on its backend). The passphrase
is what nova's ``native`` LUKS encryptor gives QEMU: the hex of the volume's symmetric key
from the key manager. The LUKS master key is random and lives in the header, wrapped by
that passphrase; the passphrase reaches qemu-img through a pipe (``--object
secret,file=/dev/fd/N``), never a file or a command line.

The guest sees the volume's size less the header (about 2 MiB), as with nova's native
LUKS; growing the volume grows the payload (LUKS1 records no payload size).
"""
from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile

from pocketstack.volume.backends import Backend, BackendError, is_block

LOG = logging.getLogger(__name__)
# What cinder and nova accept as the LUKS provider (the class path is the pre-Ocata name).
PROVIDERS = ("luks", "nova.volume.encryptors.luks.LuksEncryptor", "LuksEncryptor")
MAGIC = b"LUKS\xba\xbe"
# The passphrase is a random key's hex (256 bits and more): stretching it adds nothing,
# while each open (every attach, every start) pays it; qemu's default is 2000 ms.
ITER_TIME_MS = 100
CRYPTSETUP_ITERATIONS = 1000  # PBKDF2's minimum there


def is_luks(provider: str | None) -> bool:
    return (provider or "") in PROVIDERS


def passphrase_of(key: bytes) -> str:
    """nova's native LUKS passphrase: the key's hex (binascii.hexlify(key))."""
    return key.hex()


def _qemu_img(passphrase: str, *args: str, timeout: float = 3600) -> str:
    """qemu-img with a ``sec0`` secret object read from a pipe holding the passphrase.
    Making a header times the key derivation by the thread's CPU time, which a loaded
    host's coarse accounting can report as none at all ("Unable to get accurate CPU
    usage"): that attempt is made again, a few times."""
    for attempt in range(5):
        try:
            return _qemu_img_once(passphrase, *args, timeout=timeout)
        except BackendError as error:
            if "accurate CPU usage" not in error.message or attempt == 4:
                raise
    raise AssertionError("unreachable")


def _qemu_img_once(passphrase: str, *args: str, timeout: float) -> str:
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, passphrase.encode())  # well under a pipe's buffer
        os.close(write_end)
        write_end = -1
        cmd = ["qemu-img", args[0], "--object",
               f"secret,id=sec0,file=/dev/fd/{read_end}", *args[1:]]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  pass_fds=(read_end,))
        except (OSError, subprocess.TimeoutExpired) as error:
            raise BackendError(f"qemu-img failed: {error}") from None
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
    if proc.returncode != 0:
        raise BackendError(f"qemu-img {args[0]} (luks) failed: {proc.stderr.strip()[:300]}")
    return proc.stdout


def header(passphrase: str) -> bytes:
    """A fresh LUKS1 header (random master key, wrapped by ``passphrase``) for an empty
    payload: written at a volume's start, the rest of the volume is its payload.
    cryptsetup makes it when installed (its PBKDF iterations set, no benchmark: about
    0.3 s); else qemu-img, whose key derivation benchmark takes a second or more of CPU
    whatever ``iter-time`` says (several seconds on a loaded host)."""
    if shutil.which("cryptsetup"):
        try:
            return _cryptsetup_header(passphrase)
        except BackendError as error:  # not root, no locking dir...: qemu-img then
            LOG.info("cryptsetup could not make a LUKS header (%s); qemu-img makes it",
                     error)
    with tempfile.TemporaryDirectory(prefix="pocketstack-luks-") as tmp:
        path = os.path.join(tmp, "header")
        _qemu_img(passphrase, "create", "-q", "-f", "luks", "-o",
                  f"key-secret=sec0,iter-time={ITER_TIME_MS}", path, "0", timeout=120)
        with open(path, "rb") as f:
            return f.read()


def _cryptsetup_header(passphrase: str) -> bytes:
    """LUKS1 as QEMU's own: aes-xts-plain64 with a 512-bit master key, sha256."""
    with tempfile.TemporaryDirectory(prefix="pocketstack-luks-") as tmp:
        path = os.path.join(tmp, "header")
        with open(path, "wb") as f:
            f.truncate(4 << 20)  # room for the header and its alignment
        try:
            proc = subprocess.run(
                ["cryptsetup", "luksFormat", "--type", "luks1", "--batch-mode",
                 "--cipher", "aes-xts-plain64", "--key-size", "512", "--hash", "sha256",
                 "--pbkdf-force-iterations", str(CRYPTSETUP_ITERATIONS), "--key-file", "-",
                 path], input=passphrase.encode(), capture_output=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise BackendError(f"cryptsetup failed: {error}") from None
        if proc.returncode != 0:
            raise BackendError(f"cryptsetup luksFormat failed: "
                               f"{proc.stderr.decode(errors='replace').strip()[:300]}")
        with open(path, "rb") as f:
            data = f.read(4 << 20)
    offset = int.from_bytes(data[104:108], "big") * 512  # LUKS1 payload-offset, sectors
    if data[:6] != MAGIC or not 0 < offset <= len(data):
        raise BackendError("cryptsetup made no LUKS1 header.")
    return data[:offset]


def format_volume(backend: Backend, volume_id: str, size_gb: int, passphrase: str) -> None:
    """Make a new (blank) volume a LUKS volume: its header at the start. The payload is
    what was there (zeros, holes), which reads as noise through the key: as a fresh
    encrypted disk does."""
    backend.write_stream(volume_id, iter([header(passphrase)]), size_gb << 30)


def target_opts(backend: Backend, volume_id: str) -> str:
    """qemu's image options of the volume opened through LUKS."""
    path = backend.path(volume_id)
    if path.startswith("rbd:"):
        protocol = "file.driver=rbd,file.filename=" + path.replace(",", ",,")
    else:
        driver = "host_device" if is_block(path) else "file"
        protocol = f"file.driver={driver},file.filename={path.replace(',', ',,')}"
    return f"driver=luks,key-secret=sec0,{protocol}"


def write_image(backend: Backend, volume_id: str, source: str, source_format: str,
                passphrase: str) -> None:
    """Write an image (a file, any format qemu-img reads) into the LUKS volume's payload
    (cinder's qemu-img convert into a LUKS target)."""
    _qemu_img(passphrase, "convert", "-f", source_format, "-n", "--target-image-opts",
              source, target_opts(backend, volume_id))


def payload_size(backend: Backend, volume_id: str, passphrase: str) -> int:
    """Bytes the guest sees (tests, checks)."""
    import json

    info = _qemu_img(passphrase, "info", "--output=json", "--image-opts",
                     target_opts(backend, volume_id), timeout=120)
    return int(json.loads(info).get("virtual-size") or 0)
