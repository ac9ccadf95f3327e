"""Objects read back for the API: one, a filtered list, the status tree, statistics."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import config, db
from pocketstack.loadbalancer import listing, tree, validation, views
from pocketstack.loadbalancer import models as M

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


# Columns no API shows: never sorted on (nor filtered, above).
HIDDEN = {"claimed_by", "claimed_at", "vip_port_owned", "l4_protocol"}


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


def _sort_column(model, key: str):
    """The column of an attribute the API shows (by its API name), to sort on."""
    name = ALIASES.get(key, key)
    column = getattr(model, name, None)
    table = model.__table__.c
    if name in HIDDEN or name not in table or isinstance(table[name].type, sa.JSON):
        raise validation.Invalid(f"Supplied sort key '{key}' is not valid.")
    return column


def _max_limit() -> int | None:
    text = str(config.CONF.loadbalancer.pagination_max_limit)
    try:
        return None if text == "infinite" or int(text) < 0 else int(text)
    except ValueError:
        return None


def many(ctx, model, query, where=None, url: str = "") -> dict:
    """GET of a collection as Octavia lists: the caller's project (every project for an
    admin, or the one asked with project_id), filtered by attribute and by tags, sorted
    (sort=key:dir,... or sort_key/sort_dir, then created_at and id), paged by
    limit/marker/page_reverse with next and previous links; all in SQL."""
    singular, plural = NAMES[model]
    tree.authorize(ctx, POLICY_NAME.get(model, singular), "get_all",
                   ctx.project_id)
    visible = [] if where is None else [where]
    if not ctx.is_admin:
        visible.append(model.project_id == ctx.project_id)
    clauses = list(visible)
    for key in set(query.keys()) - set(listing.PAGING_PARAMS) - set(listing.TAG_PARAMS):
        name = ALIASES.get(key, key)
        column = getattr(model, name, None)
        if key not in FILTERABLE | set(ALIASES) or column is None:
            continue  # Octavia ignores filters of attributes the object lacks
        clauses.append(column.in_([_coerce(column, v) for v in query.getlist(key)]))
    clauses += listing.tag_clauses(model.tags, query)
    limit = listing.parse_limit(query, _max_limit())
    reverse = (query.getlist("page_reverse") or [""])[-1].lower() == "true"
    sorts = [(_sort_column(model, key), (direction == "asc") != reverse)
             for key, direction in listing.sort_keys(query)]
    order = listing.terms(sorts)
    marker = (query.getlist("marker") or [None])[-1]
    stmt = sa.select(model).where(*clauses)
    with db.reader() as s:
        if marker:
            marker_row = s.scalar(sa.select(model).where(model.id == marker, *visible))
            if marker_row is None:
                raise validation.Invalid(f"Supplied pagination marker '{marker}' is not "
                                         f"valid.")
            stmt = stmt.where(listing.after(order, marker_row))
        stmt = stmt.order_by(*listing.order_by(order))
        if limit:
            stmt = stmt.limit(limit + 1)
        objs = list(s.scalars(stmt))
        has_more = bool(limit) and len(objs) > limit
        objs = objs[:limit] if limit else objs
        if reverse:
            objs.reverse()
        links = listing.links(objs, url=url, query=query, limit=limit, has_more=has_more,
                              reverse=reverse, marker=marker)
        body = [trim(view(s, o), query) for o in objs]
    return {plural: body, f"{plural}_links": links}


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

