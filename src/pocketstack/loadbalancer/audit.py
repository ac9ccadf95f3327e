"""`pocketstack audit`'s load balancer checks: objects whose load balancer (or pool, or
policy) is gone, references to pools that are gone, and the haproxy data plane's files
and processes against the load balancers they serve."""
from __future__ import annotations

import os

import sqlalchemy as sa

from pocketstack.common import config
from pocketstack.loadbalancer import constants as C
from pocketstack.loadbalancer import models as M

PARENTS = ((M.Listener, "listener"), (M.Pool, "pool"), (M.Member, "member"),
           (M.HealthMonitor, "health monitor"), (M.L7Policy, "L7 policy"),
           (M.L7Rule, "L7 rule"), (M.Amphora, "amphora"))


def problems(s) -> list[str]:
    out = []
    lbs = {lb_id: status for lb_id, status in s.execute(
        sa.select(M.LoadBalancer.id, M.LoadBalancer.provisioning_status))}
    pools = set(s.scalars(sa.select(M.Pool.id)))
    policies = set(s.scalars(sa.select(M.L7Policy.id)))
    for model, label in PARENTS:
        for obj_id, lb_id in s.execute(sa.select(model.id, model.load_balancer_id)):
            if lb_id not in lbs:
                out.append(f"{label} {obj_id} belongs to load balancer {lb_id}, which is gone")
    for member_id, pool_id in s.execute(sa.select(M.Member.id, M.Member.pool_id)):
        if pool_id not in pools:
            out.append(f"member {member_id} belongs to pool {pool_id}, which is gone")
    for hm_id, pool_id in s.execute(sa.select(M.HealthMonitor.id, M.HealthMonitor.pool_id)):
        if pool_id not in pools:
            out.append(f"health monitor {hm_id} watches pool {pool_id}, which is gone")
    for rule_id, policy_id in s.execute(sa.select(M.L7Rule.id, M.L7Rule.l7policy_id)):
        if policy_id not in policies:
            out.append(f"L7 rule {rule_id} belongs to L7 policy {policy_id}, which is gone")
    for listener_id, pool_id in s.execute(sa.select(M.Listener.id, M.Listener.default_pool_id)
                                          .where(M.Listener.default_pool_id.is_not(None))):
        if pool_id not in pools:
            out.append(f"listener {listener_id} sends to pool {pool_id}, which is gone")
    return out + _data_plane(lbs)


def _data_plane(lbs: dict[str, str]) -> list[str]:
    """The haproxy data plane against the load balancers, this cloud's only: directories
    (<data dir>/loadbalancer/<id>) of one that is gone, an ACTIVE one whose HAProxy is not
    running, and namespaces (named with this cloud's id) or HAProxy processes (running a
    configuration in this data dir) that no load balancer owns."""
    from pocketstack.loadbalancer import dataplane  # noqa: PLC0415 (only with its files)

    root = os.path.join(config.data_dir(), "loadbalancer")
    out = []
    if os.path.isdir(root):
        plane = dataplane.HAProxyPlane(config.data_dir())
        for lb_id in sorted(os.listdir(root)):
            if lb_id not in lbs:
                out.append(f"HAProxy files of load balancer {lb_id}, which is gone, are in "
                           f"{root}")
            elif lbs[lb_id] == C.ACTIVE and plane.built(lb_id) and not plane.running(lb_id):
                out.append(f"load balancer {lb_id} is ACTIVE but its HAProxy is not running")
    prefix = dataplane.namespace_prefix()
    try:
        names = sorted(os.listdir("/run/netns"))
    except OSError:
        names = []
    for ns in names:
        if ns.startswith(prefix) and ns[len(prefix):] not in lbs:
            out.append(f"namespace {ns} belongs to load balancer {ns[len(prefix):]}, which "
                       f"is gone")
    for pid, lb_id, name in _haproxies(root + os.sep):
        if lb_id not in lbs:
            out.append(f"{name} process {pid} serves load balancer {lb_id}, which is gone")
    return out


def _haproxies(root: str) -> list[tuple[int, str, str]]:
    """(pid, load balancer id, HAProxy or UDP balancer) of the HAProxies and UDP
    balancers running a configuration under ``root``."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if not args:
            continue
        if os.path.basename(args[0]) == "haproxy":
            name = "HAProxy"
        elif any(os.path.basename(arg) == "udp_balancer.py" for arg in args):
            name = "UDP balancer"
        else:
            continue
        for arg in args:
            if arg.startswith(root):
                out.append((int(pid), arg[len(root):].split(os.sep)[0], name))
                break
    return out
