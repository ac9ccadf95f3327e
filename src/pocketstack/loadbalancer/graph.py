"""The fully populated load balancer: one POST with its listeners (and their default
pools and L7 policies with rules and redirect pools) and pools (with members and a
monitor), all made PENDING_CREATE in one transaction, as Octavia's graph create.
A pool given by name alone refers to one of the body's top-level pools."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.loadbalancer import api, l7, pools, quotas, show, tree
from pocketstack.loadbalancer import constants as C
from pocketstack.loadbalancer import models as M
from pocketstack.loadbalancer import validation as V
from pocketstack.loadbalancer.validation import Field

LIST = Field("list")
DICT = Field("dict")
LISTENER = {k: v for k, v in api.LISTENER_SCHEMA.items() if k != "loadbalancer_id"}
LISTENER.update(default_pool=DICT, l7policies=LIST)
POOL = {k: v for k, v in pools.POOL_SCHEMA.items()
        if k not in ("loadbalancer_id", "listener_id")}
POOL.update(members=LIST, healthmonitor=DICT)
MEMBER = dict(pools.MEMBER_SCHEMA)
MONITOR = {k: v for k, v in pools.HM_SCHEMA.items() if k != "pool_id"}
POLICY = {k: v for k, v in l7.POLICY_SCHEMA.items() if k != "listener_id"}
POLICY.update(redirect_pool=DICT, rules=LIST)
RULE = dict(l7.RULE_SCHEMA)
KINDS = ("listener", "pool", "member", "health_monitor", "l7policy", "l7rule")


def is_graph(body) -> bool:
    lb = body.get("loadbalancer") if isinstance(body, dict) else None
    return isinstance(lb, dict) and ("listeners" in lb or "pools" in lb)


def split(body) -> tuple[dict, list, list]:
    """The load balancer's own body, and its listeners and pools."""
    lb = dict(body["loadbalancer"])
    listeners, pool_list = lb.pop("listeners", None) or [], lb.pop("pools", None) or []
    for name, value in (("listeners", listeners), ("pools", pool_list)):
        if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
            raise V.invalid_field(name, value, "Wrong type. Expected '[<class 'dict'>]'")
    return {"loadbalancer": lb}, listeners, pool_list


class _Builder:
    def __init__(self, ctx, s, lb: M.LoadBalancer):
        self.ctx, self.s, self.lb = ctx, s, lb
        self.named: dict[str, M.Pool] = {}

    def pool(self, body: dict) -> M.Pool:
        data = V.parse({"pool": body}, "pool", POOL, create=True)
        for key in ("project_id", "tenant_id"):
            data.pop(key, None)
        pools.check_algorithm(self.lb, data["protocol"], data["lb_algorithm"])
        sp = pools.session_persistence(data.get("session_persistence"), data["protocol"])
        members, monitor = data.pop("members", None) or [], data.pop("healthmonitor", None)
        pool = pools.new_pool(self.lb, data, sp)
        self.s.add(pool)
        seen = set()
        for member in members:
            if not isinstance(member, dict):
                raise V.invalid_field("members", members, "Wrong type.")
            mdata = V.parse({"member": member}, "member", MEMBER, create=True)
            pools.check_member(self.ctx, mdata)
            key = (mdata["address"], mdata["protocol_port"])
            if key in seen:
                raise exceptions.Conflict(f"Another member on this pool is already using ip "
                                          f"{key[0]} on protocol_port {key[1]}")
            seen.add(key)
            self.s.add(pools.new_member(pool, mdata, monitor is not None))
        if monitor is not None:
            hdata = V.parse({"healthmonitor": monitor}, "healthmonitor", MONITOR, create=True)
            pools.check_monitor(hdata["type"], pool.protocol, hdata)
            self.s.add(pools.new_monitor(pool, hdata))
        if data.get("name"):
            self.named[data["name"]] = pool
        return pool

    def reference(self, body: dict) -> M.Pool:
        """A pool named alone is one of the top-level pools; a full one is made here."""
        if set(body) == {"name"}:
            pool = self.named.get(body["name"])
            if pool is None:
                raise V.Invalid(f"Missing details for pool object: {body['name']}")
            return pool
        return self.pool(body)

    def listener(self, body: dict, ports: set) -> None:
        data = V.parse({"listener": body}, "listener", LISTENER, create=True)
        for key in ("project_id", "tenant_id"):
            data.pop(key, None)
        default, policies = data.pop("default_pool", None), data.pop("l7policies", None) or []
        api.check_listener(self.s, self.lb, data["protocol"], data)
        key = (C.L4_PROTOCOL[data["protocol"]], data["protocol_port"])
        if key in ports:
            raise exceptions.Conflict(
                f"Another Listener on this Load Balancer is already using protocol {key[0]} "
                f"and protocol_port {key[1]}")
        ports.add(key)
        if default is not None:
            pool = self.reference(default)
            api.check_protocols(data["protocol"], pool.protocol)
            data["default_pool_id"] = pool.id
        listener = api.new_listener(self.lb, data)
        self.s.add(listener)
        if policies:
            l7.check_listener(listener)
        self.s.flush()
        for policy in policies:
            if not isinstance(policy, dict):
                raise V.invalid_field("l7policies", policies, "Wrong type.")
            pdata = V.parse({"l7policy": policy}, "l7policy", POLICY, create=True)
            rules, target = pdata.pop("rules", None) or [], pdata.pop("redirect_pool", None)
            if target is not None:
                pdata["redirect_pool_id"] = self.reference(target).id
                self.s.flush()
            redirect = l7.normalize(self.s, listener, pdata)
            row = l7.new_policy(listener, pdata, redirect)
            self.s.add(row)
            l7.reorder(self.s, listener.id, row, pdata.get("position"))
            self.s.flush()
            for rule in rules:
                rdata = V.parse({"rule": rule}, "rule", RULE, create=True)
                l7.check_rule(rdata)
                self.s.add(l7.new_rule(row, rdata))


def create(ctx, body) -> dict:
    lb_body, listeners, pool_list = split(body)
    for listener in listeners:  # read from the key manager before the transaction
        refs = [listener.get("default_tls_container_ref")]
        refs += listener.get("sni_container_refs") or [] if isinstance(
            listener.get("sni_container_refs"), list) else []
        client = {key: listener[key] for key in ("client_ca_tls_container_ref",
                                                 "client_crl_container_ref")
                  if isinstance(listener.get(key), str)}
        if listener.get("protocol") == C.TERMINATED_HTTPS and all(
                isinstance(r, str) for r in refs if r):
            api.check_client_auth(client)
            api.check_certificates(ctx, C.TERMINATED_HTTPS, {
                "default_tls_container_ref": refs[0], "sni_container_refs": refs[1:],
                **client})
    for pool in pool_list + [li["default_pool"] for li in listeners
                             if isinstance(li.get("default_pool"), dict)]:
        if isinstance(pool, dict):
            pools.check_tls_refs(ctx, {k: v for k, v in pool.items()
                                       if k in pools.TLS_REFS and isinstance(v, str)})
    return api.create_load_balancer(
        ctx, lb_body, extend=lambda s, lb: build(ctx, s, lb, listeners, pool_list))


def build(ctx, s, lb: M.LoadBalancer, listeners: list, pool_list: list) -> dict:
    """Add the graph under ``lb`` (in the caller's transaction); the full view."""
    builder = _Builder(ctx, s, lb)
    for pool in pool_list:
        builder.pool(pool)
    s.flush()
    ports: set = set()
    for listener in listeners:
        builder.listener(listener, ports)
    s.flush()
    for kind in KINDS:
        quotas.check(s, lb.project_id, kind, adding=0)
    return full_view(s, lb)


def full_view(s, lb: M.LoadBalancer) -> dict:
    """Octavia's LoadBalancerFullResponse: the children as whole objects."""
    def pool_view(pool):
        out = show.view(s, pool)
        out["members"] = [show.view(s, m) for m in tree.rows(s, M.Member, lb.id,
                                                             pool_id=pool.id)]
        hm = tree.rows(s, M.HealthMonitor, lb.id, pool_id=pool.id)
        out["healthmonitor"] = show.view(s, hm[0]) if hm else None
        return out

    out = show.view(s, lb)
    out["pools"] = [pool_view(p) for p in tree.rows(s, M.Pool, lb.id)]
    listeners = []
    for li in tree.rows(s, M.Listener, lb.id):
        view = show.view(s, li)
        view["l7policies"] = []
        for policy in sorted(tree.rows(s, M.L7Policy, lb.id, listener_id=li.id),
                             key=lambda p: p.position):
            pview = show.view(s, policy)
            pview["rules"] = [show.view(s, r) for r in tree.rows(s, M.L7Rule, lb.id,
                                                                 l7policy_id=policy.id)]
            view["l7policies"].append(pview)
        listeners.append(view)
    out["listeners"] = listeners
    return out
