"""`pocketstack service api|conductor|scheduler|compute|network-agent`: one part of the cloud per
process,
for scale-out across hosts (docs/architecture.md, "Runtime modes").

* ``api`` is `pocketstack up` without the RPC roles: it migrates and bootstraps the
  database and serves every REST service on one port; ``--with conductor`` (etc.) runs
  roles in the same process as well.
* ``conductor``, ``scheduler`` and ``compute --host NAME`` run their RPC servers only
  (``agent.Agent``), with heartbeats in the services table (`openstack compute service
  list`).
* ``network-agent --host NAME`` runs a compute host's networking agent
  (network/agent/standalone.py): RPC only, no database (`openstack network agent list`).

Every process reads the same kind of config: ``[DEFAULT] transport_url = rabbit://…``,
``[database] connection = postgresql+psycopg://…`` (or mysql+pymysql://…) and
``[DEFAULT] public_url`` (where agents reach the API), and needs the API host's Fernet key
repository. What each role starts is decided in one place:
``pocketstack.compute.service.start_roles``.
"""
from __future__ import annotations

import os
import re
import signal
import sys
import time

import click

from pocketstack.cli.logs import set_log_levels, setup_logging


def _cli():
    """cli/main.py's helpers; imported when used (main.py imports this module)."""
    from pocketstack.cli import main

    return main

# compute.service.ROLES, not imported here: that module pulls in SQLAlchemy, and
# `pocketstack --help` should stay instant.
ROLE_CHOICES = ("conductor", "scheduler", "compute")


@click.group("service")
def service():
    """Run one part of the cloud (scale-out: api, conductor, scheduler, compute)."""


def _common_options(f):
    f = click.option("--debug", is_flag=True, help="Log at DEBUG level.")(f)
    f = click.option("--host", "node", default=None, metavar="NAME",
                     help="Name of this node in the services table and RPC topics "
                          "(default [DEFAULT] host).")(f)
    f = click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None,
                     help="State directory: the Fernet keys (the api host's, on every "
                          "node), compute image caches; the api's database if SQLite "
                          "(default as for `pocketstack up`).")(f)
    f = click.option("--config-file", default=None,
                     help="Config file (default <data dir>/pocketstack.conf).")(f)
    return f


def _safe_url(url: str) -> str:
    """A URL without its password, for messages."""
    return re.sub(r"([/,][^:/@,]*):[^@/,]*@", r"\1:***@", url or "")


def _install_signals(stop, is_stopping) -> None:
    """SIGINT/SIGTERM ask an agent for a clean stop; a second one while it is stopping
    (in-flight work may take STOP_TIMEOUT) exits at once."""
    def on_signal(signum, _frame):
        if is_stopping():
            os._exit(128 + signum)
        stop()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)


@service.command("api")
@_common_options
@click.option("--bind-host", default=None, help="Address to listen on ([DEFAULT] bind_host).")
@click.option("--port", default=None, type=click.IntRange(1, 65535),
              help="Port to listen on ([DEFAULT] bind_port).")
@click.option("--admin-password", default=None,
              help="Admin password on first start (else $POCKETSTACK_ADMIN_PASSWORD, "
                   "else generated and printed once).")
@click.option("--with", "with_roles", multiple=True, type=click.Choice(ROLE_CHOICES),
              help="Also run this role in the API process (repeatable); compute runs the "
                   "[fake] hosts.")
def api(data_dir, config_file, node, debug, bind_host, port, admin_password, with_roles):
    """The REST APIs (identity, compute, image, network, …) on one port."""
    started = time.monotonic()
    from pocketstack.cloud import Cloud, default_data_dir, owner_only_files
    from pocketstack.common import config

    owner_only_files()
    cli = _cli()
    setup_logging(debug)
    overrides: dict = {}
    if bind_host:
        overrides["bind_host"] = bind_host
    if port is not None:
        overrides["bind_port"] = port
    if node:
        overrides["host"] = node
    if debug:
        overrides["debug"] = True
    cloud = Cloud(data_dir or default_data_dir(), config_file=config_file,
                  admin_password=admin_password,
                  overrides=overrides, roles=tuple(dict.fromkeys(with_roles)))

    def ready():
        roles = ", ".join(cloud.roles) or "none (run them with `pocketstack service …`)"
        click.echo(f"pocketstack api is up at {cloud.url} ({time.monotonic() - started:.2f}s;"
                   f" RPC roles in this process: {roles}; message bus "
                   f"{_safe_url(config.CONF.transport_url)})")
        if cloud.password_generated:
            click.echo(cli.admin_password_line(cloud))
        click.echo(f"  clouds.yaml and openrc are in {cloud.data_dir}")
        sys.stdout.flush()

    cli.serve_cloud(cloud, debug, on_ready=ready)
    click.echo("pocketstack api stopped.")


def _run_agent(role: str, data_dir, config_file, node, debug) -> None:
    started = time.monotonic()
    from pocketstack.agent import Agent
    from pocketstack.cloud import owner_only_files
    from pocketstack.common import config

    owner_only_files()
    cli = _cli()
    setup_logging(debug)
    overrides: dict = {"host": node} if node else {}
    if debug:
        overrides["debug"] = True
    agent = Agent(data_dir, config_file=config_file, overrides=overrides)
    stopping = []
    _install_signals(lambda: (stopping.append(1), agent.request_stop()), lambda: bool(stopping))
    try:
        agent.prepare(roles=[role])
    except Exception as error:  # noqa: BLE001 - database unreachable, bad URL, …
        agent.close()
        if stopping:  # asked to stop while waiting for the database: not a failure
            return
        cli._fail(str(error) if isinstance(error, config.ConfigError)
                  else f"pocketstack {role} could not start: {cli._describe(error)}")
    set_log_levels(debug or config.CONF.debug)
    host = config.CONF.host
    if stopping:
        agent.close()
        return
    try:
        agent.start([role], hosts=[host] if role == "compute" else ())
    except Exception as error:  # noqa: BLE001 - e.g. the broker cannot be reached
        agent.close()
        cli._fail(f"pocketstack {role} could not start: {cli._describe(error)}")
    topic = f"compute.{host}" if role == "compute" else role
    click.echo(f"pocketstack {role} is up on {host} ({time.monotonic() - started:.2f}s; "
               f"RPC topic {topic} on {_safe_url(config.CONF.transport_url)})")
    sys.stdout.flush()
    clean = agent.serve_forever()
    click.echo(f"pocketstack {role} on {host} stopped.")
    sys.stdout.flush()
    if not clean:
        os._exit(1)  # threads still busy (a hung operation): do not wait for them


@service.command("conductor")
@_common_options
def conductor(data_dir, config_file, node, debug):
    """The conductor: schedules builds, reschedules, enforces build deadlines."""
    _run_agent("conductor", data_dir, config_file, node, debug)


@service.command("scheduler")
@_common_options
def scheduler(data_dir, config_file, node, debug):
    """The scheduler: filters, weighs and claims hosts for the conductor."""
    _run_agent("scheduler", data_dir, config_file, node, debug)


@service.command("compute")
@_common_options
def compute(data_dir, config_file, node, debug):
    """One compute agent (--host NAME, default [DEFAULT] host) on the fake driver."""
    _run_agent("compute", data_dir, config_file, node, debug)


@service.command("network-agent")
@_common_options
def network_agent(data_dir, config_file, node, debug):
    """The host networking agent of one compute host (--host NAME): bridges and security
    groups for the ports bound to it, planned by the network service over RPC (no
    database)."""
    started = time.monotonic()
    from pocketstack.cloud import default_data_dir, owner_only_files
    from pocketstack.common import config
    from pocketstack.network.agent.standalone import NetworkAgentProcess

    owner_only_files()
    cli = _cli()
    setup_logging(debug)
    process = NetworkAgentProcess(data_dir or default_data_dir(), config_file, node, debug)
    stopping = []
    _install_signals(lambda: (stopping.append(1), process.request_stop()),
                     lambda: bool(stopping))
    try:
        process.prepare()
        set_log_levels(debug or config.CONF.debug)
        process.start()
    except Exception as error:  # noqa: BLE001 - not root, no broker, network service down
        process.close()
        if stopping:  # asked to stop while waiting for the network service
            return
        cli._fail(str(error) if isinstance(error, config.ConfigError)
                  else f"pocketstack network-agent could not start: {cli._describe(error)}")
    click.echo(f"pocketstack network-agent is up on {process.host} "
               f"({time.monotonic() - started:.2f}s; RPC topic network-agent.{process.host} "
               f"on {_safe_url(config.CONF.transport_url)})")
    sys.stdout.flush()
    process.serve_forever()
    click.echo(f"pocketstack network-agent on {process.host} stopped.")
