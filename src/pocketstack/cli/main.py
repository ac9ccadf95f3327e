"""The `pocketstack` command."""
from __future__ import annotations

import logging
import sys
import time

import click


def _setup_logging(debug: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if debug else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


@click.group()
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
@click.option("--port", default=None, type=int, help="Port to listen on (default 8000).")
@click.option("--admin-password", default=None,
              help="Admin password on first start (else $POCKETSTACK_ADMIN_PASSWORD, "
                   "else generated and printed once).")
@click.option("--debug", is_flag=True, help="Log at DEBUG level.")
def up(data_dir, config_file, host, port, admin_password, debug):
    """Run the whole cloud in the foreground (Ctrl-C stops it)."""
    from pocketstack.cloud import Cloud, DataDirInUse

    _setup_logging(debug)
    started = time.monotonic()
    overrides = {}
    if host:
        overrides["bind_host"] = host
    if port is not None:
        overrides["bind_port"] = port
    if debug:
        overrides["debug"] = True
    cloud = Cloud(data_dir, config_file=config_file, admin_password=admin_password,
                  overrides=overrides)
    try:
        cloud.prepare()
    except DataDirInUse as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(1)
    _print_summary(cloud, time.monotonic() - started)
    cloud.serve_forever()


def _print_summary(cloud, seconds: float) -> None:
    lines = [
        f"pocketstack is up at {cloud.url} ({'bootstrapped' if cloud.first_start else 'ready'} "
        f"in {seconds:.2f}s; data in {cloud.data_dir})",
    ]
    if cloud.password_generated:
        lines.append(f"  admin password (shown once, kept in {cloud.data_dir}/admin-password): "
                     f"{cloud.admin_password}")
    lines += [
        "  Use it with the openstack CLI:",
        f"    export OS_CLIENT_CONFIG_FILE={cloud.data_dir}/clouds.yaml OS_CLOUD=pocketstack",
        "    openstack token issue",
        "    openstack catalog list",
        "  Stop with Ctrl-C.",
    ]
    click.echo("\n".join(lines), err=False)
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
    config.load(data_dir, config_file or os.path.join(data_dir, "pocketstack.conf"))
    repo = config.CONF.fernet_tokens.key_repository or os.path.join(data_dir, "fernet-keys")
    keys = fernet.rotate(repo)
    click.echo(f"Rotated the keys in {repo}: {', '.join(map(str, keys))} (0 is staged, "
               f"{max(keys)} is primary)")


if __name__ == "__main__":
    main()
