"""`pocketstack audit`: check the cloud's invariants straight from its database and files,
and print what is wrong. Exit status 1 when anything is.

It reads the state of a running or a stopped cloud (the data dir is the owner's only, so
whoever can run it is the cloud's admin), with the settings of the cloud's last start
(``<data dir>/started-with.json``: its config file and its command line's flags, e.g.
``--compute-driver libvirt``, which turns host networking on). What it checks:

* ports and fixed IPs: a port owned by a server (``compute:*``) whose server is gone; an
  IP whose port is gone;
* claims: an allocation without a live server (or a migration in progress), a placed
  server without an allocation, an allocation on another host than its server;
* hypervisor usage: each compute node's used vCPUs/RAM/disk/running VMs against the sum
  of the allocations on it;
* volumes: attachments of servers that are gone, volumes in-use without an attachment or
  available with one, servers' volume mappings whose attachment is gone, volumes a build
  made for a server that is gone left in error, creating or downloading (and what a
  service adds with ``<service>/audit.py: problems(session) -> list[str]``);
* instance disks: RBD images ``<uuid>_disk*`` in the compute pool whose server is gone
  (compute/audit.py);
* DHCP files: each network's files against what the database says they should hold, and
  no files for networks that are gone;
* image store: RBD images in the image pool that no image holds (image/audit.py);
* object store: files under the object store that no object holds, what a crash
  mid-upload leaves (objectstore/audit.py);
* load balancers: objects whose load balancer, pool or policy is gone, VIP ports whose
  load balancer is gone, and the haproxy data plane's files, namespaces and processes
  (this cloud's) against the load balancers (loadbalancer/audit.py);
* stuck transitional states: servers in a task (or BUILD) untouched for longer than
  ``--stuck-after`` seconds, images still saving or importing and volumes in a transitional
  status after that long.

Run it when the cloud is quiet: a boot or a delete in flight is a transient mismatch.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import sys

import click
import sqlalchemy as sa

# Servers whose claim must exist once they sit on a host.
PLACED_STATES = ("active", "stopped", "paused", "suspended", "rescued", "resized")


def ports_and_ips(s, live: set[str]) -> list[str]:
    from pocketstack.network.models import IPAllocation, Port

    problems = []
    for port_id, device_id, owner in s.execute(
            sa.select(Port.id, Port.device_id, Port.device_owner)
            .where(Port.device_owner.like("compute:%"))):
        if device_id and device_id not in live:
            problems.append(f"port {port_id} ({owner}) belongs to server {device_id}, "
                            "which does not exist (any more)")
    ports = set(s.scalars(sa.select(Port.id)))
    for ip, port_id in s.execute(sa.select(IPAllocation.ip_address, IPAllocation.port_id)):
        if port_id not in ports:
            problems.append(f"IP {ip} is allocated to port {port_id}, which does not exist")
    return problems


def claims(s, servers: dict) -> list[str]:
    from pocketstack.compute.models import Migration
    from pocketstack.placement import direct

    problems = []
    moving = {}
    for uuid, instance_uuid, status in s.execute(
            sa.select(Migration.uuid, Migration.instance_uuid, Migration.status)):
        if status not in ("confirmed", "reverted", "error", "failed", "completed"):
            moving[uuid] = instance_uuid
    held = {}
    for consumer, host in {(c, name) for c, _, name, _, _ in direct.all_allocations(s)}:
        held[consumer] = host
        server = servers.get(consumer)
        if server is None and consumer not in moving:
            problems.append(f"claim of {consumer} on {host}: no such live server "
                            "(or migration in progress)")
        elif server is not None and server["host"] and host != server["host"] \
                and consumer not in moving.values():
            problems.append(f"claim of server {consumer} is on {host}, the server on "
                            f"{server['host']}")
    for uuid, server in servers.items():
        if server["host"] and server["vm_state"] in PLACED_STATES and uuid not in held:
            problems.append(f"server {uuid} ({server['vm_state']} on {server['host']}) "
                            "holds no claim")
    return problems


def hypervisor_usage(s) -> list[str]:
    """compute_nodes' counters against the allocations in placement (the truth)."""
    from pocketstack.compute.models import ComputeNode
    from pocketstack.placement import direct

    totals: dict[str, list] = {}
    for consumer, rp_uuid, _, rc, used in direct.all_allocations(s):
        entry = totals.setdefault(rp_uuid, [0, 0, 0, set()])
        if rc in ("VCPU", "MEMORY_MB", "DISK_GB"):
            entry[("VCPU", "MEMORY_MB", "DISK_GB").index(rc)] += used
        entry[3].add(consumer)
    sums = {rp: (v, r, d, len(c)) for rp, (v, r, d, c) in totals.items()}
    problems = []
    for node in s.scalars(sa.select(ComputeNode)):
        want = sums.pop(node.uuid, (0, 0, 0, 0))
        have = (node.vcpus_used, node.memory_mb_used, node.local_gb_used, node.running_vms)
        if tuple(int(v or 0) for v in want) != tuple(have):
            problems.append(
                f"hypervisor {node.host}: used vcpus/ram/disk/vms {have[0]}/{have[1]}/"
                f"{have[2]}/{have[3]}, but its claims add up to "
                f"{'/'.join(str(int(v or 0)) for v in want)}")
    for rp_uuid in sums:
        problems.append(f"claims on resource provider {rp_uuid}, which is no compute node")
    return problems


_VOLUME_BUSY = ("creating", "deleting", "attaching", "detaching", "extending", "downloading",
                "uploading", "reserved", "backing-up", "restoring-backup", "retyping")


# What a volume a build made is left in when the build's cleanup could not delete it.
_LEFT_BY_A_BUILD = ("error", "creating", "downloading")


def volumes(s, live: set[str]) -> list[str]:
    from pocketstack.common import config
    from pocketstack.compute.models import BlockDeviceMapping

    problems = []
    models = config.optional_module("volume", "models")
    if models is not None:
        Attachment = models.VolumeAttachment
        attachments = s.execute(sa.select(Attachment.id, Attachment.volume_id,
                                          Attachment.instance_uuid,
                                          Attachment.attach_status)).all()
        by_volume: dict[str, list] = {}
        for a in attachments:
            by_volume.setdefault(a.volume_id, []).append(a)
            if a.instance_uuid and a.instance_uuid not in live:
                problems.append(f"attachment {a.id} of volume {a.volume_id} belongs to "
                                f"server {a.instance_uuid}, which does not exist (any more)")
        from pocketstack.compute.manager.volumes import CREATED_FOR

        for volume_id, status, meta in s.execute(
                sa.select(models.Volume.id, models.Volume.status, models.Volume.meta)):
            attached = [a for a in by_volume.get(volume_id, [])
                        if a.attach_status == "attached"]
            made_for = (meta or {}).get(CREATED_FOR)
            if status == "in-use" and not by_volume.get(volume_id):
                problems.append(f"volume {volume_id} is in-use without an attachment")
            elif status == "available" and attached:
                problems.append(f"volume {volume_id} is available but attached to server "
                                f"{attached[0].instance_uuid}")
            elif made_for and made_for not in live and status in _LEFT_BY_A_BUILD:
                problems.append(f"volume {volume_id}, made for server {made_for}, which "
                                f"does not exist (any more), is left in {status}")
        known = {a.id for a in attachments}
        for server, volume_id, attachment_id in s.execute(
                sa.select(BlockDeviceMapping.instance_uuid, BlockDeviceMapping.volume_id,
                          BlockDeviceMapping.attachment_id)
                .where(BlockDeviceMapping.attachment_id.is_not(None))):
            if server in live and attachment_id not in known:
                problems.append(f"server {server} maps volume {volume_id} through "
                                f"attachment {attachment_id}, which does not exist")
    module = config.optional_module("volume", "audit")
    return problems + (list(module.problems(s)) if module is not None else [])


def dhcp_files(s) -> list[str]:
    from pocketstack.network import dhcp
    from pocketstack.network.models import Network

    problems = []
    root = dhcp.root()
    networks = set(s.scalars(sa.select(Network.id)))
    for network_id in sorted(networks):
        directory = dhcp.network_dir(network_id)
        expected = dhcp.contents(network_id)  # what the network service would write
        if expected is None:  # gone meanwhile, or no DHCP subnet
            if os.path.isdir(directory) and s.get(Network, network_id) is not None:
                problems.append(f"DHCP files of network {network_id}, which has no DHCP "
                                "subnet")
            continue
        for name in ("host", "addn_hosts", "opts"):
            path = os.path.join(directory, name)
            try:
                with open(path) as f:
                    actual = f.read()
            except FileNotFoundError:
                problems.append(f"DHCP file {path} is missing")
                continue
            if actual != expected[name]:
                missing = set(expected[name].splitlines()) - set(actual.splitlines())
                extra = set(actual.splitlines()) - set(expected[name].splitlines())
                problems.append(f"DHCP file {path} is out of step with the database: "
                                f"{len(missing)} line(s) missing, {len(extra)} stale")
    if os.path.isdir(root):
        for name in sorted(os.listdir(root)):
            if os.path.isdir(os.path.join(root, name)) and name not in networks:
                problems.append(f"DHCP files for network {name}, which does not exist")
    return problems


def stuck(s, stuck_after: float, now: dt.datetime) -> list[str]:
    from pocketstack.compute.models import Instance
    from pocketstack.image.models import Image

    cutoff = now - dt.timedelta(seconds=stuck_after)
    problems = []
    for uuid, vm_state, task_state, updated in s.execute(
            sa.select(Instance.uuid, Instance.vm_state, Instance.task_state,
                      Instance.updated_at)
            .where(Instance.deleted.is_(False),
                   sa.or_(Instance.task_state.is_not(None), Instance.vm_state == "building"),
                   Instance.updated_at < cutoff)):
        problems.append(f"server {uuid} stuck in {vm_state}/{task_state} since "
                        f"{updated:%Y-%m-%d %H:%M:%S}")
    for image_id, status, updated in s.execute(
            sa.select(Image.id, Image.status, Image.updated_at)
            .where(Image.status.in_(("saving", "importing")), Image.updated_at < cutoff)):
        problems.append(f"image {image_id} stuck in {status} since "
                        f"{updated:%Y-%m-%d %H:%M:%S}")
    from pocketstack.common import config

    models = config.optional_module("volume", "models")
    if models is not None:
        Volume = models.Volume
        touched = sa.func.coalesce(Volume.updated_at, Volume.created_at)
        for volume_id, status, updated in s.execute(
                sa.select(Volume.id, Volume.status, touched)
                .where(Volume.status.in_(_VOLUME_BUSY), touched < cutoff)):
            problems.append(f"volume {volume_id} stuck in {status} since "
                            f"{updated:%Y-%m-%d %H:%M:%S}")
    return problems


def vip_ports(s) -> list[str]:
    """Ports the load balancer service made (device_owner Octavia, device_id lb-<id>)
    whose load balancer is gone."""
    from pocketstack.common import config
    from pocketstack.network.models import Port

    models = config.optional_module("loadbalancer", "models")
    if models is None:
        return []
    lbs = set(s.scalars(sa.select(models.LoadBalancer.id)))
    problems = []
    for port_id, device_id in s.execute(sa.select(Port.id, Port.device_id)
                                        .where(Port.device_owner == "Octavia")):
        lb_id = (device_id or "").removeprefix("lb-")
        if lb_id not in lbs:
            problems.append(f"VIP port {port_id} belongs to load balancer {lb_id}, which "
                            "is gone")
    return problems


def _service_problems(s, service: str) -> list[str]:
    from pocketstack.common import config

    module = config.optional_module(service, "audit")
    return list(module.problems(s)) if module is not None else []


def run_checks(stuck_after: float) -> dict[str, list[str]]:
    """Every check's problems, by check name (the database must be configured)."""
    from pocketstack.common import db
    from pocketstack.common.timeutils import utcnow
    from pocketstack.compute.models import Instance

    with db.reader() as s:
        servers = {uuid: {"host": host, "vm_state": vm_state} for uuid, host, vm_state in
                   s.execute(sa.select(Instance.uuid, Instance.host, Instance.vm_state)
                             .where(Instance.deleted.is_(False)))}
        return {
            "ports and IPs": ports_and_ips(s, set(servers)),
            "claims": claims(s, servers),
            "hypervisor usage": hypervisor_usage(s),
            "volumes": volumes(s, set(servers)),
            "DHCP files": dhcp_files(s),
            "image store": _service_problems(s, "image"),
            "object store": _service_problems(s, "objectstore"),
            "stuck states": stuck(s, stuck_after, utcnow()),
            "instance disks": _service_problems(s, "compute"),
            "load balancers": _service_problems(s, "loadbalancer") + vip_ports(s),
        }


def _load(data_dir: str | None, config_file: str | None) -> None:
    from pocketstack.cloud import default_data_dir
    from pocketstack.common import config, db

    data_dir = os.path.abspath(data_dir or default_data_dir())
    if config_file and not os.path.isfile(config_file):
        raise click.ClickException(f"Config file {config_file} does not exist.")
    # the settings of the cloud's last start: its flags (--compute-driver libvirt turns
    # host networking on, which changes what the DHCP files hold) are not in the file
    started_file, overrides = config.started_with(data_dir)
    config_file = config_file or started_file or os.path.join(data_dir, "pocketstack.conf")
    if not os.path.isfile(config_file):
        raise click.ClickException(f"No cloud in {data_dir}: has `pocketstack up` run there?")
    try:
        config.load(data_dir, config_file, overrides)
    except config.ConfigError as error:
        raise click.ClickException(str(error)) from None
    db.configure(config.CONF.database.connection)
    db.configure_models()


@click.command()
@click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None,
              help="State directory of the cloud (as for `pocketstack up`).")
@click.option("--config-file", default=None,
              help="Config file (default <data dir>/pocketstack.conf).")
@click.option("--stuck-after", default=300.0, show_default=True, type=click.FloatRange(0),
              help="Seconds after which a server task or an image upload counts as stuck.")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as JSON.")
def audit(data_dir, config_file, stuck_after, as_json):
    """Check the cloud's invariants; print what is wrong, exit 1 if anything is."""
    _load(data_dir, config_file)
    problems = run_checks(stuck_after)
    count = sum(len(v) for v in problems.values())
    if as_json:
        click.echo(json.dumps({"ok": count == 0, "problems": problems}, indent=2))
    else:
        for check, found in problems.items():
            mark = "ok" if not found else f"{len(found)} problem(s)"
            click.echo(f"{check}: {mark}")
            for line in found:
                click.echo(f"  - {line}")
        click.echo("No problems found." if count == 0 else f"{count} problem(s) found.")
    from pocketstack.common import db

    db.dispose()
    sys.exit(1 if count else 0)
