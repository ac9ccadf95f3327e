"""`pocketstack lab up|down|status`: a cloud of several hosts on one machine — a controller,
a network node and N compute hosts as network namespaces on a switch, VXLAN between them,
real QEMU guests where the machine has libvirt (pocketstack/lab.py has the layout)."""
from __future__ import annotations

import os
import shlex
import sys
import time

import click

_DIR = click.option("--dir", "lab_dir", envvar="POCKETSTACK_LAB", default=None,
                    help="The lab's dir (default $POCKETSTACK_LAB, else the default data "
                         "dir's path with -lab: ~/.local/share/pocketstack-lab).")


def _lab(lab_dir):
    from pocketstack import lab

    return lab.Lab(lab_dir or lab.default_dir())


@click.group("lab")
def lab():
    """A cloud of several hosts on one machine, as namespaces (needs root)."""


@lab.command("up")
@_DIR
@click.option("--hosts", "count", default=2, show_default=True, type=click.IntRange(1, 32),
              help="Compute hosts (host1 … hostN).")
@click.option("--prefix", default="pslab", show_default=True,
              help="Prefix of every name the lab makes on the machine (its namespaces); "
                   "labs sharing a machine need their own.")
@click.option("--port", default=8800, show_default=True, type=click.IntRange(1, 65535),
              help="The controller's API port.")
@click.option("--simulated", is_flag=True,
              help="Simulated computes even where libvirt could run real guests.")
@click.option("--timeout", default=120.0, show_default=True, type=click.FloatRange(1),
              help="Seconds to wait for every host to register.")
def up(lab_dir, count, prefix, port, simulated, timeout):
    """Build the lab: controller, network node and N compute hosts."""
    from pocketstack import lab as lab_module

    the_lab = _lab(lab_dir)
    started = time.monotonic()
    try:
        the_lab.up(count, prefix, port, simulated, timeout, echo=click.echo)
    except lab_module.LabError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(1)
    state = the_lab.state
    click.echo(f"pocketstack lab is up in {time.monotonic() - started:.1f}s "
               f"(dir {the_lab.dir}, prefix {state['prefix']}):")
    if state["driver"] == "libvirt":
        click.echo("  compute hosts run real QEMU guests through this machine's libvirtd")
    else:
        click.echo(f"  compute hosts are SIMULATED: {state['simulated_because']}")
    _print_hosts(the_lab.status())
    clouds_yaml = shlex.quote(os.path.join(the_lab.controller_dir, "clouds.yaml"))
    outside = state["outside"]
    click.echo(
        f"  external network: public ({state['external_cidr']}, flat, MTU 1500), reached "
        f"from the namespace {outside} (its 203.0.113.1)\n"
        "  Use it with the openstack CLI:\n"
        f"    export OS_CLIENT_CONFIG_FILE={clouds_yaml} OS_CLOUD=pocketstack\n"
        "    openstack hypervisor list ; openstack network agent list\n"
        + (f"    pocketstack image tiny --data-dir {shlex.quote(the_lab.controller_dir)}"
           "   # a bootable guest\n" if state["driver"] == "libvirt" else "")
        + "    openstack server create --availability-zone nova:host1 ...\n"
        f"    ip netns exec {outside} busybox ping <floating IP>\n"
        "  `pocketstack lab status` shows the hosts; `pocketstack lab down` removes it all.")


@lab.command("down")
@_DIR
def down(lab_dir):
    """Remove the lab: its processes, guests, namespaces and dir."""
    the_lab = _lab(lab_dir)
    if not the_lab.state and not os.path.isdir(the_lab.dir):
        click.echo(f"No lab in {the_lab.dir}.")
        return
    the_lab.down(echo=click.echo)
    click.echo(f"The lab in {the_lab.dir} is gone.")


@lab.command("status")
@_DIR
def status(lab_dir):
    """The lab's hosts: namespace, underlay address, processes, and what the API says."""
    the_lab = _lab(lab_dir)
    if not the_lab.state:
        click.echo(f"No lab in {the_lab.dir}.")
        sys.exit(1)
    pid = the_lab.controller_pid()
    click.echo(f"controller: {'running (' + str(pid) + ')' if pid else 'stopped'}, "
               f"http://127.0.0.1:{the_lab.state['port']}, data in {the_lab.controller_dir}"
               f" ({'real guests' if the_lab.state['driver'] == 'libvirt' else 'simulated'})")
    _print_hosts(the_lab.status())


COLUMNS = ("name", "role", "namespace", "address", "network-agent", "compute", "agent (API)",
           "hypervisor (API)")


def _print_hosts(rows: list[dict]) -> None:
    table = [COLUMNS, *([str(row[c]) for c in COLUMNS] for row in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS))]
    for line in table:
        click.echo("  " + "  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())
