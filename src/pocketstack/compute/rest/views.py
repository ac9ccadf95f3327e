"""The server representation per microversion (nova's views/servers.py): exact fields,
admin-only extended attributes, addresses hidden while building, fault when ERROR."""
from __future__ import annotations

import collections
import functools
import hashlib
import json

import sqlalchemy as sa

from pocketstack.common import db, policy
from pocketstack.common.timeutils import isotime, isotime_naive, utcnow
from pocketstack.compute import block_devices, instances, states
from pocketstack.compute.models import Instance, InstanceTag, ServerGroupMember, Service
from pocketstack.compute.rest.common import at_least, links, version
from pocketstack.compute.scheduler.host_state import service_is_up


def host_id(inst) -> str:
    if not inst.host:
        return ""
    return _host_id(inst.project_id, inst.host)


@functools.lru_cache(maxsize=4096)
def _host_id(project_id: str, host: str) -> str:
    return hashlib.sha224((project_id + host).encode()).hexdigest()


def addresses(inst) -> dict:
    if inst.vm_state == states.BUILDING:
        return {}
    out: dict[str, list] = {}
    for vif in inst.network_info or []:
        ips = sorted(vif.get("fixed_ips", []), key=lambda ip: -ip["version"])
        entries = out.setdefault(vif.get("network_name") or vif["network_id"], [])
        for ip in ips:
            entries.append({"version": ip["version"], "addr": ip["ip_address"],
                            "OS-EXT-IPS:type": "fixed",
                            "OS-EXT-IPS-MAC:mac_addr": vif.get("mac_address")})
            for floating in ip.get("floating_ips") or ():
                entries.append({"version": 4, "addr": floating,
                                "OS-EXT-IPS:type": "floating",
                                "OS-EXT-IPS-MAC:mac_addr": vif.get("mac_address")})
    return out


# What a server's representation reads, for lists that load columns rather than ORM
# objects (a 1,000-server detail list: no request spec, requested networks, key data or
# system metadata, and user_data only when it is shown). Labels keep the attribute names.
_SHOWN = ("uuid", "display_name", "display_description", "hostname", "project_id", "user_id",
          "image_ref", "flavor", "key_name", "vm_state", "task_state", "power_state", "host",
          "node", "availability_zone", "reservation_id", "launch_index", "config_drive",
          "access_ip_v4", "access_ip_v6", "auto_disk_config", "root_device_name",
          "locked_by", "locked_reason", "metadata_", "security_groups", "network_info",
          "progress", "created_at", "updated_at", "launched_at", "terminated_at")


# JSON columns most servers share a value of (the flavor snapshot, {} and []): fetched as
# text and decoded once per distinct value instead of once per server.
_SHARED_JSON = ("flavor", "metadata_", "security_groups")


# A detail list's row: attribute access on a namedtuple costs a tenth of a Row's.
ServerRow = collections.namedtuple("ServerRow", _SHOWN + ("user_data", "pinned_az",
                                                          "image_props", "sched_hints"))


def list_columns(req, detail: bool = True) -> list:
    """The labelled columns ``server()`` (or ``basic()``) needs, for ``sa.select``."""
    if not detail:
        return [Instance.uuid, Instance.display_name, Instance.network_info]
    columns = [(sa.type_coerce(getattr(Instance, name), sa.UnicodeText) if name in _SHARED_JSON
                else getattr(Instance, name)).label(name) for name in _SHOWN]
    if at_least(req, "2.3") and _extended(req.context):
        columns.append(Instance.user_data.label("user_data"))
    else:
        columns.append(sa.null().label("user_data"))
    if at_least(req, "2.96"):  # the zone the request spec pins the server to
        columns.append(Instance.request_spec["availability_zone"].as_string()
                       .label("pinned_az"))
    else:
        columns.append(sa.null().label("pinned_az"))
    # 2.98: the image's properties; 2.100: the scheduler hints (both in the request spec)
    for name, key, since in (("image_props", "image_meta_props", "2.98"),
                             ("sched_hints", "scheduler_hints", "2.100")):
        columns.append((Instance.request_spec[key] if at_least(req, since) else sa.null())
                       .label(name))
    return columns


def _pinned_az(inst):
    """The zone a server is pinned to (its request spec's: the zone it was created or
    last unshelved into), or None; a list row carries it as ``pinned_az``."""
    if hasattr(inst, "pinned_az"):
        return inst.pinned_az
    return (inst.request_spec or {}).get("availability_zone")


def _spec_value(inst, name: str, key: str):
    """A request spec's ``key`` ({} when absent); a list row carries it as ``name``."""
    if hasattr(inst, name):
        value = _decoded(getattr(inst, name))
    else:
        value = (inst.request_spec or {}).get(key)
    return value or {}


def _decoded(value):
    """A JSON column's value: as loaded (ORM objects, drivers that decode JSON themselves)
    or from its text, decoded once per distinct text. The result is shared: read only."""
    return _loads(value) if isinstance(value, str) else value


@functools.lru_cache(maxsize=256)
def _loads(text: str):
    return json.loads(text)


def _iso(value) -> str | None:
    """timeutils.isotime for the naive datetimes the database returns, 3x faster."""
    if value is None or value.tzinfo is not None:
        return isotime(value)
    return value.isoformat(timespec="seconds") + "Z"


def _iso_naive(value) -> str | None:
    if value is None or value.tzinfo is not None:
        return isotime_naive(value)
    return value.isoformat(timespec="microseconds")


def _extended(ctx) -> bool:
    return policy.check(ctx, "os_compute_api:os-extended-server-attributes",
                        {"project_id": ctx.project_id})


def _flavor(vc, inst) -> dict:
    f = _decoded(inst.flavor)
    if vc.v2_47:
        out = {"vcpus": f["vcpus"], "ram": f["memory_mb"], "disk": f["root_gb"],
               "ephemeral": f["ephemeral_gb"], "swap": f["swap"], "original_name": f["name"]}
        if vc.specs:
            out["extra_specs"] = f.get("extra_specs") or {}
        return out
    return {"id": f["flavorid"],
            "links": [{"rel": "bookmark", "href": f"{vc.base}/flavors/{f['flavorid']}"}]}


def _image(vc, inst):
    if not inst.image_ref:
        return ""
    out = {"id": inst.image_ref,
           "links": [{"rel": "bookmark", "href": f"{vc.base}/images/{inst.image_ref}"}]}
    if vc.v2_98:
        out["properties"] = dict(_spec_value(inst, "image_props", "image_meta_props"))
    return out


class ViewContext:
    """What a list of servers shares: the microversion's switches, the links' base, policy
    answers and the rows loaded in bulk (tags, faults, groups, host states)."""

    def __init__(self, req, rows, *, uuids=None, groups: bool = True):
        """``uuids`` may be a SELECT of the rows' ids (a long list filters the bulk loads
        with it instead of a parameter per server); ``groups=False`` skips the server
        groups, which only a single server's view shows."""
        ctx = req.context
        v = version(req)
        self.v2_3, self.v2_9, self.v2_16, self.v2_19 = (v >= (2, 3), v >= (2, 9),
                                                        v >= (2, 16), v >= (2, 19))
        self.v2_26, self.v2_47, self.v2_63 = v >= (2, 26), v >= (2, 47), v >= (2, 63)
        self.v2_71, self.v2_73, self.v2_90 = v >= (2, 71), v >= (2, 73), v >= (2, 90)
        self.v2_96, self.v2_98, self.v2_100 = v >= (2, 96), v >= (2, 98), v >= (2, 100)
        self.base = req.service_url
        self.is_admin = ctx.is_admin
        self.extended = _extended(ctx)
        self.host_status = policy.check(ctx, "os_compute_api:servers:show:host_status",
                                        {"project_id": ctx.project_id})
        self.specs = self.v2_47 and policy.check(
            ctx, "os_compute_api:servers:show:flavor-extra-specs",
            {"project_id": ctx.project_id})
        ids = [r.uuid for r in rows]
        if uuids is None or len(ids) < 50:
            uuids = ids
        self.tags: dict[str, list] = {}
        self.faults = {}
        self.groups: dict[str, list] = {}
        self.host_states: dict[str, str] = {}
        self.volumes: dict[str, list] = {}
        hosts = {r.host for r in rows if r.host} if self.v2_16 and self.host_status else ()
        if not ids:
            return
        with db.reader() as s:
            if self.v2_26:
                for uuid, tag in s.execute(sa.select(InstanceTag.instance_uuid, InstanceTag.tag)
                                           .where(InstanceTag.instance_uuid.in_(uuids))):
                    self.tags.setdefault(uuid, []).append(tag)
            self.volumes = block_devices.attached_volumes(s, uuids)
            errored = [r.uuid for r in rows if r.vm_state == states.ERROR]
            self.faults = instances.latest_faults(s, errored)
            if self.v2_71 and groups:
                for g, uuid in s.execute(sa.select(ServerGroupMember.group_uuid,
                                                   ServerGroupMember.instance_uuid)
                                         .where(ServerGroupMember.instance_uuid.in_(uuids))):
                    self.groups.setdefault(uuid, []).append(g)
            if hosts:
                seen = {host: (last, forced) for host, last, forced in s.execute(
                    sa.select(Service.host, Service.last_seen_up, Service.forced_down)
                    .where(Service.host.in_(hosts), Service.binary == "nova-compute"))}
                now = utcnow()
                for host in hosts:
                    last, forced = seen.get(host, (None, True))
                    self.host_states[host] = ("UP" if service_is_up(last, forced, now)
                                              else "DOWN")


def server(req, inst, vc: ViewContext | None = None, *, show_groups: bool = False) -> dict:
    vc = vc or ViewContext(req, [inst])
    uuid = inst.uuid
    status = states.status(inst.vm_state, inst.task_state)
    out = {
        "accessIPv4": inst.access_ip_v4 or "", "accessIPv6": inst.access_ip_v6 or "",
        "addresses": addresses(inst), "created": _iso(inst.created_at),
        "flavor": _flavor(vc, inst), "hostId": host_id(inst), "id": uuid,
        "image": _image(vc, inst),
        "links": [{"rel": "self", "href": f"{vc.base}/v2.1/servers/{uuid}"},
                  {"rel": "bookmark", "href": f"{vc.base}/servers/{uuid}"}],
        "metadata": _decoded(inst.metadata_) or {}, "name": inst.display_name,
        "status": status,
        "tenant_id": inst.project_id, "user_id": inst.user_id,
        "updated": _iso(inst.updated_at or inst.created_at),
        "OS-DCF:diskConfig": "AUTO" if inst.auto_disk_config else "MANUAL",
    }
    if status == "ERROR":
        fault = vc.faults.get(uuid)
        if fault is not None:
            f = {"code": fault.code, "created": isotime(fault.created_at),
                 "message": fault.message}
            if fault.details and (vc.is_admin or fault.code != 500):
                f["details"] = fault.details
            out["fault"] = f
    if status in _PROGRESS:
        out["progress"] = inst.progress or 0
    out["OS-EXT-AZ:availability_zone"] = inst.availability_zone or ""
    if vc.v2_96:
        out["pinned_availability_zone"] = _pinned_az(inst)
    if vc.v2_100:
        out["scheduler_hints"] = dict(_spec_value(inst, "sched_hints", "scheduler_hints"))
    out["config_drive"] = inst.config_drive or ""
    out["key_name"] = inst.key_name
    out["OS-SRV-USG:launched_at"] = _iso_naive(inst.launched_at)
    out["OS-SRV-USG:terminated_at"] = _iso_naive(inst.terminated_at)
    security_groups = _decoded(inst.security_groups)
    if security_groups:
        out["security_groups"] = [{"name": n} for n in security_groups]
    if vc.extended:
        out["OS-EXT-SRV-ATTR:host"] = inst.host
        out["OS-EXT-SRV-ATTR:instance_name"] = f"instance-{uuid[:8]}"
        out["OS-EXT-SRV-ATTR:hypervisor_hostname"] = inst.node
        if vc.v2_3:
            out.update({"OS-EXT-SRV-ATTR:hostname": inst.hostname,
                        "OS-EXT-SRV-ATTR:kernel_id": "", "OS-EXT-SRV-ATTR:ramdisk_id": "",
                        "OS-EXT-SRV-ATTR:launch_index": inst.launch_index,
                        "OS-EXT-SRV-ATTR:reservation_id": inst.reservation_id,
                        "OS-EXT-SRV-ATTR:root_device_name": inst.root_device_name,
                        "OS-EXT-SRV-ATTR:user_data": inst.user_data})
    out["OS-EXT-STS:task_state"] = inst.task_state
    out["OS-EXT-STS:vm_state"] = inst.vm_state
    out["OS-EXT-STS:power_state"] = inst.power_state
    out["os-extended-volumes:volumes_attached"] = [
        {"id": v, "delete_on_termination": dot} if vc.v2_3 else {"id": v}
        for v, dot in vc.volumes.get(uuid, ())]
    if vc.v2_9:
        out["locked"] = bool(inst.locked_by)
    if vc.v2_16 and vc.host_status:
        out["host_status"] = vc.host_states.get(inst.host, "") if inst.host else ""
    if vc.v2_19:
        out["description"] = inst.display_description
    if vc.v2_26:
        out["tags"] = sorted(vc.tags.get(uuid, []))
    if vc.v2_63:
        out["trusted_image_certificates"] = None
    if show_groups and vc.v2_71:
        out["server_groups"] = vc.groups.get(uuid, [])
    if vc.v2_73:
        out["locked_reason"] = inst.locked_reason
    if vc.v2_90 and not vc.extended:
        # 2.90 shows everyone the hostname (admins have it among the extended attributes)
        out["OS-EXT-SRV-ATTR:hostname"] = inst.hostname
    return out


_PROGRESS = frozenset(("ACTIVE", "BUILD", "REBUILD", "RESIZE", "VERIFY_RESIZE", "MIGRATING"))


# What PUT /servers/{id} and rebuild answer only from 2.75 (nova's show_all_attributes).
_FROM_2_75 = frozenset((
    "OS-EXT-AZ:availability_zone", "config_drive", "key_name", "OS-SRV-USG:launched_at",
    "OS-SRV-USG:terminated_at", "security_groups", "OS-EXT-STS:task_state",
    "OS-EXT-STS:vm_state", "OS-EXT-STS:power_state", "os-extended-volumes:volumes_attached",
    "host_status"))


def after_change(req, inst) -> dict:
    """The server as update and rebuild answer it: before 2.75 without the extended
    attributes and with plain addresses (version and addr only), as nova."""
    if at_least(req, "2.75"):
        return server(req, inst, show_groups=True)
    out = {k: v for k, v in server(req, inst).items()
           if k not in _FROM_2_75 and not k.startswith("OS-EXT-SRV-ATTR:")}
    out["addresses"] = {net: [{"version": a["version"], "addr": a["addr"]} for a in addrs]
                        for net, addrs in out["addresses"].items()}
    return out


def basic(req, inst) -> dict:
    return {"id": inst.uuid, "links": links(req, "servers", inst.uuid),
            "name": inst.display_name}
