"""The all-in-one cloud: data dir, config, database, keys, bootstrap, HTTP server and the
in-process services (conductor, scheduler, compute agents) — what `pocketstack up` runs
and what tests start in-process (``Cloud(...).start()``), like placement's direct.py.

Scale-out (`pocketstack service …`, cli/service.py) uses the same pieces: the api process
is a ``Cloud`` with ``roles`` (the RPC roles it runs itself, none by default); conductor,
scheduler and compute processes are an ``Agent`` (agent.py: config, database, keys; no
HTTP).

Services with background workers provide ``pocketstack/<service>/service.py`` with
``start(cloud) -> list`` of objects that have ``stop()``; they are started after the
database is ready and stopped in reverse order.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import gc
import logging
import os
import secrets
import shutil
import socket
import stat
import tempfile
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import openstack.connection
    from keystoneauth1 import session as ks_session

from pocketstack.common import ceph, config, db, policy, processes, rpc, runtime

LOG = logging.getLogger(__name__)


def _in_own_runtime(method):
    """Run a Cloud method inside that cloud's runtime (common/runtime.py): its
    configuration, database and caches, whichever clouds the process runs."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with self.runtime.activated():
            return method(self, *args, **kwargs)
    return run


def default_data_dir() -> str:
    if os.environ.get("POCKETSTACK_HOME"):
        return os.environ["POCKETSTACK_HOME"]
    base = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return os.path.join(base, "pocketstack")


class DataDirInUse(Exception):
    pass


# Seconds a start waits for the worker processes of a killed `up --workers` to exit (they
# exit as soon as they notice: workers._lifeline).
LEFTOVERS_TIMEOUT = 30.0


def _is_alive(pid: str) -> bool:
    """Whether process ``pid`` (of the lock file) still runs; a zombie does not."""
    if not pid.isdigit():
        return True  # no pid written yet: a start in progress
    return processes.running(int(pid))


def _wait_for_lock(f, pid: str, timeout: float) -> bool:
    LOG.warning("pocketstack (pid %s) was killed; waiting up to %gs for its worker "
                "processes to exit", pid, timeout)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
    return False


class CannotListen(Exception):
    pass


def _write_private(path: str, text: str) -> None:
    """Write a file readable by its owner only, atomically."""
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, stat.S_IRUSR | stat.S_IWUSR)
    os.replace(tmp, path)


def make_private_dir(path: str) -> None:
    """Create ``path`` or tighten an existing one to 0700 (it holds the database with the
    password hashes, keys and images: nobody else's business)."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode != 0o700:
        os.chmod(path, 0o700)
        LOG.warning("Tightened the permissions of %s from %o to 700", path, mode)


def owner_only_files() -> None:
    """Make the files this process creates from now on owner-only (umask 077: the
    database, its -wal/-shm, images, DHCP files). For pocketstack's own server processes
    (the CLI calls it); a library user's process keeps its umask, and the 0700 data dir
    already keeps everyone else out of an in-process cloud's files."""
    os.umask(0o077)


def tighten_database_files(url: str) -> None:
    """An SQLite database and its -wal/-shm written before umask 077 (or by an older
    pocketstack) become 0600."""
    if not url.startswith("sqlite:///"):
        return
    path = url[len("sqlite:///"):]
    for name in (path, path + "-wal", path + "-shm", path + "-journal"):
        try:
            if stat.S_IMODE(os.stat(name).st_mode) & 0o077:
                os.chmod(name, 0o600)
        except FileNotFoundError:
            pass


def collect_after_start() -> None:
    """For a process that serves one cloud and ran its start with the GC off: what the
    start made (~180k objects: modules, mappers, routes) lives as long as the process.
    Frozen, the collector never walks it again: otherwise the first collection after the
    start walked it all (~70 ms of CPU, in the way of the first requests) and so did every
    full collection after (~85 ms). The start's few cyclic leftovers (~1k objects) stay
    with it. Not for Cloud.start(): a library process starts and stops clouds, and would
    freeze the garbage of the stopped ones."""
    gc.freeze()
    gc.enable()


class Cloud:
    """A whole pocketstack cloud in this process.

    As a library (``from pocketstack import Cloud``)::

        with Cloud(hosts=2) as cloud:          # a temporary data dir, a free port
            conn = cloud.connection()          # openstacksdk, as admin
            conn.compute.flavors()
            cloud.session()                    # keystoneauth1
            cloud.clouds_yaml                  # for the openstack CLI, Terraform, Ansible

    ``data_dir`` None makes a temporary one, removed by ``stop()``; ``overrides`` maps
    "group.option" (or "option" of [DEFAULT]) to a value, e.g. {"fake.hosts": 8}. Several
    clouds may run in one process, one after another or at the same time: each has its own
    configuration, database and caches (``runtime``).
    """

    def __init__(self, data_dir: str | None = None, *, config_file: str | None = None,
                 admin_password: str | None = None, overrides: dict | None = None,
                 roles: tuple[str, ...] | None = None, hosts: int | None = None):
        self._owns_data_dir = data_dir is None
        if data_dir is None:
            data_dir = tempfile.mkdtemp(prefix="pocketstack-")
            # A throwaway cloud: fast password hashing, a known password.
            overrides = {"identity.password_hash_rounds": 4, **(overrides or {})}
            admin_password = admin_password or "pocketstack-admin"
        self.data_dir = os.path.abspath(data_dir)
        # Everything of this cloud that code elsewhere reaches through module functions
        # (config, database, caches) lives here, so clouds in one process stay apart.
        self.runtime = runtime.Runtime(os.path.basename(self.data_dir))
        # RPC roles run in this process (compute/service.py ROLES): None = all of them, the
        # all-in-one; a tuple = scale-out, the others run elsewhere over a message bus.
        self.roles = roles
        self.config_file = config_file or os.path.join(self.data_dir, "pocketstack.conf")
        self.config_file_given = config_file is not None
        self.requested_password = admin_password
        self.overrides = dict(overrides or {})
        if hosts is not None:
            self.overrides["fake.hosts"] = hosts
        self.admin_password: str | None = None
        self.password_generated = False
        self.first_start = False
        self.ids: dict = {}
        self.workers: list = []
        self._lock_file = None
        self._server = None  # the uvicorn.Server once serving (uvicorn is imported lazily)
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self.stop_requested = False
        self.ready = threading.Event()  # set once every service can take requests
        # Set once every service can answer reads (REST packages and policy loaded):
        # GET/HEAD need no background worker, so they are served while those start.
        self.reads_ready = threading.Event()
        self.app = None
        self.startup_error: Exception | None = None
        self._warm_up_thread: threading.Thread | None = None
        self._prepared = False       # prepare() finished: the data dir is complete
        self._made_data_dir = False  # prepare() created the data dir

    # --- preparation ----------------------------------------------------------------

    @property
    def url(self) -> str:
        with self.runtime.activated():
            return config.public_url()

    @property
    def auth_url(self) -> str:
        return self.url + "/identity"

    @property
    def clouds_yaml(self) -> str:
        """Path of the clouds.yaml naming this cloud ``pocketstack`` (admin)."""
        return os.path.join(self.data_dir, "clouds.yaml")

    def session(self, username: str = "admin", password: str | None = None, *,
                project_name: str | None = "admin", project_id: str | None = None,
                domain_id: str = "default") -> "ks_session.Session":
        """A keystoneauth1 session: the admin's, or any user's on a project."""
        from keystoneauth1 import session as ks_session
        from keystoneauth1.identity import v3

        scope: dict[str, Any] = ({"project_id": project_id} if project_id else
                                 {"project_name": project_name, "project_domain_id": domain_id})
        auth = v3.Password(auth_url=self.auth_url, username=username,
                           password=password or self.admin_password,
                           user_domain_id=domain_id, **scope)
        return ks_session.Session(auth=auth, session=self._http())

    def _http(self):
        """A requests session that reads the proxy settings once: by default requests
        looks at the environment, netrc and CA bundle on every request (a few
        milliseconds each, most of a small API call here)."""
        import requests

        http = requests.Session()
        http.proxies = requests.utils.get_environ_proxies(self.url)
        http.trust_env = False
        return http

    def connection(self, **session_args: Any) -> "openstack.connection.Connection":
        """An openstacksdk Connection (``pip install openstacksdk``) on ``session()``."""
        try:
            import openstack.connection
        except ImportError:
            raise ImportError("Cloud.connection() needs openstacksdk: pip install openstacksdk"
                              ) from None
        with self.runtime.activated():
            region = config.CONF.region_name
        return openstack.connection.Connection(session=self.session(**session_args),
                                               region_name=region)

    def __enter__(self) -> "Cloud":
        if self._server is None:
            self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def _acquire_lock(self) -> None:
        path = os.path.join(self.data_dir, "pocketstack.lock")
        f = open(path, "a+")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            pid = f.read().strip() or "?"
            # The worker processes of `up --workers` hold the lock too (workers.py): if
            # the pocketstack that took it was killed, they are exiting - wait for them.
            alive = _is_alive(pid)
            if alive or not _wait_for_lock(f, pid, LEFTOVERS_TIMEOUT):
                f.close()
                who = (f"pid {pid}" if alive else
                       f"worker processes of pid {pid}, killed, still running after "
                       f"{LEFTOVERS_TIMEOUT:g}s")
                raise DataDirInUse(
                    f"Another pocketstack ({who}) is already running on {self.data_dir}. "
                    "Stop it first, or use another --data-dir.") from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        self._lock_file = f

    @_in_own_runtime
    def prepare(self, bind: bool = False) -> "Cloud":
        """Everything before serving: idempotent, never overwrites existing state.

        ``bind=True`` takes the listening socket as soon as the config is read, so a port
        in use fails before any state is written.
        """
        if self.config_file_given and not os.path.isfile(self.config_file):
            raise config.ConfigError(f"Config file {self.config_file} does not exist.")
        self._made_data_dir = not os.path.exists(self.data_dir)
        make_private_dir(self.data_dir)
        self._acquire_lock()
        runtime.started(self.runtime)
        config.load(self.data_dir, self.config_file, self.overrides)
        config.check()
        if self.roles is not None:
            require_message_bus(self.config_file)
        rpc.preload()  # on this (main) thread: see rpc.preload
        if bind and self._socket is None:
            self.bind()
        # after the port is ours: a start that cannot listen leaves the data dir as it was
        config.record_start(self.data_dir, self.config_file, self.overrides)
        conf = config.CONF
        if conf.fernet_tokens.key_repository is None:
            conf.set_default("key_repository", os.path.join(self.data_dir, "fernet-keys"),
                             group="fernet_tokens")
        if not os.path.exists(self.config_file):
            _write_private(self.config_file, config.sample_config())
        self._load_admin_password()
        from pocketstack.clients import service_users

        service_passwords = service_users.ensure_passwords()  # agents alongside wait for it
        from pocketstack.compute.service import own_host_users

        host_passwords = service_users.ensure_passwords(own_host_users(self.runs_hosts()))
        from pocketstack.identity import bootstrap, fernet

        self.first_start = fernet.setup()
        db.migrate_new_sqlite(conf.database.connection)  # a new SQLite file: a copy
        db.configure(conf.database.connection)
        db.configure_models()
        db.migrate()
        tighten_database_files(conf.database.connection)
        policy.configure(self.data_dir)
        self.ids = bootstrap.bootstrap(self.admin_password, service_passwords, host_passwords)
        self._write_client_files()
        self._prepared = True
        return self

    def runs_hosts(self) -> bool:
        """Whether this cloud runs compute hosts of its own (the all-in-one's)."""
        return self.roles is None or "compute" in self.roles

    def _load_admin_password(self) -> None:
        path = os.path.join(self.data_dir, "admin-password")
        if os.path.exists(path):
            with open(path) as f:
                stored = f.read().strip()
            if self.requested_password and self.requested_password != stored:
                LOG.warning("The admin password is already set (see %s); --admin-password "
                            "is ignored. Change it with `openstack user password set`.", path)
            self.admin_password = stored
            return
        password = (self.requested_password or os.environ.get("POCKETSTACK_ADMIN_PASSWORD"))
        if not password:
            password = secrets.token_urlsafe(16)
            self.password_generated = True
        self.admin_password = password
        _write_private(path, password + "\n")

    def _write_client_files(self) -> None:
        region = config.CONF.region_name
        clouds = (
            "clouds:\n"
            "  pocketstack:\n"
            "    auth:\n"
            f"      auth_url: {self.auth_url}\n"
            "      username: admin\n"
            f"      password: {self.admin_password}\n"
            "      project_name: admin\n"
            "      user_domain_name: Default\n"
            "      project_domain_name: Default\n"
            f"    region_name: {region}\n"
            "    interface: public\n"
            "    identity_api_version: 3\n")
        _write_private(os.path.join(self.data_dir, "clouds.yaml"), clouds)
        openrc = (
            f"export OS_AUTH_URL={self.auth_url}\n"
            "export OS_USERNAME=admin\n"
            f"export OS_PASSWORD='{self.admin_password}'\n"
            "export OS_PROJECT_NAME=admin\n"
            "export OS_USER_DOMAIN_NAME=Default\n"
            "export OS_PROJECT_DOMAIN_NAME=Default\n"
            f"export OS_REGION_NAME={region}\n"
            "export OS_IDENTITY_API_VERSION=3\n"
            "export OS_INTERFACE=public\n")
        _write_private(os.path.join(self.data_dir, "openrc"), openrc)

    # --- background services --------------------------------------------------------

    @_in_own_runtime
    def start_workers(self) -> None:
        # Compute last (and so stopped first): its start-up recovery reschedules builds at
        # once, and a build calls the other services, whose managers (the volume
        # manager's RPC server) must be listening by then.
        for name in sorted(config.SERVICE_PACKAGES, key=lambda n: n == "compute"):
            if self.stop_requested:
                return
            mod = config.optional_module(name, "service")
            if mod is None:
                continue
            self.workers.extend(mod.start(self) or [])

    @_in_own_runtime
    def warm_up(self) -> None:
        """What every service but identity needs: the policy rules and each service's REST
        package, then the app lets reads through; the background workers, then writes
        too (they cast to the RPC roles, and start-up recovery must run before them)."""
        policy.enforcer()
        self.app.load_all()
        self.reads_ready.set()
        self.start_workers()
        self.ready.set()

    @_in_own_runtime
    def stop_workers(self) -> None:
        while self.workers:
            worker = self.workers.pop()
            try:
                worker.stop()
            except Exception:  # noqa: BLE001 - keep stopping the others
                LOG.exception("Stopping %r failed", worker)

    # --- serving ----------------------------------------------------------------------

    @_in_own_runtime
    def _uvicorn(self):
        import uvicorn

        from pocketstack.wsgi.app import PocketstackApp
        from pocketstack.wsgi.http_protocol import CoalescingHttpToolsProtocol

        conf = config.CONF
        self.app = PocketstackApp(self.ready, reads_ready=self.reads_ready)
        # Keep idle client connections for 75 s (nginx's default), not uvicorn's 5 s: with
        # 5 s, a client (requests/keystoneauth) reusing a pooled connection just as the
        # server drops it got "connection reset by peer" - seen as flaky SDK calls and
        # openstacksdk wrongly concluding the network service is absent.
        uconf = uvicorn.Config(self.app, host=conf.bind_host, port=conf.bind_port,
                               log_level="warning", access_log=False, lifespan="off",
                               timeout_graceful_shutdown=5, server_header=False,
                               timeout_keep_alive=75, ws="none",  # no websocket routes:
                               # ws="auto" imported the websockets package at every start
                               http=CoalescingHttpToolsProtocol)  # head + body: one write
        return uvicorn.Server(uconf)

    @_in_own_runtime
    def bind(self, host: str | None = None, port: int | None = None) -> None:
        """Take the listening socket now, so a port in use is a clear error before the
        summary is printed (default: [DEFAULT] bind_host and bind_port)."""
        host = host or config.CONF.bind_host
        port = config.CONF.bind_port if port is None else port
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as error:
            sock.close()
            raise CannotListen(f"Cannot listen on {host}:{port}: {error.strerror or error}. "
                               "Use --port (or [DEFAULT] bind_port) to pick another port."
                               ) from None
        self._socket = sock

    def request_stop(self) -> None:
        """Ask a foreground cloud to shut down (signal handlers call this); safe at any
        point: before serving it makes serve_forever return at once."""
        self.stop_requested = True
        if self._server is not None:
            self._server.should_exit = True

    @_in_own_runtime
    def serve_forever(self, on_ready: Callable[[], None] | None = None) -> None:
        """Foreground: serve until SIGINT/SIGTERM or request_stop(), then clean up (stop
        the workers, close the database, release the data dir).

        Identity answers as soon as the port listens; the rest warms up in a thread right
        after (requests to other services wait for it), then ``on_ready`` is called. If
        the warm-up fails the cloud stops and ``startup_error`` says why.
        """
        try:
            if self._socket is None:
                self.bind()
            self._server = self._uvicorn()
            if self.stop_requested:
                self._server.should_exit = True
            self._warm_up_thread = threading.Thread(
                target=self._warm_up_when_listening, args=(on_ready,),
                name="pocketstack-warm-up", daemon=True)
            self._warm_up_thread.start()
            self._server.run(sockets=[self._socket])
        finally:
            self.close()

    @_in_own_runtime
    def _warm_up_when_listening(self, on_ready) -> None:
        while not self._server.started and not self.stop_requested:
            time.sleep(0.005)  # let uvicorn start before competing with it for the GIL
        try:
            if not self.stop_requested:
                self.warm_up()
                if on_ready is not None and not self.stop_requested:
                    on_ready()
        except Exception as error:  # noqa: BLE001 - reported by whoever runs the cloud
            LOG.error("pocketstack could not start: %s", error, exc_info=True)
            self.startup_error = error
            self.request_stop()

    @_in_own_runtime
    def start(self, port: int | None = 0) -> "Cloud":
        """Serve in a background thread, ready when this returns. ``port=0`` (default)
        picks a free port; None uses [DEFAULT] bind_port. A failed start leaves nothing
        running."""
        gc_was_on = gc.isenabled()
        gc.disable()  # the objects a start makes all live on: see `up` in cli/main.py
        try:
            return self._start(port)
        except BaseException:
            self.stop()
            raise
        finally:
            if gc_was_on:
                gc.enable()

    def _start(self, port: int | None) -> "Cloud":
        if port is not None:
            self.bind(self.overrides.get("bind_host", "127.0.0.1"), port)
            self.overrides["bind_port"] = self._socket.getsockname()[1]
        self.prepare()
        self._server = self._uvicorn()
        self.warm_up()
        sockets = [self._socket] if self._socket else None
        self._thread = threading.Thread(target=runtime.bind(self._server.run),
                                        kwargs={"sockets": sockets},
                                        name="pocketstack-http", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("pocketstack's HTTP server did not start")
            time.sleep(0.002)  # uvicorn is up within milliseconds of the thread starting
        return self

    @_in_own_runtime
    def stop(self) -> None:
        """Stop serving and release everything; a temporary data dir is removed."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self.close()
        if self._owns_data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    @_in_own_runtime
    def close(self) -> None:
        if self._warm_up_thread is not None:  # never start workers behind stop_workers
            self.stop_requested = True
            self._warm_up_thread.join(timeout=30)
            self._warm_up_thread = None
        self.stop_workers()
        ceph.shutdown()  # after the workers: nothing of this cloud uses Ceph any more
        rpc.cleanup()
        db.dispose()
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._lock_file is not None:
            if not self._prepared:  # a failed start leaves no lock and no half-made dir
                if self._made_data_dir:
                    shutil.rmtree(self.data_dir, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(self.data_dir, "pocketstack.lock"))
            self._lock_file.close()
            self._lock_file = None
        runtime.stopped(self.runtime)


# --- scale-out: processes that run RPC roles only ------------------------------------------

def require_message_bus(config_file: str) -> None:
    """Roles in separate processes reach each other only through a broker."""
    if rpc.is_inproc(config.CONF.transport_url):
        raise config.ConfigError(
            "transport_url is inproc://, which only connects services inside one process "
            "(`pocketstack up`). Roles run as separate processes need RabbitMQ: set "
            "[DEFAULT] transport_url = rabbit://USER:PASSWORD@HOST:5672/ in "
            f"{config_file}, the same on every node.")
