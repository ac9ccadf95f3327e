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

    def admin(self):
        import rados

        conn = rados.Rados(conffile=self.conf, name="client.admin")
        conn.connect(timeout=10)
        return conn


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
