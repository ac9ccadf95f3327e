"""`pocketstack dns server`: HOST:PORT of the running cloud's DNS server, for scripts
(`dig @127.0.0.1 -p PORT ...`) and tests."""
from __future__ import annotations

import os
import sys

import click


@click.group()
def dns():
    """The cloud's authoritative DNS server."""


@dns.command()
@click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None,
              help="State directory of the cloud.")
def server(data_dir):
    """Print HOST:PORT of the running cloud's DNS server (exit 1 when none answers)."""
    import dns.message
    import dns.query

    from pocketstack.cloud import default_data_dir

    data_dir = os.path.abspath(data_dir or default_data_dir())
    try:
        with open(os.path.join(data_dir, "dns", "listen")) as f:
            address = f.read().strip()
    except FileNotFoundError:
        click.echo(f"error: no DNS server runs for {data_dir} (is the cloud up, with "
                   f"[dns] listen set?)", err=True)
        sys.exit(1)
    host, _, port = address.rpartition(":")
    try:  # a question it is sure to answer (REFUSED for the root: not its zone)
        dns.query.udp(dns.message.make_query(".", "SOA"), host.strip("[]"), port=int(port),
                      timeout=2)
    except Exception as error:  # noqa: BLE001 - timeout, refused
        click.echo(f"error: the DNS server at {address} does not answer: {error}", err=True)
        sys.exit(1)
    click.echo(address)
