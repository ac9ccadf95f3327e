"""The compute API other code calls (seed steps 6-7): validate everything up front, count
quotas, write the instances and their request spec, cast to the conductor. Server actions
are in actions.py.

Validation talks to the image, network and volume services through their REST APIs with
the user's token, so "another project's network" (or volume) is simply one the user cannot
see. Block device mappings are checked in block_devices.py; existing volumes are reserved
for the server before its rows are written (and given back if writing fails).
"""
from __future__ import annotations

import base64
import re
import secrets
import string
import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, policy, runtime
from pocketstack.common.timeutils import utcnow
from pocketstack.compute import block_devices, image_props, instances, quotas, states, trace
from pocketstack.clients.image import ImageClient
from pocketstack.clients.network import NetworkClient
from pocketstack.compute.conductor.rpcapi import ConductorAPI
from pocketstack.compute.models import (Aggregate, BlockDeviceMapping, Instance, InstanceTag,
                                        ServerGroup, ServerGroupMember)
from pocketstack.compute.trace import Step

_INSERT_INSTANCE = sa.insert(Instance.__table__)


def conductor() -> ConductorAPI:
    """The current cloud's conductor client (common/runtime.py)."""
    return runtime.current().slot(__name__ + ".conductor", ConductorAPI)


def _bad(message: str) -> exceptions.BadRequest:
    return exceptions.BadRequest(message)


def _in_a_subnet(client: NetworkClient, net: dict, address: str) -> bool:
    """Whether ``address`` lies in one of the network's subnets: checked here, since a
    build that fails on it fails on every host."""
    import ipaddress

    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    for subnet_id in net.get("subnets") or []:
        subnet = client.get_subnet(subnet_id) or {}
        if subnet.get("cidr") and ip in ipaddress.ip_network(subnet["cidr"], strict=False):
            return True
    return False


def generate_password(length: int = 12) -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(length))


def hostname_for(name: str) -> str:
    host = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-.")[:63].strip("-")
    return host or "server"


# --- validation pieces ------------------------------------------------------------------

def _image(ctx, image_ref: str, flavor: dict) -> dict:
    return _checked_image(_fetch_image(ctx, image_ref), image_ref, flavor)


def _fetch_image(ctx, image_ref: str) -> dict | None:
    try:
        uuidlib.UUID(image_ref)
    except ValueError:
        raise _bad("Invalid imageRef provided.") from None
    return ImageClient(ctx).get(image_ref)


def _checked_image(meta: dict | None, image_ref: str, flavor: dict) -> dict:
    """The image a server boots from locally: there, active, and fitting the flavor."""
    if meta is None:
        raise _bad(f"Image {image_ref} could not be found.")
    if meta.get("status") != "active":
        raise _bad(f"Image {image_ref} is not active.")
    if meta.get("cinder_encryption_key_id"):  # LUKS bytes: only a volume opens them
        raise _bad(f"Image {image_ref} is unacceptable: Direct booting of an image uploaded "
                   f"from an encrypted volume is unsupported.")
    if (meta.get("min_ram") or 0) > flavor["memory_mb"]:
        raise _bad("Flavor's memory is too small for requested image.")
    root_bytes = flavor["root_gb"] * 1024 ** 3
    if flavor["root_gb"] and ((meta.get("min_disk") or 0) > flavor["root_gb"]
                              or (meta.get("size") or 0) > root_bytes):
        raise _bad("Flavor's disk is too small for requested image.")
    return meta


def _visible_networks(client: NetworkClient, project_id: str) -> list[dict]:
    nets = {n["id"]: n for n in client.list_networks(project_id=project_id)}
    for n in client.list_networks(shared=True):
        nets.setdefault(n["id"], n)
    return [n for n in nets.values() if not n.get("router:external")]


def _dns_domain(net: dict) -> dict:
    """A network with a dns_domain names its new ports after the server (nova's
    dns_name = hostname): what the build needs to know of it."""
    return {"dns_domain": net["dns_domain"]} if net.get("dns_domain") else {}


def _networks(ctx, requested, max_count: int) -> list[dict] | str:
    """Resolve the requested networks into [{network_id, network_name, port_id, fixed_ip,
    tag}] (nova's validate_networks)."""
    if requested == "none":
        return []
    client = NetworkClient(ctx)
    if requested in (None, "auto"):
        nets = _visible_networks(client, ctx.project_id)
        if not nets:
            if requested == "auto":
                raise _bad("Unable to automatically allocate a network for project "
                           f"{ctx.project_id}: it has no network; create one or pass "
                           "networks=none.")
            return []
        if len(nets) > 1:
            raise exceptions.Conflict("Multiple possible networks found, use a Network ID "
                                      "to be more specific.")
        return [{"network_id": nets[0]["id"], "network_name": nets[0]["name"],
                 **_dns_domain(nets[0])}]
    out = []
    for req in requested:
        entry = {"tag": req.get("tag")}
        if req.get("port"):
            port = client.get_port(req["port"])
            if port is None:
                raise _bad(f"Port {req['port']} could not be found.")
            if port.get("device_id"):
                raise exceptions.Conflict(f"Port {req['port']} is still in use.")
            if max_count > 1:
                raise _bad("Unable to launch multiple instances with a single configured "
                           "port ID. Please launch your instance one by one with different "
                           "ports.")
            net = client.get_network(port["network_id"]) or {}
            entry.update(port_id=port["id"], network_id=port["network_id"],
                         network_name=net.get("name", ""))
        else:
            net_id = req.get("uuid")
            if not net_id:
                raise _bad("Bad networks format: network uuid is not in proper format")
            net = client.get_network(net_id)
            if net is None:
                raise _bad(f"Network {net_id} could not be found.")
            if not net.get("subnets"):
                raise _bad(f"Network {net_id} requires a subnet in order to boot instances on.")
            entry.update(network_id=net_id, network_name=net.get("name", ""),
                         **_dns_domain(net))
            if req.get("fixed_ip"):
                if max_count > 1:
                    raise _bad("max_count cannot be greater than 1 if an fixed_ip is "
                               "specified.")
                if not _in_a_subnet(client, net, req["fixed_ip"]):
                    raise _bad(f"Fixed IP address {req['fixed_ip']} is not in a subnet of "
                               f"network {net_id}.")
                used = client.list_ports(network_id=net_id,
                                         fixed_ips=f"ip_address={req['fixed_ip']}")
                if used:
                    raise _bad(f"Fixed IP address {req['fixed_ip']} is already in use on "
                               f"instance {used[0].get('device_id') or 'a port'}.")
                entry["fixed_ip"] = req["fixed_ip"]
        out.append(entry)
    return out


def _security_groups(ctx, names: list[str]) -> list[dict]:
    """Names (or ids) → the groups, in the user's project (nova's
    _process_security_groups). The openstack CLI sends ids; the server shows names."""
    client = NetworkClient(ctx)
    groups = client.list_security_groups(project_id=ctx.project_id)
    found = []
    for name in names:
        match = [g for g in groups if g["id"] == name] or [g for g in groups if g["name"] == name]
        if not match:
            raise _bad(f"Security group {name} not found for project {ctx.project_id}.")
        if len(match) > 1:
            raise exceptions.Conflict(f"Multiple security groups named {name}; use its id.")
        found.append(match[0])
    return found


def availability_zones() -> set[str]:
    zones = {config.CONF.compute.default_availability_zone}
    with db.reader() as s:
        for meta in s.scalars(sa.select(Aggregate.metadata_)).all():
            if (meta or {}).get("availability_zone"):
                zones.add(meta["availability_zone"])
    return zones


def _zone(ctx, value: str | None) -> tuple[str | None, str | None, str | None]:
    """availability_zone, or admin's zone:host:node → (zone, host, node)."""
    if not value:
        return None, None, None
    zone, _, rest = value.partition(":")
    host, _, node = rest.partition(":")
    if host or node:
        policy.authorize(ctx, "os_compute_api:servers:create:forced_host")
    if zone and zone not in availability_zones():
        raise _bad("The requested availability zone is not available")
    return zone or None, host or None, node or None


def _group(ctx, hints: dict) -> dict | None:
    group = hints.get("group")
    if not group:
        return None
    group = group[0] if isinstance(group, list) else group
    with db.reader() as s:
        row = s.get(ServerGroup, group)
        if row is None or (row.project_id != ctx.project_id and not ctx.is_admin):
            raise _bad(f"Invalid server group {group}: it does not exist.")
        members = s.scalar(sa.select(sa.func.count()).select_from(ServerGroupMember)
                           .where(ServerGroupMember.group_uuid == group))
    limit = quotas.limits(row.project_id)["server_group_members"]
    return {"uuid": row.uuid, "policy": row.policy, "rules": row.rules or {},
            "members": members, "limit": limit}


def _metadata_and_files(ctx, metadata: dict, personality: list, lim: dict | None = None):
    lim = lim if lim is not None else quotas.limits(ctx.project_id)
    if 0 <= lim["metadata_items"] < len(metadata):
        raise quotas.QuotaExceeded(f"Quota exceeded for metadata_items: Requested "
                                   f"{len(metadata)}, but the limit is "
                                   f"{lim['metadata_items']} metadata items")
    if 0 <= lim["injected_files"] < len(personality):
        raise quotas.QuotaExceeded("Personality file limit exceeded")
    for item in personality:
        if len(item.get("path", "")) > lim["injected_file_path_bytes"]:
            raise quotas.QuotaExceeded("Personality file path exceeds maximum "
                                       f"{lim['injected_file_path_bytes']}")
        try:
            content = base64.b64decode(item.get("contents", ""), validate=True)
        except ValueError:
            raise _bad(f"Personality content for {item.get('path')} cannot be decoded") \
                from None
        if len(content) > lim["injected_file_content_bytes"]:
            raise quotas.QuotaExceeded("Personality file content exceeds maximum "
                                       f"{lim['injected_file_content_bytes']}")


def _boot_image(ctx, p: dict, flavor: dict, bdms: list,
                given: dict | None) -> tuple[dict, dict | None]:
    """(the image metadata, the boot volume's image metadata or None): a server that boots
    from a volume needs no flavor disk for it (nova's root_bdm rules). ``given``: the
    request's image, as fetched."""
    bfv = block_devices.volume_backed(bdms)
    images: dict = {}

    def image_get(image_id):
        if image_id not in images:
            images[image_id] = ImageClient(ctx).get(image_id)
        return images[image_id]

    image = {}
    if p["image_ref"] and not bfv:
        image = _checked_image(given, p["image_ref"], flavor)
        images[image["id"]] = image
    elif p["image_ref"]:
        image = given
        if image is None or image.get("status") != "active":
            raise _bad(f"Image {p['image_ref']} could not be found.")
    elif not bdms:
        raise _bad("Missing imageRef attribute")
    boot_meta = None
    if block_devices.volumes_of(bdms):
        boot_meta = block_devices.check(ctx, bdms, image_get, image_given=bool(p["image_ref"]))
    if bfv and (boot_meta or {}).get("min_ram") and \
            int(boot_meta["min_ram"]) > flavor["memory_mb"]:
        raise _bad("Flavor's memory is too small for requested image.")
    return image, boot_meta if bfv else None


# --- create -----------------------------------------------------------------------------

def create(ctx, p: dict) -> tuple[list[Instance], str, str]:
    """Validate, count quota, write, cast. ``p`` is the normalized request (servers.py)."""
    from pocketstack.compute.rest.flavors import get_flavor
    from pocketstack.compute.rest.keypairs import find as find_keypair

    check = Step(ctx, "", "api_validate", "api", config.CONF.host)
    # The create's own rows in one read: flavor, quota limits and usage (the usage is
    # checked below, in nova's order, and again once the rows are written).
    with db.reader() as s:
        try:
            flavor = get_flavor(ctx, p["flavor_ref"], session=s)
        except exceptions.NotFound:
            raise _bad(f"Flavor {p['flavor_ref']} could not be found.") from None
        lim = quotas.limits(ctx.project_id, session=s)
        used = quotas.usage(ctx.project_id, session=s)
    if flavor["disabled"]:
        raise _bad(f"Flavor {p['flavor_ref']} is disabled.")
    min_count, max_count = p["min_count"], p["max_count"]
    if min_count > max_count:
        raise _bad("min_count must be <= max_count")
    _metadata_and_files(ctx, p["metadata"], p["personality"], lim)
    given = _fetch_image(ctx, p["image_ref"]) if p["image_ref"] else None
    # An active image may map volumes of its own (a volume-backed server's snapshot).
    image_bdms = block_devices.image_defined(given) \
        if (given or {}).get("status") == "active" else []
    bdms = block_devices.parse(p["block_device_mapping"], p.get("legacy_bdm") or [],
                               p["image_ref"], max_count, image_defined=image_bdms)
    image, boot_meta = _boot_image(ctx, p, flavor, bdms, given)
    key = None
    if p["key_name"]:
        key = find_keypair(ctx.user_id, p["key_name"])
        if key is None:
            raise _bad("Invalid key_name provided.")
    zone, force_host, force_node = _zone(ctx, p["availability_zone"])
    group = _group(ctx, p["hints"])
    if group and 0 <= group["limit"] < group["members"] + max_count:
        raise quotas.QuotaExceeded("Quota exceeded, too many servers in group")
    networks = _networks(ctx, p["networks"], max_count)
    wanted = p["security_groups"] or ["default"]
    if networks and wanted == ["default"]:
        # As nova (_clean_security_groups): a port created without groups gets its
        # project's default group from the network service, so there is nothing to look up.
        sg_ids, sg_names = [], ["default"]
    else:
        groups = _security_groups(ctx, wanted) if networks else []
        sg_ids, sg_names = [g["id"] for g in groups], [g["name"] for g in groups]
    count = quotas.check_instances(ctx.project_id, max_count, flavor, min_count=min_count,
                                   lim=lim, used=used)
    root = f"image {image.get('name') or '-'}" if boot_meta is None else "root on a volume"
    check.done(detail=f"flavor {flavor['name']}, {root}, "
                      f"{len(block_devices.volumes_of(bdms))} volume(s), "
                      f"{len(networks)} network(s), quota ok for {count}")

    reservation_id = "r-" + "".join(secrets.choice(string.ascii_lowercase + string.digits)
                                    for _ in range(8))
    admin_pass = p["admin_pass"] or generate_password()
    spec = {"flavor": flavor, "project_id": ctx.project_id, "user_id": ctx.user_id,
            "image": {k: (image or boot_meta or {}).get(k)
                      for k in ("id", "name", "min_ram", "min_disk", "size", "disk_format",
                                "container_format")},
            "is_bfv": boot_meta is not None,
            "image_properties": {k: v for k, v in image.items()
                                 if k.startswith(("hw_", "img_")) or k in (
                                     "architecture", "hypervisor_type", "vm_mode")},
            "availability_zone": zone, "force_host": force_host, "force_node": force_node,
            "hints": {k: v for k, v in p["hints"].items() if k in ("same_host",
                                                                  "different_host")},
            # every hint as nova's RequestSpec keeps them (values as lists), shown from 2.100
            "scheduler_hints": {k: v if isinstance(v, list) else [v]
                                for k, v in p["hints"].items()},
            # the image's properties as nova's system metadata keeps them, shown from 2.98
            "image_meta_props": image_props.shown(image),
            "group": group and {k: group[k] for k in ("uuid", "policy", "rules")},
            "security_group_ids": sg_ids, "block_device_mapping": bdms,
            "num_instances": count}
    az = zone or config.CONF.compute.default_availability_zone
    deadline = instances.build_deadline(config.CONF.compute.build_timeout)
    # Volumes the build makes are the user's: a build rescheduled in the background makes
    # them with this token (compute/manager/volumes.py).
    creates_volumes = any(b.get("volume_id") is None for b in block_devices.volumes_of(bdms))
    build_token = ctx.auth_token if creates_volumes else None
    now = utcnow()
    rows = []
    for index in range(count):
        name = p["name"] if count == 1 else f"{p['name']}-{index + 1}"
        rows.append(Instance(
            uuid=str(uuidlib.uuid4()), display_name=name, display_description=p["description"],
            hostname=p.get("hostname") or hostname_for(name),  # 2.90: the user's, if given
            project_id=ctx.project_id, user_id=ctx.user_id,
            image_ref=p["image_ref"] or "", flavor=flavor, vcpus=flavor["vcpus"],
            memory_mb=flavor["memory_mb"], key_name=key.name if key else None,
            key_data=key.public_key if key else None, vm_state=states.BUILDING,
            task_state=states.SCHEDULING, power_state=states.NOSTATE, availability_zone=az,
            reservation_id=reservation_id, launch_index=index,
            config_drive="True" if p["config_drive"] or config.CONF.force_config_drive else "",
            user_data=p["user_data"],
            access_ip_v4=p["access_ip_v4"], access_ip_v6=p["access_ip_v6"],
            auto_disk_config=p["disk_config"] == "AUTO", metadata_=dict(p["metadata"]),
            system_metadata={}, security_groups=sg_names,
            requested_networks=networks, request_spec=spec, attempt=1,
            build_deadline=deadline, build_token=build_token, root_device_name="/dev/vda",
            created_at=now,
            updated_at=now))
    # Existing volumes are reserved for the server now, as nova's API does: a volume
    # another request takes meanwhile fails this request, not its build.
    reserved = block_devices.reserve(ctx, bdms, rows[0].uuid)
    bdm_rows = [r for inst in rows for r in block_devices.rows_for(bdms, inst.uuid)]
    try:
        _write(ctx, p, rows, bdm_rows, group, check, count, flavor, lim)
    except Exception:
        block_devices.unreserve(ctx, reserved)
        raise
    conductor().schedule_and_build_instances(ctx, [r.uuid for r in rows])
    return rows, reservation_id, admin_pass


def _write(ctx, p, rows, bdm_rows, group, check, count, flavor, lim) -> None:
    """The instances and everything they come with, in one transaction (seed step 7).

    SQLite serializes writers (common/db.py), so the quota recheck inside the write
    transaction is exact and a failed one writes nothing; other engines recheck after the
    commit and delete what they wrote, as nova does."""
    serialized = db.engine().dialect.name == "sqlite"
    instance_values = [instances.column_values(inst) for inst in rows]  # before the lock
    with db.transaction() as s:
        conn = s.connection()
        conn.execute(_INSERT_INSTANCE, instance_values)
        if bdm_rows:
            conn.execute(sa.insert(BlockDeviceMapping.__table__), bdm_rows)
        if p["tags"]:
            conn.execute(sa.insert(InstanceTag.__table__), [
                {"instance_uuid": inst.uuid, "tag": tag} for inst in rows for tag in p["tags"]])
        if group:
            conn.execute(sa.insert(ServerGroupMember.__table__), [
                {"group_uuid": group["uuid"], "instance_uuid": inst.uuid} for inst in rows])
        events = []
        for index, inst in enumerate(rows):
            trace.start_action(s, ctx, inst.uuid, "create")
            first = Step(ctx, inst.uuid, check.name, "api", check.host, check.detail)
            first.start, first.finish, first.result = check.start, check.finish, check.result
            write = Step(ctx, inst.uuid, "api_create", "api", config.CONF.host,
                         f"vm_state building, task_state scheduling ({index + 1}/{count})")
            events += [first, write.done()]
        trace.store(s, events)
        # Unlimited instances, cores and RAM (as read before, like the limits the recheck
        # uses): nothing to recount, and the count is a scan of the project's servers
        # under the writer lock.
        if serialized and any(lim[k] >= 0 for k in ("instances", "cores", "ram")):
            quotas.check_instances(ctx.project_id, count, flavor, already_written=count,
                                   lim=lim, used=quotas.usage(ctx.project_id, session=s))
    if not serialized:
        # The recheck: concurrent requests counted before either wrote.
        try:
            quotas.check_instances(ctx.project_id, count, flavor, already_written=count)
        except quotas.QuotaExceeded:
            with db.transaction() as s:
                for inst in rows:
                    s.execute(sa.delete(Instance).where(Instance.uuid == inst.uuid))
                    s.execute(sa.delete(InstanceTag)
                              .where(InstanceTag.instance_uuid == inst.uuid))
                    s.execute(sa.delete(ServerGroupMember)
                              .where(ServerGroupMember.instance_uuid == inst.uuid))
                    s.execute(sa.delete(BlockDeviceMapping)
                              .where(BlockDeviceMapping.instance_uuid == inst.uuid))
            raise
