"""oslo.config options, grouped as in nova.conf, and the documented sample file.

Each service keeps its own options in ``pocketstack/<service>/conf.py`` as
``OPTS = {"group": [opt, ...]}``; they are registered here on import so that the sample
file written on first start lists every option.
"""
from __future__ import annotations

import importlib
import json
import os
import textwrap
import threading
import uuid

from pocketstack.common import deferred

# Imported by oslo.config (and oslo.policy) at their top, used by no start: on first use.
# yaml: oslo.policy reads policy.yaml with it, when there is one.
for _name in ("stevedore", "netaddr", "rfc3986", "oslo_utils.strutils", "yaml"):
    deferred.defer(_name)

from oslo_config import cfg  # noqa: E402 - after the deferrals above

from pocketstack.common import runtime  # noqa: E402


class _CloudConfig:
    """One cloud's ConfigOpts with every option registered, and its data dir.

    pocketstack's own ConfigOpts, not oslo's global cfg.CONF: oslo.messaging registers its
    [DEFAULT] transport_url and other options on the global one (common/rpc.py gives it
    that), and the two definitions of transport_url would clash on one object.
    """

    def __init__(self):
        self.opts = cfg.ConfigOpts()
        self.data_dir: str | None = None
        self.cloud_id: str | None = None  # read from the data dir at first use
        for group, opts in service_opts().items():
            self.opts.register_opts(opts, group=None if group == "DEFAULT" else group)


def _cloud_config() -> _CloudConfig:
    return runtime.current().slot(__name__, _CloudConfig)


def conf() -> cfg.ConfigOpts:
    """The current cloud's ConfigOpts (common/runtime.py says which cloud is current)."""
    return _cloud_config().opts


class _CurrentConf:
    """``CONF.group.option`` reads the current cloud's configuration: each cloud in the
    process has its own (common/runtime.py)."""

    __slots__ = ()

    def __getattr__(self, name):
        return getattr(_cloud_config().opts, name)

    def __call__(self, *args, **kwargs):
        return _cloud_config().opts(*args, **kwargs)


CONF = _CurrentConf()

# The packages whose conf.py (if present) contributes options, in catalog order.
SERVICE_PACKAGES = ("identity", "compute", "image", "network", "volume", "placement",
                    "objectstore", "keymanager", "loadbalancer", "dns")

DEFAULT_OPTS = [
    cfg.StrOpt("bind_host", default="127.0.0.1", help="Address the API listens on."),
    cfg.PortOpt("bind_port", default=8000, help="Port the API listens on."),
    cfg.StrOpt("public_url",
               help="Base URL clients reach the API at (used in the service catalog and "
                    "links). Default: http://<bind_host>:<bind_port>."),
    cfg.StrOpt("region_name", default="RegionOne", help="Region of this cloud's endpoints."),
    cfg.IntOpt("max_request_body_size", default=1024 * 1024, min=1024,
               help="Largest JSON request body in bytes; larger ones get 413. Image data "
                    "uploads are streamed and capped by [image] image_size_cap instead."),
    cfg.StrOpt("transport_url", default="inproc://", secret=True,
               help="RPC transport: inproc:// (one process) or rabbit://user:pass@host:5672/."),
    cfg.StrOpt("rpc_topic_prefix", default="",
               help="Prefix of every RPC topic on the message bus (conductor, scheduler, "
                    "compute.<host>), so that several clouds can share one RabbitMQ virtual "
                    "host (set [DEFAULT] control_exchange too). A virtual host per cloud "
                    "isolates better; this is for brokers where you cannot make one."),
    cfg.StrOpt("host", default="localhost", help="Name of this host in service records."),
    cfg.BoolOpt("debug", default=False, help="Log at DEBUG level."),
    cfg.BoolOpt("access_log", default=False,
                help="Log one line per HTTP request (method, path, status, time, request id)."),
]

DATABASE_OPTS = [
    cfg.StrOpt("connection", secret=True,
               help="SQLAlchemy URL. Default: sqlite:///<data dir>/pocketstack.db. Examples: "
                    "postgresql+psycopg://user@127.0.0.1/pocketstack, "
                    "mysql+pymysql://root@127.0.0.1/pocketstack."),
    cfg.IntOpt("pool_size", default=10, help="Connection pool size (not used for SQLite)."),
]

# Each service's own user in the identity service (as DevStack makes them), with which it
# authenticates its calls to the other services (clients/service_users.py).
SERVICE_USER_NAMES = ("nova", "neutron", "cinder", "glance", "octavia", "designate",
                      "swift")

SERVICE_USER_OPTS = [
    cfg.StrOpt("auth_url",
               help="Identity API the services log in at with their service users, e.g. "
                    "http://controller:8000/identity/v3 on a compute host. Default: this "
                    "cloud's own (<public_url>/identity/v3)."),
    cfg.StrOpt("project_name", default="service", help="Project of the service users."),
    cfg.StrOpt("password_file",
               help="File of the service users' passwords that the API host generates at "
                    "its first start (owner-only, JSON). Default: <data dir>/service-passwords. "
                    "An option below wins over the file."),
] + [cfg.StrOpt(f"{name}_password", secret=True,
                help=f"Password of the {name} service user. On the API host it is set at the "
                     f"first start (generated into password_file when not given); other hosts "
                     f"need the same value here (or the same file).")
     for name in SERVICE_USER_NAMES] + [
    cfg.StrOpt("host_password", secret=True,
               help="On a compute host with [compute] database_access = conductor: the "
                    "password of this host's own user, nova-compute-<host>, whose token "
                    "proves to the conductor which host asks (`pocketstack host-credential "
                    "<host>` on the API host makes the user and prints it). Default: the "
                    "key nova-compute-<host> of password_file (a process running several "
                    "hosts reads each one's there)."),
    cfg.StrOpt("metadata_proxy_shared_secret", secret=True,
               help="Secret the network agent's metadata proxy signs a guest's instance id "
                    "with (X-Instance-ID-Signature) and compute's metadata API checks, as "
                    "nova's and neutron's metadata_proxy_shared_secret. Default: the one the "
                    "API host generates into password_file; a network host elsewhere needs "
                    "the same value here (or the same file)."),
]


# Ceph: one cluster the image, volume and compute services share, each as its
# own cephx user on its own pool (common/ceph.py connects; common/ceph_cluster.py makes a
# one-node cluster for a lab). Named after glance's rbd_store_*, cinder's rbd_* and nova's
# [libvirt] images_rbd_* options, gathered in one section.
CEPH_OPTS = [
    cfg.StrOpt("conf",
               help="ceph.conf of the cluster. Default: <data dir>/ceph/ceph.conf, the "
                    "cluster `pocketstack ceph start` makes."),
    cfg.StrOpt("keyring",
               help="Keyring file for every user below (default: what ceph.conf says, "
                    "e.g. ceph.client.<user>.keyring beside it)."),
    cfg.StrOpt("image_user", default="glance", help="cephx user of the image service."),
    cfg.StrOpt("image_pool", default="images", help="Pool of the image service's rbd store."),
    cfg.StrOpt("volume_user", default="cinder", help="cephx user of the volume service "
               "and of the compute hosts that attach its volumes."),
    cfg.StrOpt("volume_pool", default="volumes", help="Pool of the rbd volume backend."),
    cfg.StrOpt("compute_user", default="cinder",
               help="cephx user of the compute hosts' instance disks (upstream's guide "
                    "shares cinder's)."),
    cfg.StrOpt("compute_pool", default="vms",
               help="Pool of instance disks with [libvirt] images_type = rbd."),
    cfg.StrOpt("backup_user", default="cinder-backup", help="cephx user of volume backups."),
    cfg.StrOpt("backup_pool", default="backups", help="Pool of volume backups on rbd."),
    cfg.StrOpt("rgw_user", default="rgw",
               help="cephx user the cloud's radosgw runs as ([objectstore] backend = rgw)."),
    cfg.StrOpt("secret_uuid",
               help="UUID of the libvirt secret holding volume_user's key (cinder's and "
                    "nova's rbd_secret_uuid). Default: derived from the cloud's id "
                    "(<data dir>/cloud-id), so each cloud on a machine has its own secret "
                    "in the machine's libvirtd."),
    cfg.FloatOpt("connect_timeout", default=10.0, min=1.0,
                 help="Seconds to wait for the cluster's monitors."),
    cfg.FloatOpt("op_timeout", default=0.0, min=0.0,
                 help="Seconds one read, write or monitor command may take before it fails "
                      "(librados' rados_osd_op_timeout / rados_mon_op_timeout); 0: no "
                      "limit, as cinder and glance leave it. librbd does not expect its "
                      "operations to time out and may abort the whole process when one "
                      "does (seen here on a starved OSD), so set it only for diagnosis."),
]


def optional_module(service: str, module: str):
    """``pocketstack.<service>.<module>`` if that service provides it, else None."""
    name = f"pocketstack.{service}.{module}"
    try:
        mod = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name not in (name, f"pocketstack.{service}"):
            raise
        return None
    # A directory without __init__.py (a service being started) imports as an empty
    # namespace package: that is not a module the service provides yet.
    return None if getattr(mod, "__file__", None) is None else mod


def service_opts() -> dict[str, list]:
    """Collect ``OPTS`` from every service's conf module that exists."""
    groups: dict[str, list] = {"DEFAULT": list(DEFAULT_OPTS), "database": list(DATABASE_OPTS),
                               "service_user": list(SERVICE_USER_OPTS),
                               "ceph": list(CEPH_OPTS)}
    for name in SERVICE_PACKAGES:
        mod = optional_module(name, "conf")
        if mod is None:
            continue
        for group, opts in mod.OPTS.items():
            groups.setdefault(group, []).extend(opts)
    return groups


def register_opts() -> None:
    """Every option is registered on the current cloud's ConfigOpts (kept for callers)."""
    _cloud_config()


def data_dir() -> str:
    """The data dir the configuration was loaded for; services derive default paths from it."""
    path = _cloud_config().data_dir
    if path is None:
        raise RuntimeError("pocketstack's configuration is not loaded (config.load) yet")
    return path


def load(data_dir: str, config_file: str | None = None,
         overrides: dict | None = None) -> cfg.ConfigOpts:
    """Parse the config file (if any) and apply defaults derived from the data dir.

    ``overrides`` maps "group.option" (or "option" for DEFAULT) to a value and wins over the
    file: the command line's --host/--port use it.
    """
    state = _cloud_config()
    CONF = state.opts
    files = [config_file] if config_file and os.path.exists(config_file) else []
    try:
        CONF([], project="pocketstack", default_config_files=files,
             validate_default_values=True)
    except cfg.Error as error:  # unreadable file, INI syntax error
        raise ConfigError(str(error)) from None
    state.data_dir = os.path.abspath(data_dir)
    state.cloud_id = None
    CONF.set_default("connection", f"sqlite:///{os.path.join(data_dir, 'pocketstack.db')}",
                     group="database")
    for key, value in (overrides or {}).items():
        group, _, name = key.rpartition(".")
        try:
            CONF.set_override(name, value, group=group or None)
        except (cfg.Error, ValueError) as error:
            raise ConfigError(f"{key} = {value!r}: {error}") from None
    return CONF


CLOUD_ID_FILE = "cloud-id"


def cloud_id() -> str:
    """This cloud's id (32 hex digits), made at its first use and kept in <data dir>/cloud-id.
    What the cloud makes on the machine outside its data dir (its nftables tables, its
    libvirt secrets) is named after it, so that two clouds on one machine never make,
    change or remove each other's (docs/architecture.md, "Several clouds on one
    machine")."""
    state = _cloud_config()
    if state.cloud_id is None:
        path = os.path.join(data_dir(), CLOUD_ID_FILE)
        if not os.path.exists(path):
            # written whole, then linked in: a process or thread of the same cloud asking
            # at the same moment reads the one id linked first, never half of one
            tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                           "w") as f:
                f.write(uuid.uuid4().hex + "\n")
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        with open(path) as f:
            state.cloud_id = f.read().strip()
    return state.cloud_id


STARTED_WITH_FILE = "started-with.json"


def record_start(data_dir: str, config_file: str, overrides: dict) -> None:
    """Keep what the cloud was started with beyond its data dir's config file (another
    --config-file, the command line's flags such as --compute-driver, a library caller's
    overrides) for the tools that read the cloud from outside (`pocketstack audit`): the
    file alone is not what the cloud runs with."""
    kept = {}
    for key, value in overrides.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue  # a library caller's Python object: no tool can read it back
        kept[key] = value
    path = os.path.join(data_dir, STARTED_WITH_FILE)
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"config_file": os.path.abspath(config_file), "overrides": kept}, f)
    os.replace(tmp, path)


def started_with(data_dir: str) -> tuple[str | None, dict]:
    """(config file, overrides) of the cloud's last start (record_start); (None, {}) for a
    data dir that has no record (a cloud never started, or one of an older version)."""
    try:
        with open(os.path.join(data_dir, STARTED_WITH_FILE)) as f:
            record = json.load(f)
    except (FileNotFoundError, ValueError):
        return None, {}
    return record.get("config_file"), dict(record.get("overrides") or {})


class ConfigError(Exception):
    """The configuration file cannot be used; the message says where and why."""


def check(conf: cfg.ConfigOpts | None = None) -> None:
    """Read every option once, so a bad value in the file is an error at start-up (oslo.config
    would otherwise raise only when the option is first used, possibly mid-request)."""
    conf = conf if conf is not None else _cloud_config().opts
    for group, opts in service_opts().items():
        section = conf if group == "DEFAULT" else getattr(conf, group)
        for opt in opts:
            try:
                getattr(section, opt.dest)
            except (cfg.Error, ValueError) as error:
                # oslo.config's text names the location as a repr; keep just the reason.
                reason = str(error).rpartition(" is not valid: ")[2]
                where = " in " + ", ".join(conf.config_file) if conf.config_file else ""
                raise ConfigError(f"[{group}] {opt.dest}{where}: invalid value: {reason}"
                                  ) from None


def libvirt_host_name() -> str:
    """The host name of this machine's libvirt compute host: [libvirt] host_name, else the
    machine's hostname. Compute names its host so, and the network agent plugs the ports
    bound to it: here so that both read it without importing each other."""
    import socket

    try:
        configured = CONF.libvirt.host_name
    except (AttributeError, cfg.NoSuchOptError):  # no libvirt driver in this build
        configured = None
    return configured or socket.gethostname()


def public_url(conf: cfg.ConfigOpts | None = None) -> str:
    conf = conf if conf is not None else _cloud_config().opts
    return (conf.public_url or f"http://{conf.bind_host}:{conf.bind_port}").rstrip("/")


def _format_default(opt) -> str:
    default = opt.default
    if default is None:
        return "<None>"
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, (list, tuple)):
        return ",".join(str(x) for x in default)
    return str(default)


def sample_config() -> str:
    """The documented sample file: every option commented out, with its help and default."""
    lines = ["# pocketstack configuration. Every option is shown commented out with its default;",
             "# uncomment and change what you need, then restart `pocketstack up`.", ""]
    for group, opts in service_opts().items():
        lines.append(f"[{group}]")
        lines.append("")
        for opt in opts:
            for text in textwrap.wrap(opt.help or "", 88):
                lines.append(f"# {text}")
            lines.append(f"# ({type(opt).__name__.replace('Opt', '').lower() or 'string'} value)")
            lines.append(f"#{opt.dest} = {_format_default(opt)}")
            lines.append("")
    return "\n".join(lines)
