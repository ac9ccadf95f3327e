"""The `pocketstack` command."""
from __future__ import annotations

import gc
import logging
import os
import sys
import time

import click

from pocketstack.cli.logs import set_log_levels, setup_logging


class _LazyGroup(click.Group):
    """Commands kept in their own modules are imported only when run (or listed by
    --help): `pocketstack up` should not pay for audit's, trace's or demo's imports."""

    LAZY = {"audit": "pocketstack.cli.audit:audit", "ceph": "pocketstack.cli.ceph:ceph",
            "demo": "pocketstack.cli.demo:demo", "dns": "pocketstack.cli.dns_server:dns",
            "host-credential": "pocketstack.cli.host_credential:host_credential",
            "image": "pocketstack.cli.image:image", "lab": "pocketstack.cli.lab:lab",
            "service": "pocketstack.cli.service:service",
            "trace": "pocketstack.cli.trace:trace", "wait": "pocketstack.cli.wait:wait"}

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx, name):
        command = super().get_command(ctx, name)
        if command is None and name in self.LAZY:
            import importlib

            module, attr = self.LAZY[name].split(":")
            command = getattr(importlib.import_module(module), attr)
            self.add_command(command, name)
        return command


@click.group(cls=_LazyGroup)
def main():
    """pocketstack: an OpenStack-compatible cloud in one process."""


def _cloud_options(f):
    f = click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None,
                     help="State directory (default $POCKETSTACK_HOME, else "
                          "$XDG_DATA_HOME/pocketstack, else ~/.local/share/pocketstack).")(f)
    f = click.option("--config-file", default=None,
                     help="Config file (default <data dir>/pocketstack.conf).")(f)
    return f


@main.command()
@_cloud_options
@click.option("--host", default=None, help="Address to listen on (default 127.0.0.1).")
@click.option("--port", default=None, type=click.IntRange(1, 65535),
              envvar="POCKETSTACK_PORT",
              help="Port to listen on (default $POCKETSTACK_PORT, else 8000).")
@click.option("--admin-password", default=None,
              help="Admin password on first start (else $POCKETSTACK_ADMIN_PASSWORD, "
                   "else generated and printed once).")
@click.option("--compute-driver", type=click.Choice(["fake", "libvirt"]), default=None,
              help="Hypervisor: fake (simulated hosts, the default) or libvirt (one real "
                   "host running QEMU guests; needs `make libvirt`).")
@click.option("--debug", is_flag=True, help="Log at DEBUG level.")
@click.option("--detach", is_flag=True,
              help="Run in the background (log in <data dir>/pocketstack.log) and return "
                   "once every service answers; `pocketstack down` stops it.")
@click.option("--timeout", default=120.0, type=click.FloatRange(1), show_default=True,
              help="With --detach: seconds to wait for the cloud to be ready.")
@click.option("--workers", default=1, type=click.IntRange(1, 64), show_default=True,
              help="Processes serving the APIs (this one included); more than 1 also runs "
                   "the compute hosts in processes of their own, to use several cores.")
@click.option("--compute-workers", default=None, type=click.IntRange(0, 64),
              help="Processes for the compute hosts (default: as many as --workers when "
                   "that is more than 1, else 0: in this process).")
def up(data_dir, config_file, host, port, admin_password, compute_driver, debug, detach,
       timeout, workers, compute_workers):
    """Run the whole cloud (in the foreground: Ctrl-C stops it)."""
    started = time.monotonic()
    # A start makes ~200k objects that all live on: the cyclic GC's passes over them
    # were a tenth of a warm restart's CPU. Back on once every service is ready.
    gc.disable()
    from pocketstack.cloud import Cloud, collect_after_start, default_data_dir, owner_only_files

    if detach:
        from pocketstack.cli import daemon

        argv = [*(["--config-file", config_file] if config_file else []),
                *(["--host", host] if host else []),
                *(["--port", str(port)] if port is not None else []),
                *(["--admin-password", admin_password] if admin_password else []),
                *(["--compute-driver", compute_driver] if compute_driver else []),
                *(["--debug"] if debug else []),
                *(["--workers", str(workers)] if workers > 1 else []),
                *(["--compute-workers", str(compute_workers)]
                  if compute_workers is not None else [])]
        daemon.start_detached(argv, os.path.abspath(data_dir or default_data_dir()), timeout)
        return

    owner_only_files()
    setup_logging(debug)
    _start_own_ceph(os.path.abspath(data_dir or default_data_dir()))
    overrides = {}
    if host:
        overrides["bind_host"] = host
    if port is not None:
        overrides["bind_port"] = port
    if debug:
        overrides["debug"] = True
    if compute_driver:
        overrides["compute_driver"] = compute_driver
    if compute_workers is None:
        # One per core asked for: the builds, not the API, are most of a burst's CPU.
        compute_workers = workers if workers > 1 else 0
    if workers > 1 or compute_workers:
        from pocketstack.workers import Supervised

        cloud = Supervised(data_dir or default_data_dir(), config_file=config_file,
                           admin_password=admin_password, overrides=overrides,
                           workers=workers, compute_workers=compute_workers)
    else:
        cloud = Cloud(data_dir or default_data_dir(), config_file=config_file,
                      admin_password=admin_password,
                      overrides=overrides)

    def on_ready():
        collect_after_start()
        _print_summary(cloud, time.monotonic() - started)

    serve_cloud(cloud, debug, on_ready=on_ready)
    click.echo("pocketstack stopped.")


def _start_own_ceph(data_dir: str) -> None:
    """The Ceph cluster `pocketstack ceph start` made in the data dir belongs to the cloud:
    `down` stops it, so `up` starts it again (a few seconds when it has data)."""
    if not os.path.exists(os.path.join(data_dir, "ceph", "ceph.conf")):
        return
    from pocketstack.common import ceph_cluster

    directory = os.path.join(data_dir, "ceph")
    if len(ceph_cluster.running(directory)) == len(ceph_cluster.DAEMONS):
        return
    try:
        ceph_cluster.start(directory)
    except ceph_cluster.ClusterError as error:
        _fail(f"The data dir's Ceph cluster did not start: {error}")


def serve_cloud(cloud, debug: bool, on_ready) -> None:
    """Prepare and serve ``cloud`` in the foreground until SIGINT/SIGTERM, exiting with a
    one-line error if it cannot start: `up` and `service api` (cli/service.py)."""
    import signal

    from pocketstack.cloud import CannotListen, DataDirInUse
    from pocketstack.common.config import ConfigError

    def on_signal(signum, _frame):
        if cloud.stop_requested and cloud._server is None:
            sys.exit(128 + signum)  # a second Ctrl-C while still starting: give up now
        cloud.request_stop()

    # Installed before anything else so a signal during start-up never interrupts the
    # bootstrap half-way; uvicorn installs its own while serving and restores these.
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        cloud.prepare(bind=True)
    except (DataDirInUse, CannotListen, ConfigError) as error:
        cloud.close()
        _fail(str(error))
    except Exception as error:  # noqa: BLE001 - e.g. the database cannot be reached
        cloud.close()
        logging.getLogger("pocketstack").debug("start-up failed", exc_info=True)
        _fail(f"pocketstack could not start: {_describe(error)}")
    from pocketstack.common import config

    set_log_levels(debug or config.CONF.debug)
    cloud.serve_forever(on_ready=on_ready)
    if cloud.startup_error is not None:
        _fail(f"pocketstack could not start: {_describe(cloud.startup_error)}")


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


def _describe(error: Exception) -> str:
    """One line a person can act on, for errors met while starting."""
    import sqlalchemy as sa

    if isinstance(error, sa.exc.DBAPIError):
        return (f"the database ([database] connection) failed: "
                f"{str(error.orig).strip().splitlines()[0]}")
    if isinstance(error, sa.exc.ArgumentError):
        return f"the database URL ([database] connection) is invalid: {error}"
    if isinstance(error, ModuleNotFoundError):
        return (f"{error}. Install the extra for your database, e.g. "
                "pip install 'pocketstack[postgresql]' or 'pocketstack[mysql]'.")
    return f"{type(error).__name__}: {error}"


def admin_password_line(cloud) -> str:
    """The generated admin password, for a person at a terminal only: when stdout is a file
    or a pipe (a log, CI output) it stays in the 0600 file and the log says where."""
    path = os.path.join(cloud.data_dir, "admin-password")
    if sys.stdout.isatty():
        return f"  admin password (shown once, kept in {path}): {cloud.admin_password}"
    logging.getLogger("pocketstack").warning(
        "The generated admin password is in %s (not printed: stdout is not a terminal)", path)
    return f"  admin password: in {path} (not printed: stdout is not a terminal)"


def _print_summary(cloud, seconds: float) -> None:
    import shlex

    state = "bootstrapped" if cloud.first_start else "ready"
    lines = [f"pocketstack is up at {cloud.url} ({state} in {seconds:.2f}s; "
             f"data in {cloud.data_dir})"]
    if cloud.password_generated:
        lines.append(admin_password_line(cloud))
    if getattr(cloud, "children", None):  # `up --workers` (workers.py)
        lines.append(f"  Processes: {cloud.api_workers} serving the APIs, "
                     f"{cloud.compute_workers} running the compute hosts (main pid "
                     f"{os.getpid()})")
    # Lines to paste as they are: quoted if the data dir's path needs it.
    clouds_yaml = shlex.quote(os.path.join(cloud.data_dir, "clouds.yaml"))
    openrc = shlex.quote(os.path.join(cloud.data_dir, "openrc"))
    lines += [
        "  Use it with the openstack CLI:",
        f"    export OS_CLIENT_CONFIG_FILE={clouds_yaml} OS_CLOUD=pocketstack",
        f"    (or: source {openrc})",
        "    openstack token issue",
        "    openstack catalog list",
        "    openstack project create demo",
        "  Stop with Ctrl-C.",
    ]
    click.echo("\n".join(lines))
    sys.stdout.flush()


@main.command("rotate-keys")
@_cloud_options
def rotate_keys(data_dir, config_file):
    """Rotate the Fernet token keys (safe while the cloud runs)."""
    import os

    from pocketstack.cloud import default_data_dir
    from pocketstack.common import config
    from pocketstack.identity import fernet

    data_dir = os.path.abspath(data_dir or default_data_dir())
    if config_file and not os.path.isfile(config_file):
        _fail(f"Config file {config_file} does not exist.")
    try:
        config.load(data_dir, config_file or os.path.join(data_dir, "pocketstack.conf"))
    except config.ConfigError as error:
        _fail(str(error))
    repo = config.CONF.fernet_tokens.key_repository or os.path.join(data_dir, "fernet-keys")
    if not os.path.isdir(repo) or not any(name.isdigit() for name in os.listdir(repo)):
        _fail(f"No Fernet keys in {repo}: has `pocketstack up` run with this data dir?")
    keys = fernet.rotate(repo)
    click.echo(f"Rotated the keys in {repo}: {', '.join(map(str, keys))} (0 is staged, "
               f"{max(keys)} is primary). Tokens issued before stay valid until the key "
               "that signed them is rotated out.")


@main.command()
@click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None,
              help="State directory of the cloud (as for `pocketstack up`).")
@click.option("--timeout", default=30.0, type=click.FloatRange(0), show_default=True,
              help="Seconds to wait for it to exit.")
def down(data_dir, timeout):
    """Stop the cloud `pocketstack up --detach` started (and its Ceph cluster, if any)."""
    from pocketstack.cli import daemon
    from pocketstack.cloud import default_data_dir

    data_dir = os.path.abspath(data_dir or default_data_dir())
    click.echo(daemon.stop(data_dir, timeout))
    from pocketstack.common import rgw

    if rgw.stop(data_dir, timeout):  # the cloud stops its own; one a crash left
        click.echo("radosgw stopped.")
    ceph_dir = os.path.join(data_dir, "ceph")
    if os.path.isdir(ceph_dir):  # the cluster `pocketstack ceph start` made for this cloud
        from pocketstack.common import ceph_cluster

        stopped = ceph_cluster.stop(ceph_dir, timeout)
        if stopped:
            click.echo(f"Ceph ({', '.join(stopped)}) stopped.")


if __name__ == "__main__":
    main()
