"""Objects read back for the API: one, a filtered list, the status tree, statistics."""
from __future__ import annotations

import urllib.parse

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.loadbalancer import models as M
from pocketstack.loadbalancer import tree, validation, views

# The names in URLs and policies, and each model's key in the response bodies.
NAMES = {M.LoadBalancer: ("loadbalancer", "loadbalancers"), M.Listener: ("listener", "listeners"),
         M.Pool: ("pool", "pools"), M.Member: ("member", "members"),
         M.HealthMonitor: ("healthmonitor", "healthmonitors"),
         M.L7Policy: ("l7policy", "l7policies"), M.L7Rule: ("rule", "rules")}
POLICY_NAME = {M.L7Rule: "l7rule"}


def _ids(s, column, where) -> list[str]:
    return list(s.scalars(sa.select(column).where(where).order_by(column)))


def view(s, obj) -> dict:
    if isinstance(obj, M.LoadBalancer):
        return views.load_balancer(
            obj, _ids(s, M.Listener.id, M.Listener.load_balancer_id == obj.id),
            _ids(s, M.Pool.id, M.Pool.load_balancer_id == obj.id))
    if isinstance(obj, M.Listener):
        return views.listener(obj, _ids(s, M.L7Policy.id, M.L7Policy.listener_id == obj.id))
    if isinstance(obj, M.Pool):
        hm = s.scalar(sa.select(M.HealthMonitor.id).where(M.HealthMonitor.pool_id == obj.id))
        return views.pool(obj, [li.id for li in tree.listeners_of_pool(s, obj.id)],
                          _ids(s, M.Member.id, M.Member.pool_id == obj.id), hm)
    if isinstance(obj, M.Member):
        return views.member(obj)
    if isinstance(obj, M.HealthMonitor):
        return views.health_monitor(obj)
    if isinstance(obj, M.L7Policy):
        return views.l7policy(obj, _ids(s, M.L7Rule.id, M.L7Rule.l7policy_id == obj.id))
    return views.l7rule(obj)


def _fields(query) -> list[str]:
    return [f for value in query.getlist("fields") for f in value.split(",") if f]


def trim(body: dict, query) -> dict:
    fields = _fields(query)
    return {k: v for k, v in body.items() if k in fields} if fields else body


def one(ctx, model, obj_id: str, query, parent: tuple[str, str] | None = None) -> dict:
    """GET of one object; ``parent`` (column, id): it must hang off that parent."""
    with db.reader() as s:
        obj = tree.get(s, model, obj_id)
        if parent is not None and getattr(obj, parent[0]) != parent[1]:
            raise tree.not_found(model, obj_id)
        tree.authorize(ctx, POLICY_NAME.get(model, NAMES[model][0]), "get_one", obj.project_id)
        return {NAMES[model][0]: trim(view(s, obj), query)}


FILTERABLE = {"id", "name", "description", "project_id", "provisioning_status",
              "operating_status", "admin_state_up", "protocol", "protocol_port",
              "lb_algorithm", "address", "weight", "backup", "subnet_id", "type", "action",
              "position", "vip_address", "vip_port_id", "vip_subnet_id", "vip_network_id",
              "provider", "flavor_id", "availability_zone", "loadbalancer_id",
              "default_pool_id", "connection_limit", "compare_type", "key", "value",
              "invert", "listener_id", "redirect_pool_id", "pool_id", "monitor_address",
              "monitor_port", "delay", "timeout", "max_retries", "http_method", "url_path",
              "expected_codes"}
ALIASES = {"loadbalancer_id": "load_balancer_id", "tenant_id": "project_id"}


def _coerce(column, value: str):
    python = column.type.python_type
    if python is bool:
        if value.lower() not in ("true", "false", "1", "0"):
            raise validation.Invalid("One or more arguments are either duplicate or invalid")
        return value.lower() in ("true", "1")
    if python is int:
        try:
            return int(value)
        except ValueError:
            raise validation.Invalid("One or more arguments are either duplicate or "
                                     "invalid") from None
    return value


def many(ctx, model, query, where=None, url: str = "") -> dict:
    """GET of a collection: the caller's project (every project for an admin, or the one
    asked with project_id), filtered by attribute, by tags, paged by limit/marker."""
    singular, plural = NAMES[model]
    tree.authorize(ctx, POLICY_NAME.get(model, singular), "get_all",
                   ctx.project_id)
    stmt = sa.select(model)
    if where is not None:
        stmt = stmt.where(where)
    if not ctx.is_admin:
        stmt = stmt.where(model.project_id == ctx.project_id)
    for key in set(query.keys()) - {"fields", "limit", "marker", "page_reverse", "sort",
                                    "sort_key", "sort_dir", "tags", "tags-any", "not-tags",
                                    "not-tags-any"}:
        name = ALIASES.get(key, key)
        column = getattr(model, name, None)
        if key not in FILTERABLE | set(ALIASES) or column is None:
            continue  # Octavia ignores filters of attributes the object lacks
        stmt = stmt.where(column.in_([_coerce(column, v) for v in query.getlist(key)]))
    stmt = stmt.order_by(model.created_at, model.id)
    limit = query.get("limit")
    with db.reader() as s:
        objs = list(s.scalars(stmt))
        objs = [o for o in objs if _tags_match(o.tags or [], query)]
        marker = query.get("marker")
        if marker:
            ids = [o.id for o in objs]
            if marker not in ids:
                raise validation.Invalid(f"Supplied pagination marker '{marker}' is not valid.")
            objs = objs[ids.index(marker) + 1:]
        links = []
        if limit is not None:
            try:
                size = int(limit)
                if size < 0:
                    raise ValueError
            except ValueError:
                raise validation.Invalid(f"Supplied pagination limit '{limit}' is not "
                                         f"valid.") from None
            if size and len(objs) > size:
                objs = objs[:size]
                kept = [(k, v) for k, v in query.multi_items() if k != "marker"]
                href = urllib.parse.urlencode(kept + [("marker", objs[-1].id)])
                links.append({"rel": "next", "href": f"{url}?{href}"})
        body = [trim(view(s, o), query) for o in objs]
    return {plural: body, f"{plural}_links": links}


def _tags_match(tags: list, query) -> bool:
    def wanted(key):
        return [t for value in query.getlist(key) for t in value.split(",") if t]
    if wanted("tags") and not set(wanted("tags")) <= set(tags):
        return False
    if wanted("tags-any") and not set(wanted("tags-any")) & set(tags):
        return False
    if wanted("not-tags") and set(wanted("not-tags")) <= set(tags):
        return False
    if wanted("not-tags-any") and set(wanted("not-tags-any")) & set(tags):
        return False
    return True


def status_tree(ctx, lb_id: str) -> dict:
    with db.reader() as s:
        lb = tree.get(s, M.LoadBalancer, lb_id, ctx, ("loadbalancer", "get_status"))

        def st(obj, **extra):
            return {"id": obj.id, "name": getattr(obj, "name", None) or "",
                    "provisioning_status": obj.provisioning_status,
                    "operating_status": obj.operating_status, **extra}

        pools = {p.id: p for p in tree.rows(s, M.Pool, lb.id)}
        monitors = {hm.pool_id: hm for hm in tree.rows(s, M.HealthMonitor, lb.id)}

        def pool_status(pool):
            out = st(pool, members=[st(m, address=m.address, protocol_port=m.protocol_port)
                                    for m in tree.rows(s, M.Member, lb.id, pool_id=pool.id)])
            hm = monitors.get(pool.id)
            if hm is not None:
                out["health_monitor"] = st(hm, type=hm.type)
            return out

        listeners = []
        for li in tree.rows(s, M.Listener, lb.id):
            used = [li.default_pool_id] + [p.redirect_pool_id for p in
                                           tree.rows(s, M.L7Policy, lb.id, listener_id=li.id)]
            listeners.append(st(li, pools=[pool_status(pools[i]) for i in dict.fromkeys(used)
                                           if i in pools]))
        return {"statuses": {"loadbalancer": st(lb, listeners=listeners)}}


ZERO_STATS = {"bytes_in": 0, "bytes_out": 0, "active_connections": 0, "total_connections": 0,
              "request_errors": 0}


def stats(ctx, model, obj_id: str, counters) -> dict:
    with db.reader() as s:
        obj = tree.get(s, model, obj_id, ctx, (NAMES[model][0], "get_stats"))
        lb_id = obj.id if model is M.LoadBalancer else obj.load_balancer_id
        listener_ids = ([li.id for li in tree.rows(s, M.Listener, lb_id)]
                        if model is M.LoadBalancer else [obj.id])
    total = dict(ZERO_STATS)
    for listener_id in listener_ids:
        for key, value in (counters(lb_id, listener_id) or {}).items():
            total[key] = total.get(key, 0) + value
    return {"stats": total}


def require_exists(model, obj_id) -> None:
    with db.reader() as s:
        tree.get(s, model, obj_id)

