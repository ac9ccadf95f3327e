"""`pocketstack wait`: block until the cloud answers, or until a resource reaches a status.

The openstack CLI waits only on some commands (`server create --wait`, not `server stop`,
`start`, `reboot`, `pause`, `suspend`, nor any volume action), so a script that pastes one
action after another meets 409s while the first is still under way.
`pocketstack wait server vm1 --status SHUTOFF` reads like the CLI and waits the way the
SDKs' `wait_for_status` does: poll, stop at the status asked for, fail at once on an error
status with the resource's fault."""
from __future__ import annotations

import os
import sys
import time

import click

# What each resource calls a failure: waiting on past it would only run into the timeout.
FAILED = {"server": {"ERROR"}, "volume": {"ERROR", "ERROR_DELETING", "ERROR_EXTENDING",
                                          "ERROR_RESTORING", "ERROR_MANAGING"},
          "snapshot": {"ERROR", "ERROR_DELETING"}, "backup": {"ERROR"},
          "image": {"KILLED"}}


# `--status deleted`: wait until no resource of that name or id is left (a delete the CLI
# does not wait for, before a script makes one of the same name again).
DELETED = "DELETED"


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


@click.group(invoke_without_command=True)
@click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None,
              help="State directory of the cloud (its clouds.yaml says where it listens).")
@click.option("--url", default=None, help="The cloud's URL (default: from the data dir).")
@click.option("--timeout", default=120.0, type=click.FloatRange(0), show_default=True,
              help="Seconds to wait.")
@click.pass_context
def wait(ctx, data_dir, url, timeout):
    """Block until every service of the cloud answers (exit 1 if not within --timeout);
    `wait server|volume|snapshot|backup|image NAME --status S` waits for a resource."""
    if ctx.invoked_subcommand is not None:
        return
    from pocketstack.cli import daemon
    from pocketstack.cloud import default_data_dir

    data_dir = os.path.abspath(data_dir or default_data_dir())
    url = url or daemon.cloud_url(data_dir)
    if url is None:
        _fail(f"no clouds.yaml in {data_dir}: pass --url, or --data-dir of a cloud that "
              "has started once")
    problem = daemon.wait_ready(url.rstrip("/"), timeout)
    if problem:
        _fail(f"{url}: {problem}")
    click.echo(f"pocketstack at {url} is ready.")


def _finder(conn, kind: str):
    """The SDK call that reads one resource of `kind` by name or id."""
    return {"server": conn.compute.find_server, "volume": conn.block_storage.find_volume,
            "snapshot": conn.block_storage.find_snapshot,
            "backup": conn.block_storage.find_backup, "image": conn.image.find_image}[kind]


def _status(kind: str, resource) -> str:
    status = (resource.status or "").upper()
    # A server is settled only once its task is done: `server reboot` answers while the
    # status still reads ACTIVE, before the reboot's task state shows.
    if kind == "server" and resource.task_state:
        return f"{status} ({resource.task_state})"
    return status


def _fault(kind: str, resource) -> str:
    if kind == "server" and resource.fault:
        return f": {resource.fault.get('message', '')}".rstrip(": ")
    return ""


def _wait_for(kind: str, name: str, status: str, timeout: float, interval: float) -> None:
    import openstack
    from keystoneauth1.exceptions import ClientException
    from openstack import exceptions

    want = status.upper()
    started = time.monotonic()
    try:
        conn = openstack.connect()
        find = _finder(conn, kind)
        while True:
            resource = find(name, ignore_missing=want == DELETED)
            if resource is None:  # only when waiting for it to be gone
                click.echo(f"{kind} {name}: deleted after {time.monotonic() - started:.1f} s")
                return
            now = _status(kind, resource)
            if now == want:
                click.echo(f"{kind} {name}: {now} after {time.monotonic() - started:.1f} s")
                return
            if now in FAILED[kind] and want not in FAILED[kind]:
                _fail(f"{kind} {name} is {now}{_fault(kind, resource)}")
            if time.monotonic() - started >= timeout:
                _fail(f"{kind} {name} is {now}, not {want}, after {timeout:g} s")
            time.sleep(interval)
    except (exceptions.SDKException, ClientException) as error:
        _fail(str(error).strip() or type(error).__name__)


def _resource_command(kind: str, default_status: str):
    @click.argument("name")
    @click.option("--status", default=default_status, show_default=True,
                  help=f"The {kind} status to wait for (case does not matter); "
                       f"'deleted': until it is gone.")
    @click.option("--timeout", default=300.0, type=click.FloatRange(0), show_default=True,
                  help="Seconds to wait before giving up (exit 1).")
    @click.option("--interval", default=0.5, type=click.FloatRange(0.05), show_default=True,
                  help="Seconds between two reads.")
    def command(name, status, timeout, interval):
        _wait_for(kind, name, status, timeout, interval)

    command.__doc__ = (f"Wait until the {kind} NAME (or id) has --status; exit 1 if it "
                       f"fails or --timeout passes. Uses OS_CLOUD / clouds.yaml as the "
                       f"openstack CLI does.")
    return wait.command(kind)(command)


for _kind, _default in (("server", "ACTIVE"), ("volume", "available"),
                        ("snapshot", "available"), ("backup", "available"),
                        ("image", "active")):
    _resource_command(_kind, _default)
