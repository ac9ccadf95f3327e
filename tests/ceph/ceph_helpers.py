"""What the Ceph tests share besides the fixture (its own module: `from conftest import` is
ambiguous where several conftests load)."""
from __future__ import annotations

import dataclasses
import shutil


@dataclasses.dataclass
class Ceph:
    directory: str
    conf: str
    names: dict  # the [ceph] options naming this session's pools and users

    def admin(self) -> "Connection":
        return Connection(self.conf, "client.admin")


class Connection:
    """A connected ``rados.Rados`` whose shutdown closes the I/O contexts it opened first:
    one freed after its connection makes librados touch freed memory, and the test process
    crashes at some later, unrelated moment."""

    def __init__(self, conf: str, name: str):
        import rados

        self._conn = rados.Rados(conffile=conf, name=name)
        self._conn.connect(timeout=10)
        self._ioctxs: list = []

    def open_ioctx(self, pool: str):
        ioctx = self._conn.open_ioctx(pool)
        self._ioctxs.append(ioctx)
        return ioctx

    def shutdown(self) -> None:
        for ioctx in self._ioctxs:
            ioctx.close()
        self._ioctxs.clear()
        self._conn.shutdown()

    def __getattr__(self, name):
        return getattr(self._conn, name)


def _skip_reason() -> str | None:
    if not shutil.which("ceph-mon") or not shutil.which("ceph-osd"):
        return "Ceph is not installed (make ceph)"
    try:
        import rados  # noqa: F401 - only whether it imports
        import rbd  # noqa: F401
    except ImportError:
        return "Ceph's Python bindings are not in this venv (tools/setup_ceph.sh .venv)"
    return None


def ceph_overrides(ceph: Ceph) -> dict:
    """Cloud overrides that point every service at the session's pools and users."""
    return {"ceph.conf": ceph.conf, **{f"ceph.{k}": v for k, v in ceph.names.items()}}
