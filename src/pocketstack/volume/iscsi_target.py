"""iSCSI exports of file and LVM volumes with tgt, as cinder's LVM driver does with its
``tgtadm`` target helper: for hosts that cannot open the volume's file or block device
(another machine, no shared Ceph), QEMU opens the LUN with its own initiator (libiscsi).

``[volume] target_helper = tgtadm`` turns it on. The volume service then runs a ``tgtd`` of
its own (its control port is the portal's port, so several clouds on one machine do not
meet) with pid and log under ``<data dir>/volumes/tgt``. A volume is exported while it has
an attachment with connection_info: one target ``<target_prefix>volume-<id>``, LUN 1 (LUN 0
is tgt's controller). As cinder's tgt driver, the target requires CHAP: the volume's own
user and password (``provider_auth`` "CHAP <user> <password>", made at its first export)
are a tgt account bound to the target, and connection_info carries them (``auth_method``,
``auth_username``, ``auth_password``) to the host that opens the LUN. tgtd keeps targets in
memory only: the volume service's start exports again what is attached (cinder's
ensure_export) and drops targets of volumes that are not.
"""
from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import threading
import time

from pocketstack.common import config, exceptions

_lock = threading.Lock()  # tid allocation: find the highest, add one


class TargetError(exceptions.ServiceUnavailable):
    """tgt failed (503: the volume exists, its export cannot be served now); the message
    says what tgt answered."""


def enabled() -> bool:
    return config.CONF.volume.target_helper == "tgtadm"


def iqn(volume_id: str) -> str:
    return f"{config.CONF.volume.target_prefix}volume-{volume_id}"


def _state_dir() -> str:
    return os.path.join(config.data_dir(), "volumes", "tgt")


def _port() -> int:
    return config.CONF.volume.target_port


def _control_port() -> int:
    """tgtd's management socket number: the portal's port (tgtd takes 0-32767 only)."""
    return _port() % 32768


def _tgtadm(*args: str, check: bool = True) -> str:
    try:
        proc = subprocess.run(["tgtadm", "-C", str(_control_port()), "--lld", "iscsi", *args],
                              capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        raise TargetError("iSCSI exports ([volume] target_helper = tgtadm) need tgt: "
                          "apt-get install tgt (`make ceph` installs it).") from None
    except subprocess.TimeoutExpired:
        raise TargetError("tgtadm did not answer within 30 s.") from None
    if check and proc.returncode != 0:
        raise TargetError(f"tgtadm {' '.join(args[:4])} failed: "
                          f"{(proc.stderr or proc.stdout).strip()[:300]}")
    return proc.stdout


def _pid() -> int | None:
    """Our tgtd's pid: the pid file's process, if it is the tgtd started with that pid
    file (after a reboot the pid may be another cloud's tgtd, which stop_daemon would
    kill)."""
    path = os.path.join(_state_dir(), "tgtd.pid")
    try:
        with open(path) as f:
            pid = int(f.read().strip() or 0)
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read().split(b"\0")
    except (OSError, ValueError):
        return None
    return pid if os.path.basename(args[0]) == b"tgtd" and os.fsencode(path) in args else None


def ensure_daemon() -> None:
    """Start this cloud's tgtd unless it runs; wait until it answers."""
    if _pid() is not None:
        return
    if shutil.which("tgtd") is None:
        raise TargetError("iSCSI exports ([volume] target_helper = tgtadm) need tgt: "
                          "apt-get install tgt (`make ceph` installs it).")
    state = _state_dir()
    os.makedirs(state, mode=0o700, exist_ok=True)
    portal = f"{config.CONF.volume.target_ip_address}:{_port()}"
    with open(os.path.join(state, "tgtd.log"), "ab") as log:
        # tgtd daemonizes once it listens; its pid file says which process to stop
        proc = subprocess.run(["tgtd", "-C", str(_control_port()), "--iscsi",
                               f"portal={portal}",
                               "-p", os.path.join(state, "tgtd.pid")],
                              stdout=log, stderr=log, timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if _pid() is not None:
            try:
                _tgtadm("--op", "show", "--mode", "sys")
                return
            except TargetError:
                pass
        time.sleep(0.05)
    raise TargetError(f"tgtd did not start on {portal} (exit {proc.returncode}); see "
                      f"{os.path.join(state, 'tgtd.log')}")


def stop_daemon() -> None:
    """Stop this cloud's tgtd and its targets (tgtd ignores SIGTERM: it is told to go
    offline and exit; SIGKILL if it has not within 2 s)."""
    pid = _pid()
    if pid is None:
        return
    for tid in targets().values():
        _tgtadm("--op", "delete", "--force", "--mode", "target", "--tid", str(tid),
                check=False)
    _tgtadm("--op", "update", "--mode", "sys", "--name", "State", "-v", "offline",
            check=False)
    _tgtadm("--op", "delete", "--mode", "system", check=False)
    try:
        for _ in range(100):
            if _pid() != pid:
                return
            time.sleep(0.02)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def targets() -> dict[str, int]:
    """{iqn: tid} of what tgtd exports now."""
    out = _tgtadm("--op", "show", "--mode", "target")
    return {m.group(2): int(m.group(1))
            for m in re.finditer(r"(?m)^Target (\d+): (\S+)$", out)}


# --- CHAP (cinder's volume_utils.generate_username/password, provider_auth) -------------

_CHAP_CHARS = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/l/I


def new_provider_auth() -> str:
    """A fresh ``"CHAP <user> <password>"`` (20 and 16 random characters, as cinder's)."""
    user = "".join(secrets.choice(_CHAP_CHARS) for _ in range(20))
    password = "".join(secrets.choice(_CHAP_CHARS) for _ in range(16))
    return f"CHAP {user} {password}"


def parse_provider_auth(value: str | None) -> tuple[str, str] | None:
    """(user, password) of ``"CHAP <user> <password>"``, else None."""
    parts = (value or "").split()
    if len(parts) == 3 and parts[0] == "CHAP":
        return parts[1], parts[2]
    return None


def _accounts_of(tid: int) -> list[str]:
    """The incoming CHAP users bound to target ``tid``."""
    out = _tgtadm("--op", "show", "--mode", "target")
    block = re.search(rf"(?ms)^Target {tid}: .*?(?=^Target \d+: |\Z)", out)
    found = re.search(r"(?ms)^\s+Account information:\n(.*?)^\s+ACL information:",
                      block.group(0) if block else "")
    return [line.strip() for line in (found.group(1) if found else "").splitlines()
            if line.strip() and not line.strip().endswith("(outgoing)")]


def _bind_account(tid: int, chap: tuple[str, str]) -> None:
    """Make ``chap`` the target's only way in. A leftover account of that name (a target
    deleted by hand) is made again, so its password is the volume's."""
    user, password = chap
    if user in _accounts_of(tid):
        return
    _tgtadm("--op", "delete", "--mode", "account", "--user", user, check=False)
    _tgtadm("--op", "new", "--mode", "account", "--user", user, "--password", password)
    _tgtadm("--op", "bind", "--mode", "account", "--tid", str(tid), "--user", user)


# --- targets ------------------------------------------------------------------------------

def export(volume_id: str, path: str, chap: tuple[str, str] | None = None) -> None:
    """Export ``path`` as volume ``volume_id``'s LUN 1, open only to ``chap`` (user,
    password) when given. An existing target gets the account if it lacks it."""
    ensure_daemon()
    name = iqn(volume_id)
    with _lock:
        existing = targets()
        if name in existing:
            if chap is not None:
                _bind_account(existing[name], chap)
            return
        tid = max(existing.values(), default=0) + 1
        _tgtadm("--op", "new", "--mode", "target", "--tid", str(tid), "-T", name)
        try:
            _tgtadm("--op", "new", "--mode", "logicalunit", "--tid", str(tid), "--lun", "1",
                    "-b", path)
            if chap is not None:  # before the ACL opens it: never reachable without CHAP
                _bind_account(tid, chap)
            _tgtadm("--op", "bind", "--mode", "target", "--tid", str(tid), "-I", "ALL")
        except TargetError:
            _tgtadm("--op", "delete", "--force", "--mode", "target", "--tid", str(tid),
                    check=False)
            raise


def unexport(volume_id: str) -> None:
    """Remove the volume's target and its CHAP account, if tgtd exports it (and runs)."""
    if _pid() is None:
        return
    with _lock:
        tid = targets().get(iqn(volume_id))
        if tid is not None:
            users = _accounts_of(tid)
            _tgtadm("--op", "delete", "--force", "--mode", "target", "--tid", str(tid))
            for user in users:
                _tgtadm("--op", "delete", "--mode", "account", "--user", user, check=False)


def refresh_size(volume_id: str, path: str) -> bool:
    """Make an exported LUN report its backing store's new size (after an extend); False
    when the volume is not exported. tgt reads the size when it opens the backing store,
    so the LUN goes offline, reopens ``path`` and comes back: the initiator's session
    stays, a command in those few ms gets NOT READY (cinder's extend_target recreates the
    whole target instead)."""
    if _pid() is None:
        return False
    with _lock:
        tid = targets().get(iqn(volume_id))
        if tid is None:
            return False

        def update(params: str) -> None:
            _tgtadm("--op", "update", "--mode", "logicalunit", "--tid", str(tid), "--lun",
                    "1", "--params", params)
        update("online=0")
        try:
            update(f"path={path}")
        finally:
            update("online=1")
    return True


def connection_info(volume_id: str, path: str, mode: str,
                    chap: tuple[str, str] | None = None) -> dict:
    """cinder's iSCSI connection_info (driver_volume_type iscsi), exporting first; with
    ``chap`` the credentials as cinder's _get_iscsi_properties gives them."""
    export(volume_id, path, chap)
    conf = config.CONF.volume
    data = {"target_discovered": False,
            "target_portal": f"{conf.target_ip_address}:{_port()}",
            "target_iqn": iqn(volume_id), "target_lun": 1, "volume_id": volume_id,
            "discard": False, "access_mode": mode, "encrypted": False, "qos_specs": None}
    if chap is not None:
        data.update(auth_method="CHAP", auth_username=chap[0], auth_password=chap[1])
    return {"driver_volume_type": "iscsi", "data": data}


def reconcile(attached: dict[str, tuple[str, tuple[str, str] | None]]) -> None:
    """Export every ``{volume id: (path, chap)}`` that is attached, drop our other targets
    (after a restart of tgtd or of the volume service)."""
    ensure_daemon()
    for volume_id, (path, chap) in attached.items():
        export(volume_id, path, chap)
    prefix = iqn("")
    for name in targets():
        if name.startswith(prefix) and name[len(prefix):] not in attached:
            unexport(name[len(prefix):])
