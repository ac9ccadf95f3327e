"""kill -9 in the middle of a burst of uploads to a real `pocketstack up`, restart: every
object that got its 201 is listed and downloads byte-identical, and no partial object is
visible (each object's bytes are a function of its name, so a listed object that is not
complete shows)."""
from __future__ import annotations

import concurrent.futures
import hashlib
import os
import random
import shutil
import signal
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from helpers.cloud import wait_for  # noqa: E402
from helpers.up_process import UpProcess, free_port  # noqa: E402

CONF = """
[identity]
password_hash_rounds = 4
"""
BURST = 40
KILL_AFTER = 15


def _content(name: str) -> bytes:
    rng = random.Random(name)
    return rng.randbytes(rng.randint(1, 3 << 20))


def _burst(up, url, token, container, tmp):
    """Uploads on 6 clients, and 2 that send half their object and wait; once KILL_AFTER
    uploads got their 201 and the halves sit in temp files, kill -9 the cloud."""
    import httpx

    acknowledged = []
    killed = threading.Event()

    def halted(data):
        yield data[:len(data) // 2]
        killed.wait(60)
        yield data[len(data) // 2:]

    def upload(i):
        name = f"obj-{i:03d}"
        data = _content(name)
        try:
            r = httpx.put(f"{url}/{container}/{name}", timeout=60,
                          content=halted(data) if i < 2 else data,
                          headers={"X-Auth-Token": token, "Content-Length": str(len(data))})
        except httpx.HTTPError:
            return
        if r.status_code == 201:
            acknowledged.append(name)
            if len(acknowledged) == KILL_AFTER:
                wait_for(lambda: len(os.listdir(tmp)) >= 2, 30, "the halted uploads",
                         interval=0.05)
                up.proc.send_signal(signal.SIGKILL)
                killed.set()

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(upload, range(BURST)))
    killed.set()
    if up.proc.poll() is None:
        up.proc.send_signal(signal.SIGKILL)
    up.proc.wait(10)
    up.stop()
    return acknowledged


def test_kill_9_mid_upload_burst_keeps_every_acknowledged_object_and_no_partial_one():
    import swiftclient

    workdir = tempfile.mkdtemp(prefix="pocketstack-swift-crash-")
    data_dir = os.path.join(workdir, "data")
    port = free_port()
    up = UpProcess(data_dir, conf=CONF, port=port).start(timeout=120)
    try:
        session = up.session()
        url = session.get_endpoint(service_type="object-store", interface="public")
        token = session.get_token()
        swiftclient.Connection(preauthurl=url, preauthtoken=token).put_container("burst")
        tmp = os.path.join(data_dir, "objects", "tmp")
        acknowledged = _burst(up, url, token, "burst", tmp)
        assert KILL_AFTER <= len(acknowledged) < BURST  # the kill cut the burst short
        assert os.listdir(tmp)  # the halted uploads' temp files outlived the process

        up = UpProcess(data_dir, conf=CONF, port=port).start(timeout=120)
        session = up.session()
        swift = swiftclient.Connection(preauthurl=url, preauthtoken=session.get_token())
        headers, listing = swift.get_container("burst")
        listed = {entry["name"]: entry for entry in listing}
        assert set(acknowledged) <= set(listed), sorted(set(acknowledged) - set(listed))
        for name, entry in listed.items():  # acknowledged or not: only whole objects
            expected = _content(name)
            assert entry["bytes"] == len(expected), name
            assert entry["hash"] == hashlib.md5(expected).hexdigest(), name
            assert swift.get_object("burst", name)[1] == expected, name
        assert int(headers["x-container-object-count"]) == len(listed)
        assert int(headers["x-container-bytes-used"]) == sum(e["bytes"] for e in listing)
        # The cut-short uploads' temp files are swept once the restarted cloud is up.
        wait_for(lambda: not os.path.isdir(tmp) or not os.listdir(tmp), 30,
                 "the temp files of cut-short uploads to be removed", interval=0.2)
    finally:
        up.stop()
        shutil.rmtree(workdir, ignore_errors=True)
