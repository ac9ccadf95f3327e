"""GET /servers/{id}/diagnostics (admin) and /servers/{id}/os-server-password (the
encrypted password a guest posted to the metadata service; empty until one does)."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.compute import instances, states
from pocketstack.compute.models import ComputeNode
from pocketstack.compute.rest.common import at_least, authorize, respond

_STATE = {states.NOSTATE: "pending", states.RUNNING: "running",
          states.PAUSED_POWER: "paused", states.SHUTDOWN: "shutdown",
          states.CRASHED: "crashed", states.SUSPENDED_POWER: "suspended"}


def diagnostics(req):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, "os_compute_api:os-server-diagnostics", {"project_id": inst.project_id})
    if inst.vm_state in (states.BUILDING, states.SHELVED_OFFLOADED) or not inst.host:
        raise exceptions.Conflict(f"Cannot 'get_diagnostics' instance {inst.uuid} while it "
                                  f"is in vm_state {inst.vm_state}")
    with db.reader() as s:
        hv_type = s.scalar(sa.select(ComputeNode.hypervisor_type)
                           .where(ComputeNode.host == inst.host).limit(1)) or "fake"
    flavor = inst.flavor or {}
    vifs = inst.network_info or []
    memory_kb = flavor.get("memory_mb", 0) * 1024
    if not at_least(req, "2.48"):
        out = {f"cpu{i}_time": 0 for i in range(flavor.get("vcpus", 1))}
        out.update({"memory": memory_kb, "vda_read": 0, "vda_read_req": 0, "vda_write": 0,
                    "vda_write_req": 0, "vda_errors": -1})
        for i, _ in enumerate(vifs):
            out.update({f"tap{i}_{k}": 0 for k in ("rx", "rx_drop", "rx_errors",
                                                     "rx_packets", "tx", "tx_drop",
                                                     "tx_errors", "tx_packets")})
        return respond(req, out)
    uptime = 0
    if inst.launched_at is not None and inst.power_state == states.RUNNING:
        from pocketstack.common.timeutils import utcnow

        uptime = int((utcnow() - inst.launched_at.replace(tzinfo=None)).total_seconds())
    return respond(req, {
        "state": _STATE.get(inst.power_state, "pending"),
        "driver": "libvirt" if hv_type.lower() in ("qemu", "kvm") else "fake",
        "hypervisor": hv_type.lower(), "hypervisor_os": "linux", "uptime": uptime,
        "config_drive": bool(inst.config_drive), "num_cpus": flavor.get("vcpus", 0),
        "num_nics": len(vifs), "num_disks": 1,
        "cpu_details": [{"id": i, "time": 0, "utilisation": None}
                        for i in range(flavor.get("vcpus", 0))],
        "nic_details": [{"mac_address": v.get("mac_address"), "rx_octets": 0,
                         "rx_errors": 0, "rx_drop": 0, "rx_packets": 0, "rx_rate": None,
                         "tx_octets": 0, "tx_errors": 0, "tx_drop": 0, "tx_packets": 0,
                         "tx_rate": None} for v in vifs],
        "disk_details": [{"read_bytes": 0, "read_requests": 0, "write_bytes": 0,
                          "write_requests": 0, "errors_count": 0}],
        "memory_details": {"maximum": flavor.get("memory_mb", 0), "used": 0}})


def show_password(req):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, "os_compute_api:os-server-password:show", {"project_id": inst.project_id})
    return respond(req, {"password": (inst.system_metadata or {}).get("password", "")})


def clear_password(req):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, "os_compute_api:os-server-password:clear", {"project_id": inst.project_id})
    meta = dict(inst.system_metadata or {})
    if meta.pop("password", None) is not None:
        instances.update(inst.uuid, {"system_metadata": meta})
    return respond(req, None, 204)


def topology(req):
    """GET /servers/{id}/topology (2.78): the guest's NUMA topology. No server here has
    one (no flavor asks for NUMA placement), so nova's answer for such a server."""
    if not at_least(req, "2.78"):
        raise exceptions.NotFound("The resource could not be found.")
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, "os_compute_api:servers:topology:index", {"project_id": inst.project_id})
    return respond(req, {"nodes": [], "pagesize_kb": None})
