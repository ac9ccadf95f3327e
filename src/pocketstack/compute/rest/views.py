"""The server representation per microversion (nova's views/servers.py): exact fields,
admin-only extended attributes, addresses hidden while building, fault when ERROR."""
from __future__ import annotations

import hashlib

import sqlalchemy as sa

from pocketstack.common import db, policy
from pocketstack.common.timeutils import isotime, isotime_naive
from pocketstack.compute import instances, states
from pocketstack.compute.models import InstanceTag, ServerGroupMember
from pocketstack.compute.rest.common import at_least, bookmark, links


def host_id(inst) -> str:
    if not inst.host:
        return ""
    return hashlib.sha224((inst.project_id + inst.host).encode()).hexdigest()


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
    return out


def _flavor(req, inst, show_specs: bool) -> dict:
    f = inst.flavor
    if at_least(req, "2.47"):
        out = {"vcpus": f["vcpus"], "ram": f["memory_mb"], "disk": f["root_gb"],
               "ephemeral": f["ephemeral_gb"], "swap": f["swap"], "original_name": f["name"]}
        if show_specs:
            out["extra_specs"] = f.get("extra_specs") or {}
        return out
    return {"id": f["flavorid"], "links": bookmark(req, "flavors", f["flavorid"])}


def _image(req, inst):
    if not inst.image_ref:
        return ""
    return {"id": inst.image_ref, "links": bookmark(req, "images", inst.image_ref)}


class ViewContext:
    """What a list of servers shares: policy answers and the rows loaded in bulk."""

    def __init__(self, req, rows):
        ctx = req.context
        self.extended = policy.check(ctx, "os_compute_api:os-extended-server-attributes",
                                     {"project_id": ctx.project_id})
        self.host_status = policy.check(ctx, "os_compute_api:servers:show:host_status",
                                        {"project_id": ctx.project_id})
        self.specs = at_least(req, "2.47") and policy.check(
            ctx, "os_compute_api:servers:show:flavor-extra-specs",
            {"project_id": ctx.project_id})
        uuids = [r.uuid for r in rows]
        self.tags: dict[str, list] = {}
        self.faults = {}
        self.groups: dict[str, list] = {}
        self.host_states: dict[str, str] = {}
        with db.reader() as s:
            if at_least(req, "2.26") and uuids:
                for uuid, tag in s.execute(sa.select(InstanceTag.instance_uuid, InstanceTag.tag)
                                           .where(InstanceTag.instance_uuid.in_(uuids))):
                    self.tags.setdefault(uuid, []).append(tag)
            errored = [r.uuid for r in rows if r.vm_state == states.ERROR]
            self.faults = instances.latest_faults(s, errored)
            if at_least(req, "2.71") and uuids:
                for g, uuid in s.execute(sa.select(ServerGroupMember.group_uuid,
                                                   ServerGroupMember.instance_uuid)
                                         .where(ServerGroupMember.instance_uuid.in_(uuids))):
                    self.groups.setdefault(uuid, []).append(g)
        if at_least(req, "2.16") and self.host_status:
            from pocketstack.compute.actions import host_up

            for host in {r.host for r in rows if r.host}:
                self.host_states[host] = "UP" if host_up(host) else "DOWN"


def server(req, inst, vc: ViewContext | None = None, *, show_groups: bool = False) -> dict:
    vc = vc or ViewContext(req, [inst])
    status = states.status(inst.vm_state, inst.task_state)
    out = {
        "accessIPv4": inst.access_ip_v4 or "", "accessIPv6": inst.access_ip_v6 or "",
        "addresses": addresses(inst), "created": isotime(inst.created_at),
        "flavor": _flavor(req, inst, vc.specs), "hostId": host_id(inst), "id": inst.uuid,
        "image": _image(req, inst), "links": links(req, "servers", inst.uuid),
        "metadata": inst.metadata_ or {}, "name": inst.display_name, "status": status,
        "tenant_id": inst.project_id, "user_id": inst.user_id,
        "updated": isotime(inst.updated_at or inst.created_at),
        "OS-DCF:diskConfig": "AUTO" if inst.auto_disk_config else "MANUAL",
    }
    if status == "ERROR":
        fault = vc.faults.get(inst.uuid)
        if fault is not None:
            f = {"code": fault.code, "created": isotime(fault.created_at),
                 "message": fault.message}
            if fault.details and (req.context.is_admin or fault.code != 500):
                f["details"] = fault.details
            out["fault"] = f
    if status in ("ACTIVE", "BUILD", "REBUILD", "RESIZE", "VERIFY_RESIZE", "MIGRATING"):
        out["progress"] = inst.progress or 0
    out["OS-EXT-AZ:availability_zone"] = inst.availability_zone or ""
    out["config_drive"] = inst.config_drive or ""
    out["key_name"] = inst.key_name
    out["OS-SRV-USG:launched_at"] = isotime_naive(inst.launched_at)
    out["OS-SRV-USG:terminated_at"] = isotime_naive(inst.terminated_at)
    if inst.security_groups:
        out["security_groups"] = [{"name": n} for n in inst.security_groups]
    if vc.extended:
        out["OS-EXT-SRV-ATTR:host"] = inst.host
        out["OS-EXT-SRV-ATTR:instance_name"] = f"instance-{inst.uuid[:8]}"
        out["OS-EXT-SRV-ATTR:hypervisor_hostname"] = inst.node
        if at_least(req, "2.3"):
            out.update({"OS-EXT-SRV-ATTR:hostname": inst.hostname,
                        "OS-EXT-SRV-ATTR:kernel_id": "", "OS-EXT-SRV-ATTR:ramdisk_id": "",
                        "OS-EXT-SRV-ATTR:launch_index": inst.launch_index,
                        "OS-EXT-SRV-ATTR:reservation_id": inst.reservation_id,
                        "OS-EXT-SRV-ATTR:root_device_name": inst.root_device_name,
                        "OS-EXT-SRV-ATTR:user_data": inst.user_data})
    out["OS-EXT-STS:task_state"] = inst.task_state
    out["OS-EXT-STS:vm_state"] = inst.vm_state
    out["OS-EXT-STS:power_state"] = inst.power_state
    out["os-extended-volumes:volumes_attached"] = []
    if at_least(req, "2.9"):
        out["locked"] = bool(inst.locked_by)
    if at_least(req, "2.16") and vc.host_status:
        out["host_status"] = vc.host_states.get(inst.host, "") if inst.host else ""
    if at_least(req, "2.19"):
        out["description"] = inst.display_description
    if at_least(req, "2.26"):
        out["tags"] = sorted(vc.tags.get(inst.uuid, []))
    if at_least(req, "2.63"):
        out["trusted_image_certificates"] = None
    if show_groups and at_least(req, "2.71"):
        out["server_groups"] = vc.groups.get(inst.uuid, [])
    if at_least(req, "2.73"):
        out["locked_reason"] = inst.locked_reason
    return out


def basic(req, inst) -> dict:
    return {"id": inst.uuid, "links": links(req, "servers", inst.uuid),
            "name": inst.display_name}
