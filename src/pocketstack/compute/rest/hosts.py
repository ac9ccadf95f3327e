"""/os-hosts (deprecated: gone from 2.43, as nova): the hosts of the compute services and
each compute host's resources."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.compute.models import ComputeNode, Instance, Service
from pocketstack.compute.rest.common import at_least, authorize, respond


def _before_2_43(req) -> None:
    if at_least(req, "2.43"):
        raise exceptions.NotFound("The resource could not be found.")


def _zone(binary: str) -> str:
    from pocketstack.common import config

    return config.CONF.compute.default_availability_zone if binary == "nova-compute" \
        else "internal"


def list_hosts(req):
    _before_2_43(req)
    authorize(req, "os_compute_api:os-hosts:list")
    zone = req.query.get("zone")
    # Only the hosts that run a compute service: what `host show` can answer for (nova's
    # show is 404 for a host without a compute node). The all-in-one's conductor and
    # scheduler run on a host of their own ("localhost") that runs no compute, where
    # DevStack's controller also runs one; listing it made a client's list-then-show fail.
    computes = sa.select(ComputeNode.host)
    with db.reader() as s:
        rows = s.execute(sa.select(Service.host, Service.binary)
                         .where(Service.host.in_(computes)).order_by(Service.id)).all()
    hosts = [{"host_name": host, "service": binary.replace("nova-", ""),
              "zone": _zone(binary)} for host, binary in rows]
    if zone:
        hosts = [h for h in hosts if h["zone"] == zone]
    return respond(req, {"hosts": hosts})


def show_host(req):
    _before_2_43(req)
    authorize(req, "os_compute_api:os-hosts:show")
    host = req.params["host_name"]
    with db.reader() as s:
        node = s.scalar(sa.select(ComputeNode).where(ComputeNode.host == host).limit(1))
        if node is None:
            raise exceptions.NotFound(f"Compute host {host} could not be found.")
        per_project = s.execute(
            sa.select(Instance.project_id, sa.func.count(), sa.func.sum(Instance.vcpus),
                      sa.func.sum(Instance.memory_mb))
            .where(Instance.host == host, Instance.deleted.is_(False))
            .group_by(Instance.project_id)).all()

    def resource(project, cpu, memory_mb, disk_gb):
        return {"resource": {"host": host, "project": project, "cpu": int(cpu or 0),
                             "memory_mb": int(memory_mb or 0), "disk_gb": int(disk_gb or 0)}}

    out = [resource("(total)", node.vcpus, node.memory_mb, node.local_gb),
           resource("(used_now)", node.vcpus_used, node.memory_mb_used, node.local_gb_used),
           resource("(used_max)", sum(r[2] or 0 for r in per_project),
                    sum(r[3] or 0 for r in per_project), node.local_gb_used)]
    out += [resource(project, cpus, ram, 0) for project, _, cpus, ram in per_project]
    return respond(req, {"host": out})
