"""The cloud from scripts, CI and other languages — `pocketstack up --detach`,
`wait`, `down` with their exit codes — and `pocketstack demo` on a plain install (no
openstacksdk); a failed `up` leaves no lock and no half-made data dir."""
from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")
# The command as a plain install runs it: openstacksdk cannot be imported.
WITHOUT_SDK = [sys.executable, "-c",
               "import sys; sys.modules['openstack'] = None; sys.argv[0] = 'pocketstack'; "
               "from pocketstack.cli.main import main; main()"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OS_", "POCKETSTACK_"))}
    env["POCKETSTACK_ADMIN_PASSWORD"] = "detach-secret"
    return env


def _run(*args, timeout=180, command=(EXE,)):
    return subprocess.run([*command, *args], capture_output=True, text=True, env=_env(),
                          timeout=timeout)


@pytest.fixture
def detached(tmp_path):
    data = str(tmp_path / "data")
    port = _free_port()
    proc = _run("up", "--detach", "--data-dir", data, "--port", str(port))
    try:
        yield data, port, proc
    finally:
        _run("down", "--data-dir", data)


def test_detach_wait_demo_down(detached):
    data, port, up = detached
    assert up.returncode == 0, up.stderr
    assert f"pocketstack is up at http://127.0.0.1:{port}" in up.stdout
    assert "Stop with `pocketstack down`." in up.stdout
    # The line to paste, naming this data dir (the README's assumes the default one).
    assert f"export OS_CLIENT_CONFIG_FILE={data}/clouds.yaml OS_CLOUD=pocketstack" in up.stdout
    pid = int(open(os.path.join(data, "pocketstack.pid")).read())
    assert os.path.exists(f"/proc/{pid}")
    assert "pocketstack is up" in open(os.path.join(data, "pocketstack.log")).read()

    wait = _run("wait", "--data-dir", data, "--timeout", "30")
    assert wait.returncode == 0 and "is ready" in wait.stdout, wait.stderr

    demo = _run("demo", "--data-dir", data, command=WITHOUT_SDK)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "created  server instance_hrp2" in demo.stdout
    assert "define and start the guest" in demo.stdout
    assert os.path.getsize(os.path.join(data, "cirros.img")) > 0
    # Every file of the data dir is owner-only, the demo's image and the log too.
    loose = {os.path.join(base, name): oct(os.stat(os.path.join(base, name)).st_mode & 0o777)
             for base, _, names in os.walk(data) for name in names
             if os.stat(os.path.join(base, name)).st_mode & 0o077}
    assert not loose, loose

    again = _run("up", "--detach", "--data-dir", data, "--port", str(_free_port()))
    assert again.returncode == 1 and "already running" in again.stderr

    down = _run("down", "--data-dir", data)
    assert down.returncode == 0 and f"pocketstack (pid {pid}) stopped." in down.stdout
    assert not os.path.exists(f"/proc/{pid}") or \
        open(f"/proc/{pid}/stat").read().split(") ", 1)[1][:1] == "Z"
    assert not os.path.exists(os.path.join(data, "pocketstack.pid"))
    down = _run("down", "--data-dir", data)
    assert down.returncode == 0 and "not running" in down.stdout
    wait = _run("wait", "--data-dir", data, "--timeout", "1")
    assert wait.returncode == 1 and "not ready after 1s" in wait.stderr
    assert "Traceback" not in wait.stderr + down.stderr + demo.stderr


def test_detach_on_a_port_in_use_fails_and_leaves_nothing(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = _run("up", "--detach", "--data-dir", str(tmp_path / "data"), "--port",
                    str(port))
    assert proc.returncode == 1
    assert f"Cannot listen on 127.0.0.1:{port}" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert os.listdir(tmp_path) == []  # no data dir, no log


def test_failed_up_on_an_existing_data_dir_leaves_no_lock(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "notes.txt").write_text("mine")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        proc = _run("up", "--data-dir", str(data), "--port", str(busy.getsockname()[1]))
    assert proc.returncode == 1 and "Cannot listen" in proc.stderr
    assert sorted(os.listdir(data)) == ["notes.txt"]


def test_wait_without_a_cloud_says_what_to_do(tmp_path):
    proc = _run("wait", "--data-dir", str(tmp_path))
    assert proc.returncode == 1 and "no clouds.yaml" in proc.stderr
