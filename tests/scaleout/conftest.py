"""Scale-out fixtures: the cloud as separate `pocketstack service …` processes over the real
RabbitMQ (127.0.0.1:5672, guest/guest) and PostgreSQL (127.0.0.1:5432) on this machine.

``scaleout`` (module scope) makes a throw-away PostgreSQL database and a RabbitMQ virtual
host of its own (``rabbitmqctl``; without it, prefixed topics on the default vhost: see
``Broker``), writes the API's config file, and starts ``api``, ``conductor``, ``scheduler``
and two ``compute`` agents (cmp-a, cmp-b), each agent with a data dir and a copy of that
config of its own (the computes' without database settings: they reach the cloud through
the conductor). Teardown stops whatever still runs (SIGTERM, then SIGKILL after a bound),
drops the database and deletes the vhost (or the queues). Without a broker or a
PostgreSQL server the tests skip, saying which is missing.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import httpx
import pytest
import sqlalchemy as sa

EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")
ADMIN_PASSWORD = "scaleout-admin-secret"
PG_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
COMPUTE_HOSTS = ("cmp-a", "cmp-b")

# Short timings so failures show within the test's budget (defaults are 10/60/10/120 s).
# A build gets 15 s (a rescheduled one at load 14 took more than 8: ports over HTTP,
# RabbitMQ casts, the vif-plugged wait), and the vif-plugged wait 12 s, inside it.
TIMINGS = {"report_interval": 0.5, "periodic_interval": 0.5, "service_down_time": 4.0,
           "build_timeout": 15.0}


def _listening(port: int) -> str | None:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return None
    except OSError as error:
        return error.strerror or str(error)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


RABBITMQCTL = shutil.which("rabbitmqctl") or "/usr/sbin/rabbitmqctl"


def _rabbitmqctl(*args: str) -> None:
    subprocess.run([RABBITMQCTL, *args], check=True, capture_output=True, timeout=60)


class Broker:
    """Where this run's RPC goes. A RabbitMQ virtual host of its own, made with rabbitmqctl
    (seconds: an Erlang VM per call, so it is made in the background while the API starts)
    and deleted afterwards. Without rabbitmqctl (a broker elsewhere, not root), or with
    POCKETSTACK_TEST_SHARED_VHOST=1: the default vhost with this run's name as
    [DEFAULT] control_exchange and rpc_topic_prefix, and its queues deleted afterwards
    (but for the fanout queue of a killed compute: its name is random; it expires after
    [oslo_messaging_rabbit] rabbit_transient_queues_ttl)."""

    def __init__(self, name: str):
        self.name = name
        self.own_vhost = (os.path.exists(RABBITMQCTL)
                          and not os.environ.get("POCKETSTACK_TEST_SHARED_VHOST"))
        self.url = ("rabbit://guest:guest@127.0.0.1:5672/"
                    + (name if self.own_vhost else ""))
        self.state: dict = {}
        self._thread = threading.Thread(target=self._make_vhost, daemon=True)

    def config(self) -> str:
        lines = f"transport_url = {self.url}\n"
        if not self.own_vhost:
            lines += f"control_exchange = {self.name}\nrpc_topic_prefix = {self.name}.\n"
        return lines

    def start(self) -> None:
        if self.own_vhost:
            self._thread.start()

    def _make_vhost(self) -> None:
        try:
            _rabbitmqctl("add_vhost", self.name)
            self.state["created"] = True
            _rabbitmqctl("set_permissions", "-p", self.name, "guest", ".*", ".*", ".*")
            self.state["ok"] = True
        except Exception as error:  # noqa: BLE001 - reported by ready()
            self.state["error"] = getattr(error, "stderr", None) or error

    def ready(self) -> None:
        if self.own_vhost:
            self._thread.join(timeout=90)
            if "ok" not in self.state:
                raise AssertionError(f"could not create the RabbitMQ vhost {self.name}: "
                                     f"{self.state.get('error', 'timed out')} (set "
                                     "POCKETSTACK_TEST_SHARED_VHOST=1 to share the default "
                                     "vhost instead)")

    def cleanup(self, hosts) -> None:
        if self.own_vhost:
            if self._thread.ident is not None:
                self._thread.join(timeout=90)
            if self.state.get("created"):
                _rabbitmqctl("delete_vhost", self.name)
            return
        import kombu

        topics = ["conductor", "scheduler", "compute", "network"]
        queues = topics + ["conductor.controller", "scheduler.controller",
                           "network.controller"] + [
            f"compute.{h}" for h in hosts]
        with kombu.Connection(self.url.replace("rabbit://", "amqp://")) as conn:
            channel = conn.channel()
            for queue in queues:
                channel.queue_delete(f"{self.name}.{queue}")
            for exchange in [self.name] + [f"{self.name}.{t}_fanout" for t in topics]:
                channel.exchange_delete(exchange)


class Node:
    """One `pocketstack service ROLE …` child; its output goes to ``<tmp>/<name>.log``."""

    def __init__(self, name: str, role: str, args: list[str], tmp: str):
        self.name, self.role = name, role
        self.command = [EXE, "service", role, *args]
        self.log_path = os.path.join(tmp, f"{name}.log")
        self.proc: subprocess.Popen | None = None
        self._log = None

    def spawn(self) -> "Node":
        self._log = open(self.log_path, "wb")
        env = dict(os.environ)
        env.pop("POCKETSTACK_HOME", None)
        self.proc = subprocess.Popen(self.command, stdout=self._log, stderr=subprocess.STDOUT,
                                     env=env)
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def output(self) -> str:
        if self._log is not None:
            self._log.flush()
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def signal(self, sig: int) -> None:
        if self.alive:
            self.proc.send_signal(sig)

    def wait(self, timeout: float) -> int | None:
        """The exit status, or None if it still runs after ``timeout``."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout: float = 20) -> int | None:
        """SIGTERM, then SIGKILL after ``timeout``; the exit status."""
        if self.proc is None:
            return None
        self.signal(signal.SIGTERM)
        if self.wait(timeout) is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None
        return self.proc.returncode


class ScaleOut:
    """Handle for tests: ``url``, ``nodes`` by name, ``session()``, ``sdk()``, ``db()``."""

    def __init__(self, tmp: str, port: int, db_url: str):
        self.tmp, self.port, self.db_url = tmp, port, db_url
        self.url = f"http://127.0.0.1:{port}"
        self.auth_url = self.url + "/identity"
        self.data_dir = os.path.join(tmp, "data")
        self.config_file = os.path.join(tmp, "pocketstack.conf")
        self.nodes: dict[str, Node] = {}
        self.hosts, self.timings = COMPUTE_HOSTS, TIMINGS
        self.host_passwords: dict[str, str] = {}  # compute host -> its own user's password
        self._engine = None

    def node(self, name: str, role: str, *extra: str) -> Node:
        data_dir, config_file = self.data_dir, self.config_file
        if role != "api":
            # A node of its own, as on another machine: a data dir without the API host's
            # keys, tables or files; the config names the nova service user's password.
            data_dir = os.path.join(self.tmp, "nodes", name)
            config_file = os.path.join(self.tmp, f"{name}.conf")
            with open(self.config_file) as f, open(config_file, "w") as out:
                text = f.read()
                if role == "compute":
                    # What it reads and changes goes through the conductor: its config has
                    # no database settings at all (it refuses to start with them).
                    text = text.replace("[compute]\n", "[compute]\n"
                                        "database_access = conductor\n")
                    text = re.sub(r"\[database\]\n(?:[^\[\n][^\n]*\n)*", "", text)
                users = f"[service_user]\nnova_password = {self.service_password('nova')}\n"
                if role == "compute":
                    # Its own user's password: the conductor believes its name only so.
                    users += f"host_password = {self.host_passwords[name]}\n"
                out.write(text + users)
        args = ["--data-dir", data_dir, "--config-file", config_file, *extra]
        self.nodes[name] = Node(name, role, args, self.tmp)
        return self.nodes[name]

    def host_credential(self, host: str) -> str:
        """`pocketstack host-credential HOST` on the API host, as an operator runs it:
        the password it prints for the host's config."""
        result = subprocess.run([EXE, "host-credential", host, "--data-dir", self.data_dir,
                                 "--config-file", self.config_file], capture_output=True,
                                text=True, timeout=120, env={
                                    k: v for k, v in os.environ.items()
                                    if k != "POCKETSTACK_HOME"})
        assert result.returncode == 0, result.stderr
        found = re.search(r"^host_password = (\S+)$", result.stdout, re.M)
        assert found, result.stdout
        self.host_passwords[host] = found.group(1)
        return found.group(1)

    def service_password(self, user: str) -> str:
        with open(os.path.join(self.data_dir, "service-passwords")) as f:
            return json.load(f)[user]

    def logs(self) -> str:
        return "\n".join(f"===== {name} =====\n{node.output()[-6000:]}"
                         for name, node in self.nodes.items())

    def session(self):
        from keystoneauth1 import session
        from keystoneauth1.identity import v3

        auth = v3.Password(auth_url=self.auth_url, username="admin", password=ADMIN_PASSWORD,
                           user_domain_id="default", project_name="admin",
                           project_domain_id="default")
        return session.Session(auth=auth)

    def sdk(self):
        import openstack

        return openstack.connection.Connection(session=self.session(),
                                               region_name="RegionOne")

    def db(self) -> sa.Engine:
        if self._engine is None:
            self._engine = sa.create_engine(self.db_url, poolclass=sa.pool.NullPool)
        return self._engine

    def services(self, sess) -> dict[tuple[str, str], dict]:
        r = sess.get(self.url + "/compute/v2.1/os-services", raise_exc=False)
        assert r.status_code == 200, r.text
        return {(s["binary"], s["host"]): s for s in r.json()["services"]}

    def wait_for(self, what: str, check, timeout: float, interval: float = 0.1):
        """Poll ``check()`` until it returns something truthy; fail with every log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            for node in self.nodes.values():
                if node.proc is not None and node.proc.poll() is not None and node.role \
                        and not getattr(node, "expected_exit", False):
                    raise AssertionError(f"{node.name} exited {node.proc.returncode} while "
                                         f"waiting for {what}:\n{self.logs()}")
            time.sleep(interval)
        raise AssertionError(f"timed out after {timeout:g}s waiting for {what}:\n"
                             + self.logs())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test shows every process's log (they are deleted with the temp dir)."""
    report = yield
    cloud = getattr(item, "funcargs", {}).get("scaleout")
    if report.failed and isinstance(cloud, ScaleOut):
        report.sections.append(("pocketstack service logs", cloud.logs()))
    return report


def _config(port: int, db_url: str, broker: Broker) -> str:
    compute = "\n".join(f"{k} = {v}" for k, v in TIMINGS.items())
    return (f"[DEFAULT]\nbind_port = {port}\nhost = controller\n{broker.config()}"
            f"[database]\nconnection = {db_url}\n"
            "[identity]\npassword_hash_rounds = 4\n"
            f"[compute]\n{compute}\nvif_plugging_timeout = 12\n"
            "[fake]\nhosts = 0\n")


@pytest.fixture(scope="module")
def scaleout():
    for name, port in (("RabbitMQ", 5672), ("PostgreSQL", 5432)):
        reason = _listening(port)
        if reason:
            print(f"\nskipping: {name} is not listening on 127.0.0.1:{port} ({reason})")
            pytest.skip(f"{name} is not listening on 127.0.0.1:{port} ({reason})")
    tmp = tempfile.mkdtemp(prefix="pocketstack-scaleout-")
    suffix = uuid.uuid4().hex[:10]
    broker, db_name = Broker(f"pocketstack-test-{suffix}"), f"pocketstack_test_{suffix}"
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT",
                             poolclass=sa.pool.NullPool)
    cloud = ScaleOut(tmp, free_port(), PG_URL.format(name=db_name))
    broker.start()
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {db_name} ENCODING 'UTF8' "
                                 "TEMPLATE template0")
        with open(cloud.config_file, "w") as f:
            f.write(_config(cloud.port, cloud.db_url, broker))
        # The API migrates and bootstraps (it touches the broker only on its first RPC);
        # agents need the nova service user's password and the vhost, then wait for the
        # schema themselves.
        cloud.node("api", "api", "--admin-password", ADMIN_PASSWORD).spawn()
        passwords = os.path.join(cloud.data_dir, "service-passwords")
        cloud.wait_for("the service users' passwords", lambda: os.path.isfile(passwords),
                       timeout=60)
        broker.ready()
        cloud.node("conductor", "conductor").spawn()
        cloud.node("scheduler", "scheduler").spawn()

        def api_ready():
            try:
                r = httpx.get(cloud.url + "/compute/v2.1", timeout=30)
                return r.status_code in (200, 401)
            except httpx.HTTPError:
                return False

        cloud.wait_for("the api", api_ready, timeout=90, interval=0.2)
        # Each compute host's own identity user, made on the API host before the host
        # starts (its calls to the conductor carry that user's token).
        for host in COMPUTE_HOSTS:
            cloud.host_credential(host)
            cloud.node(host, "compute", "--host", host).spawn()
        sess = cloud.session()
        wanted = {("nova-conductor", "controller"), ("nova-scheduler", "controller")} | {
            ("nova-compute", h) for h in COMPUTE_HOSTS}

        def all_up():
            services = cloud.services(sess)
            return all(services.get(k, {}).get("state") == "up" for k in wanted)

        cloud.wait_for("every service up in os-services", all_up, timeout=90, interval=0.2)
        yield cloud
    finally:
        _teardown(cloud, admin, db_name, broker)


def _teardown(cloud, admin, db_name, broker) -> None:
    """Stop every process (in parallel, bounded), then drop the database and clean the
    broker (in parallel: rabbitmqctl takes seconds)."""
    stoppers = [threading.Thread(target=n.stop) for n in cloud.nodes.values()]
    for t in stoppers:
        t.start()
    for t in stoppers:
        t.join(timeout=40)
    if cloud._engine is not None:
        cloud._engine.dispose()

    def clean_broker():
        try:
            broker.cleanup(COMPUTE_HOSTS)
        except Exception as error:  # noqa: BLE001 - say so, do not hide the test result
            print(f"could not clean up RabbitMQ ({broker.name}): {error}")

    cleaner = threading.Thread(target=clean_broker, daemon=True)
    cleaner.start()
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {db_name} WITH (FORCE)")
    finally:
        admin.dispose()
        cleaner.join(timeout=120)
        shutil.rmtree(cloud.tmp, ignore_errors=True)
