"""Octavia's state machine over one load balancer's tree.

A change to anything under a load balancer first takes the load balancer: only an
ACTIVE one may change (an ERROR one may still be deleted); it turns PENDING_UPDATE, the
object PENDING_CREATE/UPDATE/DELETE, the listeners and pool it hangs off PENDING_UPDATE,
all in the request's transaction. The provider (driver.py) applies the change later and
turns them ACTIVE (or ERROR), removing what was PENDING_DELETE."""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import exceptions, policy
from pocketstack.common.timeutils import utcnow
from pocketstack.loadbalancer import constants as C
from pocketstack.loadbalancer import models as M
from pocketstack.loadbalancer.policies import PREFIX

CHILDREN = (M.Listener, M.Pool, M.Member, M.HealthMonitor, M.L7Policy, M.L7Rule)
RESOURCE = {M.LoadBalancer: "Load Balancer", M.Listener: "Listener", M.Pool: "Pool",
            M.Member: "Member", M.HealthMonitor: "Health Monitor", M.L7Policy: "L7 Policy",
            M.L7Rule: "L7 Rule"}


def new_id() -> str:
    return str(uuid.uuid4())


def not_found(model, obj_id) -> exceptions.NotFound:
    return exceptions.NotFound(f"{RESOURCE[model]} {obj_id} not found.")


def authorize(ctx, obj: str, action: str, project_id: str | None) -> None:
    policy.authorize(ctx, f"{PREFIX}:{obj}:{action}", {"project_id": project_id})


def get(s, model, obj_id: str, ctx=None, rule: tuple[str, str] | None = None):
    """The object, 404 when absent; with ``rule`` (object, action) the caller's right to
    it is checked (another project's object: 403, as Octavia answers)."""
    obj = s.get(model, obj_id) if isinstance(obj_id, str) else None
    if obj is None:
        raise not_found(model, obj_id)
    if rule is not None:
        authorize(ctx, rule[0], rule[1], obj.project_id)
    return obj


def take(s, lb_id: str, *, deleting: bool = False) -> M.LoadBalancer:
    """Lock the load balancer for a change and mark it PENDING_UPDATE (PENDING_DELETE
    when ``deleting``); 409 in Octavia's words when it is not in a state that allows it."""
    lb = s.scalars(sa.select(M.LoadBalancer).where(M.LoadBalancer.id == lb_id)
                   .with_for_update()).one_or_none()
    if lb is None:
        raise not_found(M.LoadBalancer, lb_id)
    allowed = (C.ACTIVE, C.ERROR) if deleting else (C.ACTIVE,)
    if lb.provisioning_status not in allowed:
        if deleting:
            raise exceptions.Conflict(f"Invalid state {lb.provisioning_status} of "
                                      f"loadbalancer resource {lb_id}")
        raise exceptions.Conflict(f"Load Balancer {lb_id} is immutable and cannot be "
                                  f"updated.")
    lb.provisioning_status = C.PENDING_DELETE if deleting else C.PENDING_UPDATE
    lb.updated_at = utcnow()
    return lb


def mark(*objects, status: str = C.PENDING_UPDATE) -> None:
    now = utcnow()
    for obj in objects:
        if obj is not None and obj.provisioning_status not in (C.PENDING_CREATE,
                                                               C.PENDING_DELETE):
            obj.provisioning_status = status
            obj.updated_at = now


def listeners_of_pool(s, pool_id: str) -> list[M.Listener]:
    """The listeners that send to the pool: by default or through an L7 policy."""
    by_policy = sa.select(M.L7Policy.listener_id).where(M.L7Policy.redirect_pool_id == pool_id)
    return list(s.scalars(sa.select(M.Listener).where(sa.or_(
        M.Listener.default_pool_id == pool_id, M.Listener.id.in_(by_policy)))))


def count(s, model, project_id: str) -> int:
    return s.scalar(sa.select(sa.func.count()).select_from(model)
                    .where(model.project_id == project_id)) or 0


def rows(s, model, lb_id: str, **where) -> list:
    stmt = sa.select(model).where(model.load_balancer_id == lb_id)
    for key, value in where.items():
        stmt = stmt.where(getattr(model, key) == value)
    return list(s.scalars(stmt.order_by(model.created_at, model.id)))


# --- what the provider sets once a change is applied ------------------------------------

def settle(s, lb: M.LoadBalancer, health: dict[str, str] | None = None) -> list[str]:
    """Finish the pending change of ``lb``'s tree: PENDING_DELETE rows go, the others
    turn ACTIVE; then every operating status is worked out. ``health``: member id ->
    ONLINE/ERROR as a real data plane found it (None: the simulated provider, which
    reports members ONLINE under a monitor and NO_MONITOR without one, as Octavia does
    before its first check). Returns the ids removed."""
    removed = []
    now = utcnow()
    for model in reversed(CHILDREN):  # rules before policies, members before pools
        for obj in rows(s, model, lb.id):
            if obj.provisioning_status == C.PENDING_DELETE:
                removed.append(obj.id)
                s.delete(obj)
            elif obj.provisioning_status in C.PENDING:
                obj.provisioning_status = C.ACTIVE
                obj.updated_at = now
    s.flush()
    lb.provisioning_status = C.ACTIVE
    operate(s, lb, health)
    return removed


def operate(s, lb: M.LoadBalancer, health: dict[str, str] | None) -> None:
    """Operating statuses bottom up: members from the monitor (or the data plane), pools
    from their members, listeners from their pools, the load balancer from its listeners."""
    monitors = {hm.pool_id: hm for hm in rows(s, M.HealthMonitor, lb.id)}
    pool_status = {}
    for pool in rows(s, M.Pool, lb.id):
        hm = monitors.get(pool.id)
        monitored = hm is not None and hm.admin_state_up
        if hm is not None:
            hm.operating_status = C.ONLINE if hm.admin_state_up else C.OFFLINE
        states = []
        for member in rows(s, M.Member, lb.id, pool_id=pool.id):
            if not member.admin_state_up:
                member.operating_status = C.OFFLINE
            elif health is not None and member.id in health and monitored:
                member.operating_status = health[member.id]
            else:
                member.operating_status = C.ONLINE if monitored else C.NO_MONITOR
            states.append(member.operating_status)
        if not pool.admin_state_up:
            pool.operating_status = C.OFFLINE
        elif states and all(st == C.ERROR for st in states if st != C.OFFLINE) \
                and any(st == C.ERROR for st in states):
            pool.operating_status = C.ERROR
        elif C.ERROR in states:
            pool.operating_status = C.DEGRADED
        else:
            pool.operating_status = C.ONLINE
        pool_status[pool.id] = pool.operating_status
    listener_states = []
    for listener in rows(s, M.Listener, lb.id):
        for policy_ in rows(s, M.L7Policy, lb.id, listener_id=listener.id):
            policy_.operating_status = C.ONLINE if policy_.admin_state_up else C.OFFLINE
            for rule in rows(s, M.L7Rule, lb.id, l7policy_id=policy_.id):
                rule.operating_status = C.ONLINE if rule.admin_state_up else C.OFFLINE
        pool_state = pool_status.get(listener.default_pool_id, C.ONLINE)
        if not listener.admin_state_up:
            listener.operating_status = C.OFFLINE
        elif pool_state in (C.ERROR, C.DEGRADED):
            listener.operating_status = C.DEGRADED
        else:
            listener.operating_status = C.ONLINE
        listener_states.append(listener.operating_status)
    if not lb.admin_state_up:
        lb.operating_status = C.OFFLINE
    elif C.DEGRADED in listener_states or C.ERROR in pool_status.values():
        lb.operating_status = C.DEGRADED
    else:
        lb.operating_status = C.ONLINE
