"""The cloud's Ceph RADOS Gateway: the object-store endpoint with `[objectstore] backend =
rgw` (the scale-out backend; the embedded one keeps bytes in files of the data dir).

One radosgw per cloud, on a port of its own (several clouds share a machine and a
cluster), started by the cloud's main process next to the Ceph cluster of `[ceph] conf`
as the cephx user `[ceph] rgw_user`, and checking tokens with this cloud's identity API
as the ``swift`` service user, as upstream's "Integrating with OpenStack Keystone" guide
sets it up. Its pid file, log, admin socket and the password file it reads live under
``<data dir>/rgw``, so the cloud (and `pocketstack down`) stop exactly their own one.
`[objectstore] rgw_url` names a gateway run elsewhere instead: then none is started.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

from pocketstack.common import config

SWIFT_PATH = "/swift/v1/AUTH_$(project_id)s"  # rgw swift url prefix + account in url


class GatewayError(Exception):
    """radosgw could not be started; the message says why."""


def enabled() -> bool:
    return config.CONF.objectstore.backend == "rgw"


def own_dir(data_dir: str | None = None) -> str:
    return os.path.join(data_dir or config.data_dir(), "rgw")


def _port() -> int:
    """[objectstore] rgw_port, or a free port chosen at the first start and kept, so the
    catalog's endpoint stays where it was."""
    if config.CONF.objectstore.rgw_port:
        return config.CONF.objectstore.rgw_port
    path = os.path.join(own_dir(), "port")
    try:
        with open(path) as f:
            return int(f.read())
    except (OSError, ValueError):
        pass
    os.makedirs(own_dir(), mode=0o700, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open(path, "w") as f:
        f.write(str(port))
    return port


def _host() -> str:
    host = config.CONF.bind_host
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


def base_url() -> str:
    """Where the gateway answers (no path)."""
    given = config.CONF.objectstore.rgw_url
    return given.rstrip("/") if given else f"http://{_host()}:{_port()}"


def catalog_url() -> str:
    """The object-store endpoint of the catalog when RGW serves it."""
    return base_url() + SWIFT_PATH


def pid_file(data_dir: str | None = None) -> str:
    return os.path.join(own_dir(data_dir), "radosgw.pid")


def _is_radosgw(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)
        with open(f"/proc/{pid}/comm") as f:
            name = f.read().strip()
    except OSError:
        return False
    return name == "radosgw" and fields[-1].split()[0] != "Z"


def _running_pid(data_dir: str | None = None) -> int | None:
    """The pid of this cloud's radosgw if that process still runs (and is a radosgw:
    a pid can be reused after a crash)."""
    try:
        with open(pid_file(data_dir)) as f:
            pid = int(f.read().strip())
    except (OSError, ValueError):
        return None
    return pid if _is_radosgw(pid) else None


def stop(data_dir: str | None = None, timeout: float = 30) -> bool:
    """SIGTERM this cloud's radosgw, SIGKILL it if it lingers; whether one ran. (It
    removes its pid file before it has exited: wait on the process itself.)"""
    pid = _running_pid(data_dir)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _is_radosgw(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _is_radosgw(pid):
        os.kill(pid, signal.SIGKILL)
        while _is_radosgw(pid) and time.monotonic() < deadline + 10:
            time.sleep(0.1)
    return True


def start(identity_url: str, swift_password: str, timeout: float = 90) -> None:
    """(Re)start this cloud's radosgw and wait until it answers. ``identity_url``: the
    identity API without /v3 (rgw keystone url)."""
    from pocketstack.common import ceph

    stop()  # one left by a crashed run may have another password or cluster
    directory = own_dir()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    password_path = os.path.join(directory, "keystone-password")
    fd = os.open(password_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(swift_password)
    conf = config.CONF
    user = conf.ceph.rgw_user
    ceph_conf = ceph.conf_file()
    keyring = conf.ceph.keyring or os.path.join(os.path.dirname(ceph_conf),
                                                f"ceph.client.{user}.keyring")
    port = _port()
    args = [
        "radosgw", "-c", ceph_conf, "-n", f"client.{user}", "--keyring", keyring,
        "--rgw-frontends", f"beast endpoint={_host()}:{port}",
        "--pid-file", pid_file(), "--log-file", os.path.join(directory, "radosgw.log"),
        "--admin-socket", os.path.join(directory, "radosgw.asok"),
        "--rgw-keystone-url", identity_url,
        "--rgw-keystone-api-version", "3",
        "--rgw-keystone-admin-user", "swift",
        "--rgw-keystone-admin-password-path", password_path,
        "--rgw-keystone-admin-project", conf.service_user.project_name,
        "--rgw-keystone-admin-domain", "Default",
        "--rgw-keystone-accepted-roles", "member,admin",
        "--rgw-keystone-accepted-admin-roles", "ResellerAdmin",
        "--rgw-keystone-implicit-tenants", "true",
        "--rgw-keystone-verify-ssl", "false",
        "--rgw-swift-account-in-url", "true",
        "--rgw-swift-versioning-enabled", "true",
        "--rgw-enable-apis", "swift, swift_auth, s3, admin",
        # Its pools get 8 placement groups, not 32: a one-OSD cluster allows 250 in all.
        "--osd-pool-default-pg-num", "8", "--osd-pool-default-pgp-num", "8",
    ]
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise GatewayError("radosgw is not installed: run `make ceph` (Debian's radosgw)"
                           ) from None
    except subprocess.TimeoutExpired:
        raise GatewayError("radosgw did not daemonize within 60 s") from None
    if proc.returncode != 0:
        raise GatewayError(f"radosgw failed: {proc.stderr.strip()[-800:]}")
    _wait_until_serving(timeout)


def _wait_until_serving(timeout: float) -> None:
    url = base_url() + "/swift/info"
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            pass
        if _running_pid() is None and os.path.exists(pid_file()):
            break
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)
    raise GatewayError(f"radosgw does not answer at {url} (see "
                       f"{os.path.join(own_dir(), 'radosgw.log')})")
