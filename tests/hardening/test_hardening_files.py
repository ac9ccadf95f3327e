"""The data dir is 0700 (an existing one is tightened), files holding
secrets and data are 0600 (database, -wal/-shm, images, DHCP files), and the generated
admin password goes to a terminal only."""
from __future__ import annotations

import os
import pty
import select
import shutil
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from helpers.up_process import UpProcess, free_port  # noqa: E402

CONF = "[identity]\npassword_hash_rounds = 4\n"


def _mode(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _files_under(path: str):
    for base, _dirs, names in os.walk(path):
        for name in names:
            yield os.path.join(base, name)


def test_modes_and_password_not_printed_to_a_file():
    root = tempfile.mkdtemp(prefix="hardening-files-")
    data_dir = os.path.join(root, "data")
    os.makedirs(data_dir, mode=0o755)
    os.chmod(data_dir, 0o755)
    up = UpProcess(data_dir, conf=CONF).start()
    try:
        out = up.output()
        password = up.admin_password()
        assert password not in out
        assert os.path.join(data_dir, "admin-password") in out
        assert _mode(data_dir) == 0o700

        conn = up.sdk()
        image = conn.image.create_image(name="private", data=b"secret" * 10,
                                        disk_format="raw", container_format="bare")
        net = conn.network.create_network(name="private-net")
        conn.network.create_subnet(network_id=net.id, cidr="10.66.0.0/24", ip_version=4)
        conn.network.create_port(network_id=net.id)
        deadline = time.monotonic() + 10
        dhcp_host = None
        while time.monotonic() < deadline and dhcp_host is None:
            dhcp_host = next((f for f in _files_under(data_dir)
                              if f.endswith(os.path.join(net.id, "host"))), None)
            time.sleep(0.1)
        assert dhcp_host is not None, list(_files_under(data_dir))
        for name in ("pocketstack.db", "pocketstack.db-wal", "pocketstack.db-shm",
                     "admin-password", "clouds.yaml", "openrc"):
            assert _mode(os.path.join(data_dir, name)) == 0o600, name
        image_files = [f for f in _files_under(data_dir) if image.id in f]
        assert image_files
        loose = {f: oct(_mode(f)) for f in _files_under(data_dir) if _mode(f) & 0o077}
        assert not loose, loose
    finally:
        up.stop()
    # An existing cloud whose files were readable by others is tightened on start.
    os.chmod(data_dir, 0o755)
    os.chmod(os.path.join(data_dir, "pocketstack.db"), 0o644)
    up = UpProcess(data_dir, conf=CONF).start()
    try:
        assert _mode(data_dir) == 0o700
        assert _mode(os.path.join(data_dir, "pocketstack.db")) == 0o600
    finally:
        up.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_generated_password_is_shown_on_a_terminal():
    root = tempfile.mkdtemp(prefix="hardening-tty-")
    data_dir = os.path.join(root, "data")
    up = UpProcess(data_dir, conf=CONF, port=free_port())
    master, slave = pty.openpty()
    env = dict(up.env, COLUMNS="200")
    proc = subprocess.Popen(up.command, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    text = b""
    try:
        deadline = time.monotonic() + 60
        while b"Stop with Ctrl-C" not in text and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    text += os.read(master, 65536)
                except OSError:
                    break
            if proc.poll() is not None:
                break
        shown = text.decode(errors="replace")
        assert "pocketstack is up at" in shown, shown
        assert up.admin_password() in shown
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(master)
        shutil.rmtree(root, ignore_errors=True)
