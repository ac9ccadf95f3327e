"""`pocketstack up` in a child process, for tests of the command itself and of the cloud on
other database engines (tests/db/conftest.py). Import with ``from helpers.up_process import
UpProcess``.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import httpx

EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class UpProcess:
    """One `pocketstack up --data-dir D --port P [args]`; output goes to ``D/../up-N.log``.

    ``conf`` (text) is written to a config file passed with --config-file; without it the
    command uses ``<data dir>/pocketstack.conf``.
    """

    def __init__(self, data_dir: str, *, args: tuple = (), conf: str | None = None,
                 env: dict | None = None, port: int | None = None):
        self.data_dir = data_dir
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.auth_url = self.url + "/identity"
        self.args = list(args)
        self.env = dict(os.environ, **(env or {}))
        self.env.pop("POCKETSTACK_HOME", None)
        self.env.pop("POCKETSTACK_ADMIN_PASSWORD", None)
        self.env.update(env or {})
        self.config_file = None
        parent = os.path.dirname(os.path.abspath(data_dir))
        os.makedirs(parent, exist_ok=True)
        if conf is not None:
            self.config_file = os.path.join(parent, f"conf-{self.port}.conf")
            with open(self.config_file, "w") as f:
                f.write(conf)
            self.args += ["--config-file", self.config_file]
        self.log_path = os.path.join(parent, f"up-{self.port}.log")
        self.proc: subprocess.Popen | None = None
        self._log = None

    @property
    def command(self) -> list[str]:
        return [EXE, "up", "--data-dir", self.data_dir, "--port", str(self.port), *self.args]

    def spawn(self) -> "UpProcess":
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.command, stdout=self._log, stderr=subprocess.STDOUT,
                                     env=self.env)
        return self

    def start(self, timeout: float = 60) -> "UpProcess":
        """Spawn and wait until every service is ready: /identity/v3 answers 200 and the
        summary (printed once the other services have warmed up) is out."""
        self.spawn()
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=2) as client:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise AssertionError(f"pocketstack up exited {self.proc.returncode}:\n"
                                         + self.output())
                try:
                    if (client.get(self.auth_url + "/v3").status_code == 200
                            and "pocketstack is up at" in self.output()):
                        return self
                except httpx.HTTPError:
                    pass
                time.sleep(0.05)
        self.stop()
        raise AssertionError("pocketstack up did not answer in time:\n" + self.output())

    def output(self) -> str:
        if self._log is not None:
            self._log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int | None:
        """Send ``sig`` and wait for the exit status (killed after ``timeout``)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        return self.proc.returncode

    def session(self, username="admin", password=None, project_name="admin",
                domain_id="default"):
        from keystoneauth1 import session
        from keystoneauth1.identity import v3

        auth = v3.Password(auth_url=self.auth_url, username=username,
                           password=password or self.admin_password(), user_domain_id=domain_id,
                           project_name=project_name, project_domain_id=domain_id)
        return session.Session(auth=auth)

    def sdk(self, **kwargs):
        import openstack

        return openstack.connection.Connection(session=self.session(**kwargs),
                                               region_name="RegionOne")

    def admin_password(self) -> str:
        with open(os.path.join(self.data_dir, "admin-password")) as f:
            return f.read().strip()


def run_up(data_dir: str, *args: str, env: dict | None = None, timeout: float = 60):
    """Run `pocketstack up` expecting it to exit by itself (e.g. an error): CompletedProcess."""
    environ = dict(os.environ)
    environ.pop("POCKETSTACK_HOME", None)
    environ.update(env or {})
    return subprocess.run([EXE, "up", "--data-dir", data_dir, *args], capture_output=True,
                          text=True, timeout=timeout, env=environ)


def settled_servers(conn, ids, bound: float = 120.0) -> dict:
    """``{id: server}`` once every one of ``ids`` is ACTIVE or ERROR (a bounded wait for
    correctness, not timing)."""
    deadline = time.monotonic() + bound
    while True:
        servers = {s.id: s for s in conn.compute.servers(details=True)}
        if all(i in servers and servers[i].status in ("ACTIVE", "ERROR") for i in ids):
            return {i: servers[i] for i in ids}
        assert time.monotonic() < deadline, {i: servers[i].status if i in servers
                                             else "not listed" for i in ids}
        time.sleep(0.2)
