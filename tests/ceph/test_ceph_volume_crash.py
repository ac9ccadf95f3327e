"""Kill -9 of the cloud in the middle of an rbd clone: after the restart the
volume is in error and nothing half-made is left in Ceph — no clone image, no
``.clone_snap`` on the source. The window is made real, not simulated: with
rbd_max_clone_depth = 0 every clone is flattened, so a clone of a volume holding data
copies it for a few seconds, and the kill lands while the clone image exists."""
from __future__ import annotations

import os
import signal
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from helpers.up_process import UpProcess  # noqa: E402

WAIT = {"wait": 120, "interval": 0.05}


def _conf(ceph) -> str:
    names = "\n".join(f"{k} = {v}" for k, v in ceph.names.items())
    return (f"[identity]\npassword_hash_rounds = 4\n[volume]\nenabled_backends = rbd\n"
            f"rbd_max_clone_depth = 0\n[ceph]\nconf = {ceph.conf}\n{names}\n")


def _attached(vols, name) -> bool:
    """The clone is whole and attached to its parent (so its flatten is running)."""
    import rbd

    try:
        with rbd.Image(vols, name, read_only=True) as image:
            image.parent_info()
            return True
    except rbd.Error:
        return False


@pytest.mark.parametrize("moment", ["clone", "flatten"])
def test_kill_mid_clone_leaves_nothing_half_made(ceph, moment):
    """``clone``: killed as soon as the clone is listed (librbd is making it: no header or
    no parent yet); ``flatten``: once it is attached, while its data is copied."""
    import rbd

    data_dir = os.path.join(tempfile.mkdtemp(prefix="pocketstack-ceph-crash-"), "data")
    up = UpProcess(data_dir, conf=_conf(ceph), args=("--debug",)).start(timeout=120)
    admin = ceph.admin()
    vols = admin.open_ioctx(ceph.names["volume_pool"])
    try:
        bs = up.sdk().block_storage
        source = bs.wait_for_status(bs.create_volume(size=1, name="source"), "available",
                                    failures=["error"], **WAIT)
        with rbd.Image(vols, f"volume-{source.id}") as image:  # data for the flatten
            block = os.urandom(4 << 20)
            for offset in range(0, 512 << 20, 4 << 20):
                image.write(block, offset)
        clone = bs.create_volume(source_volid=source.id, name="clone")
        name = f"volume-{clone.id}"
        deadline = time.monotonic() + 60
        while name not in rbd.RBD().list(vols) or (moment == "flatten"
                                                   and not _attached(vols, name)):
            assert time.monotonic() < deadline, "the clone never appeared"
            time.sleep(0.005)
        up.proc.send_signal(signal.SIGKILL)  # mid-flatten: the clone exists, half copied
        up.proc.wait(10)
        assert bs.session  # the old connection is dead; a new one after the restart
        assert name in rbd.RBD().list(vols)
        with rbd.Image(vols, f"volume-{source.id}", read_only=True) as image:
            assert f"{name}.clone_snap" in [s["name"] for s in image.list_snaps()]

        up.stop()
        up = UpProcess(data_dir, conf=_conf(ceph), args=("--debug",)).start(timeout=120)
        bs = up.sdk().block_storage
        found = bs.get_volume(clone.id)
        assert found.status == "error", found.status

        def stale_snaps():
            with rbd.Image(vols, f"volume-{source.id}", read_only=True) as image:
                return [s for s in image.list_snaps() if s["name"].endswith(".clone_snap")]
        # Gone at the restart, or once Ceph drops the killed client's watch on the
        # half-made image (osd_client_watch_timeout, 30 s): recovery retries until then.
        deadline = time.monotonic() + 60
        while name in rbd.RBD().list(vols) or stale_snaps():
            assert time.monotonic() < deadline, "the half-made clone was never removed"
            time.sleep(0.5)
        bs.delete_volume(clone)
        bs.delete_volume(source)
        for volume in (clone, source):
            bs.wait_for_delete(volume, interval=0.05, wait=60)
        assert not [n for n in rbd.RBD().list(vols) if source.id in n or clone.id in n]
    finally:
        up.stop()
        admin.shutdown()
