"""Load balancers and listeners: validation as Octavia's API does it, then the state
machine (tree.py) in the request's transaction; the provider (driver.py) applies the
change afterwards. Pools, members and monitors are in pools.py, L7 in l7.py."""
from __future__ import annotations

import ipaddress

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.loadbalancer import certs, driver, quotas, show, tree, vip
from pocketstack.loadbalancer import constants as C
from pocketstack.loadbalancer import models as M
from pocketstack.loadbalancer import validation as V
from pocketstack.loadbalancer.validation import Field

COMMON = {"name": V.NAME, "description": V.DESCRIPTION, "admin_state_up": V.ADMIN_STATE,
          "tags": V.TAGS}
OWNER = {"project_id": Field("str"), "tenant_id": Field("str")}

LB_SCHEMA = {**COMMON, **OWNER, "vip_address": Field("ip"), "vip_port_id": V.UUID,
             "vip_subnet_id": V.UUID, "vip_network_id": V.UUID, "vip_qos_policy_id": V.UUID,
             "provider": Field("str", max_length=64), "flavor_id": V.UUID,
             "availability_zone": Field("str")}
LB_UPDATE = {**COMMON, "vip_qos_policy_id": V.UUID}


def project_of(ctx, data: dict) -> str:
    """The project the object is made for: the caller's, or for an admin the one named."""
    project, tenant = data.pop("project_id", None), data.pop("tenant_id", None)
    project = project or tenant
    if project and project != ctx.project_id and not ctx.is_admin:
        raise exceptions.Forbidden("Policy does not allow this request to be performed.")
    return project or ctx.project_id


# --- load balancers -----------------------------------------------------------------------

def create_load_balancer(ctx, body, extend=None) -> dict:
    """``extend(s, lb) -> view``: more to make in the same transaction (graph.py's
    children), whose failure leaves nothing behind."""
    data = V.parse(body, "loadbalancer", LB_SCHEMA, create=True)
    project_id = project_of(ctx, data)
    tree.authorize(ctx, "loadbalancer", "post", project_id)
    if not any(data.get(k) for k in ("vip_port_id", "vip_network_id", "vip_subnet_id")):
        raise V.Invalid("Validation failure: VIP must contain one of: vip_port_id, "
                        "vip_network_id, vip_subnet_id.")
    provider = data.get("provider") or config.CONF.loadbalancer.default_provider_driver
    if provider not in C.PROVIDERS:
        raise V.Invalid(f"Provider '{provider}' is not enabled.")
    with db.reader() as s:
        _check_flavor(s, data.get("flavor_id"))
        _check_zone(s, data.get("availability_zone"))
        quotas.check(s, project_id, "load_balancer")
    where = vip.resolve(ctx, data)
    if data.get("vip_qos_policy_id"):
        vip.qos_policy_visible(ctx, data["vip_qos_policy_id"])
    lb_id = tree.new_id()
    port = vip.create_port(lb_id, project_id, where) if where["own_port"] else None
    if port is not None:
        where.update(vip_port_id=port["id"], vip_address=port["fixed_ips"][0]["ip_address"])
    try:
        with db.transaction() as s:
            quotas.check(s, project_id, "load_balancer")
            lb = M.LoadBalancer(
                id=lb_id, project_id=project_id, name=data.get("name"),
                description=data.get("description"),
                admin_state_up=data.get("admin_state_up", True), tags=data.get("tags") or [],
                provisioning_status=C.PENDING_CREATE, operating_status=C.OFFLINE,
                vip_address=where["vip_address"], vip_port_id=where["vip_port_id"],
                vip_subnet_id=where["vip_subnet_id"], vip_network_id=where["vip_network_id"],
                vip_qos_policy_id=data.get("vip_qos_policy_id"), provider=provider,
                vip_port_owned=where["own_port"],
                flavor_id=data.get("flavor_id"), availability_zone=data.get("availability_zone"))
            s.add(lb)
            s.add(M.Amphora(id=tree.new_id(), load_balancer_id=lb_id, status="ALLOCATED",
                            role="STANDALONE", ha_ip=where["vip_address"],
                            ha_port_id=where["vip_port_id"], lb_network_ip=None))
            s.flush()
            out = {"loadbalancer": extend(s, lb) if extend else show.view(s, lb)}
    except BaseException:
        if port is not None:
            vip.delete_port(port["id"])
        raise
    driver.notify()
    return out


def _check_flavor(s, flavor_id) -> None:
    if flavor_id is None:
        return
    flavor = s.get(M.Flavor, flavor_id)
    if flavor is None:
        raise V.validation_failure("Invalid flavor_id.")
    if not flavor.enabled:
        raise V.Invalid(f"The selected flavor is not allowed in this deployment: "
                        f"{flavor_id}")


def _check_zone(s, zone) -> None:
    if zone is None:
        return
    row = s.get(M.AvailabilityZone, zone)
    if row is None:
        raise V.validation_failure("Invalid availability zone.")
    if not row.enabled:
        raise V.Invalid(f"The selected availability_zone is not allowed in this "
                        f"deployment: {zone}")


def _apply(obj, data: dict) -> None:
    for key, value in data.items():
        setattr(obj, key, value if key != "tags" else (value or []))
    obj.updated_at = utcnow()


def update_load_balancer(ctx, lb_id: str, body) -> dict:
    data = V.parse(body, "loadbalancer", LB_UPDATE, create=False)
    if data.get("vip_qos_policy_id"):
        vip.qos_policy_visible(ctx, data["vip_qos_policy_id"])
    with db.transaction() as s:
        tree.get(s, M.LoadBalancer, lb_id, ctx, ("loadbalancer", "put"))
        lb = tree.take(s, lb_id)
        _apply(lb, data)
        out = {"loadbalancer": show.view(s, lb)}
    driver.notify()
    return out


def delete_load_balancer(ctx, lb_id: str, cascade: bool) -> None:
    with db.transaction() as s:
        tree.get(s, M.LoadBalancer, lb_id, ctx, ("loadbalancer", "delete"))
        children = tree.rows(s, M.Listener, lb_id) + tree.rows(s, M.Pool, lb_id)
        if children and not cascade:
            raise V.validation_failure(f"Cannot delete Load Balancer {lb_id} - it has "
                                       f"children")
        lb = tree.take(s, lb_id, deleting=True)
        for model in tree.CHILDREN:
            for obj in tree.rows(s, model, lb.id):
                obj.provisioning_status = C.PENDING_DELETE
    driver.notify()


def failover_load_balancer(ctx, lb_id: str) -> None:
    with db.transaction() as s:
        tree.get(s, M.LoadBalancer, lb_id, ctx, ("loadbalancer", "put_failover"))
        lb = s.scalars(sa.select(M.LoadBalancer).where(M.LoadBalancer.id == lb_id)
                       .with_for_update()).one()
        # Octavia fails over an ERROR load balancer too: that is how one repairs it.
        if lb.provisioning_status not in (C.ACTIVE, C.ERROR):
            raise exceptions.Conflict(f"Invalid state {lb.provisioning_status} of "
                                      f"loadbalancer resource {lb_id}")
        lb.provisioning_status, lb.updated_at = C.PENDING_UPDATE, utcnow()
    driver.notify()


# --- listeners ----------------------------------------------------------------------------

TIMEOUT = Field("int", minimum=0, maximum=C.MAX_TIMEOUT)
LISTENER_FIELDS = {**COMMON, "connection_limit": Field("int", minimum=-1),
                   "default_pool_id": V.UUID, "default_tls_container_ref": Field("str"),
                   "sni_container_refs": Field("strlist"), "insert_headers": Field("dict"),
                   "timeout_client_data": TIMEOUT, "timeout_member_connect": TIMEOUT,
                   "timeout_member_data": TIMEOUT, "timeout_tcp_inspect": TIMEOUT,
                   "allowed_cidrs": Field("cidrlist"),
                   "client_ca_tls_container_ref": Field("str"),
                   "client_crl_container_ref": Field("str"),
                   "client_authentication": Field("enum", choices=C.CLIENT_AUTH_MODES)}
LISTENER_SCHEMA = {**LISTENER_FIELDS, **OWNER,
                   "loadbalancer_id": Field("uuid", mandatory=True),
                   "protocol": Field("enum", mandatory=True, choices=C.LISTENER_PROTOCOLS),
                   "protocol_port": Field("int", mandatory=True, minimum=1, maximum=65535)}


def check_listener(s, lb: M.LoadBalancer, protocol: str, data: dict,
                   current: M.Listener | None = None) -> None:
    """Octavia's listener checks that depend on the protocol (create and update)."""
    if protocol == C.SCTP:
        raise V.Invalid(f"The selected protocol is not allowed in this deployment: "
                        f"{protocol}")
    given = [data["default_tls_container_ref"]] if data.get("default_tls_container_ref") \
        else []
    given += list(data.get("sni_container_refs") or [])
    if current is None and data.get("client_ca_tls_container_ref") and not given:
        raise V.validation_failure("An SNI or default certificate container reference must "
                                   "be provided with a client CA container reference.")
    if protocol == C.TERMINATED_HTTPS:
        kept_default = current is not None and "default_tls_container_ref" not in data \
            and current.default_tls_container_ref
        kept_sni = current is not None and "sni_container_refs" not in data \
            and current.sni_container_refs
        if not (given or kept_default or kept_sni):
            raise V.validation_failure("An SNI or default certificate container reference "
                                       "must be provided for TERMINATED_HTTPS listeners.")
    elif given:
        raise V.validation_failure("Certificate container references are only allowed on "
                                   "TERMINATED_HTTPS protocol listeners.")
    check_client_auth(data, current)
    headers = data.get("insert_headers") or {}
    if headers:
        if protocol not in C.HEADER_PROTOCOLS:
            raise V.validation_failure(f"The following headers are not supported for "
                                       f"{protocol} listeners: {', '.join(headers)}")
        bad = [h for h in headers if h not in C.HTTP_HEADERS + (
            C.SSL_HEADERS if protocol == C.TERMINATED_HTTPS else ())]
        if bad:
            raise V.Invalid(f"{', '.join(bad)} is not a valid option for insert_headers")
        for name, value in headers.items():
            if not isinstance(value, str) or value.lower() not in ("true", "false"):
                raise V.validation_failure(f"Header {name} value must be true or false.")
    if protocol in (C.UDP, C.PROMETHEUS) and data.get("timeout_tcp_inspect"):
        raise V.validation_failure(f"timeout_tcp_inspect is not supported for {protocol} "
                                   f"listeners.")
    cidrs = data.get("allowed_cidrs") or []
    if cidrs and lb.vip_address:
        version = ipaddress.ip_address(lb.vip_address).version
        for cidr in cidrs:
            if ipaddress.ip_network(cidr, strict=False).version != version:
                raise V.validation_failure(f"CIDR {cidr} IP version incompatible with all "
                                           f"VIPs ['{lb.vip_address}'] IP version.")
    pool_id = data.get("default_pool_id")
    if pool_id:
        pool = s.get(M.Pool, pool_id)
        if pool is None or pool.load_balancer_id != lb.id:
            raise tree.not_found(M.Pool, pool_id)
        check_protocols(protocol, pool.protocol)


def _kept(data: dict, current, key: str):
    """The value a key has after the request: the one given, else the one stored."""
    return data[key] if key in data else getattr(current, key, None)


def check_client_auth(data: dict, current: M.Listener | None = None) -> None:
    """Octavia's client authentication checks: a mode other than NONE and a CRL each
    need a client CA (given now or kept)."""
    ca = _kept(data, current, "client_ca_tls_container_ref")
    mode = data.get("client_authentication")
    if mode not in (None, C.CLIENT_AUTH_NONE) and not (
            ca or (current is not None and current.client_ca_tls_container_ref)):
        raise V.validation_failure(f"Client authentication setting {mode} requires a "
                                   f"client CA container reference.")
    if _kept(data, current, "client_crl_container_ref") and not ca:
        raise V.validation_failure("A client authentication CA reference is required to "
                                   "specify a client authentication revocation list.")


def check_certificates(ctx, protocol: str, data: dict,
                       current: M.Listener | None = None) -> None:
    """The certificate refs a TERMINATED_HTTPS listener is given, and its client CA
    and CRL, read from the key manager for the user (calls to another service: outside
    any transaction)."""
    if protocol != C.TERMINATED_HTTPS:
        return
    refs = [data["default_tls_container_ref"]] if data.get("default_tls_container_ref") \
        else []
    refs += list(data.get("sni_container_refs") or [])
    if refs:
        certs.check(ctx, list(dict.fromkeys(refs)))
    if "client_ca_tls_container_ref" in data or "client_crl_container_ref" in data:
        ca = _kept(data, current, "client_ca_tls_container_ref")
        if ca:
            certs.check_ca_and_crl(ctx, ca, _kept(data, current, "client_crl_container_ref"))


def check_protocols(listener_protocol: str, pool_protocol: str) -> None:
    if pool_protocol not in C.LISTENER_POOL_PROTOCOLS[listener_protocol]:
        raise V.validation_failure(f"The pool protocol '{pool_protocol}' is invalid while "
                                   f"the listener protocol is '{listener_protocol}'.")


def create_listener(ctx, body) -> dict:
    data = V.parse(body, "listener", LISTENER_SCHEMA, create=True)
    project_of(ctx, data)
    lb_id = data.pop("loadbalancer_id")
    protocol = data["protocol"]
    with db.reader() as s:  # the certificates are read outside the transaction below
        check_listener(s, tree.get(s, M.LoadBalancer, lb_id, ctx, ("listener", "post")),
                       protocol, data)
    check_certificates(ctx, protocol, data)
    with db.transaction() as s:
        lb = tree.get(s, M.LoadBalancer, lb_id, ctx, ("listener", "post"))
        check_listener(s, lb, protocol, data)
        l4 = C.L4_PROTOCOL[protocol]
        if tree.rows(s, M.Listener, lb_id, protocol_port=data["protocol_port"],
                     l4_protocol=l4):
            raise exceptions.Conflict(
                f"Another Listener on this Load Balancer is already using protocol {l4} "
                f"and protocol_port {data['protocol_port']}")
        quotas.check(s, lb.project_id, "listener")
        tree.take(s, lb_id)
        listener = new_listener(lb, data)
        s.add(listener)
        s.flush()
        out = {"listener": show.view(s, listener)}
    driver.notify()
    return out


def new_listener(lb: M.LoadBalancer, data: dict) -> M.Listener:
    """A listener row (PENDING_CREATE) with Octavia's default timeouts."""
    protocol = data["protocol"]
    http_like = protocol != C.UDP
    limit = data.get("connection_limit")
    return M.Listener(
        id=tree.new_id(), project_id=lb.project_id, load_balancer_id=lb.id,
        name=data.get("name"), description=data.get("description"),
        admin_state_up=data.get("admin_state_up", True), tags=data.get("tags") or [],
        provisioning_status=C.PENDING_CREATE, operating_status=C.OFFLINE,
        protocol=protocol, l4_protocol=C.L4_PROTOCOL[protocol],
        protocol_port=data["protocol_port"], connection_limit=-1 if limit is None else limit,
        default_pool_id=data.get("default_pool_id"),
        timeout_client_data=_timeout(data, "timeout_client_data", C.DEFAULT_TIMEOUT,
                                     http_like),
        timeout_member_connect=_timeout(data, "timeout_member_connect", 5000, http_like),
        timeout_member_data=_timeout(data, "timeout_member_data", C.DEFAULT_TIMEOUT,
                                     http_like),
        timeout_tcp_inspect=_timeout(data, "timeout_tcp_inspect", C.DEFAULT_TCP_INSPECT,
                                     http_like),
        insert_headers=data.get("insert_headers") or {},
        allowed_cidrs=data.get("allowed_cidrs") or None,
        default_tls_container_ref=data.get("default_tls_container_ref"),
        sni_container_refs=list(dict.fromkeys(data.get("sni_container_refs") or [])),
        client_ca_tls_container_ref=data.get("client_ca_tls_container_ref"),
        client_authentication=data.get("client_authentication") or C.CLIENT_AUTH_NONE,
        client_crl_container_ref=data.get("client_crl_container_ref"))


def _timeout(data: dict, key: str, default: int, applies: bool):
    value = data.get(key)
    return value if value is not None else (default if applies else None)


LISTENER_UPDATE = dict(LISTENER_FIELDS)


def update_listener(ctx, listener_id: str, body) -> dict:
    data = V.parse(body, "listener", LISTENER_UPDATE, create=False)
    with db.reader() as s:
        listener = tree.get(s, M.Listener, listener_id, ctx, ("listener", "put"))
        check_listener(s, s.get(M.LoadBalancer, listener.load_balancer_id),
                       listener.protocol, data, listener)
        protocol = listener.protocol
        s.expunge(listener)
    check_certificates(ctx, protocol, data, listener)
    with db.transaction() as s:
        listener = tree.get(s, M.Listener, listener_id, ctx, ("listener", "put"))
        lb = s.get(M.LoadBalancer, listener.load_balancer_id)
        check_listener(s, lb, listener.protocol, data, listener)
        if "connection_limit" in data and data["connection_limit"] is None:
            data["connection_limit"] = -1
        tree.take(s, lb.id)
        tree.mark(listener)
        if "sni_container_refs" in data:
            data["sni_container_refs"] = list(dict.fromkeys(data["sni_container_refs"] or []))
        if "client_authentication" in data and data["client_authentication"] is None:
            data["client_authentication"] = C.CLIENT_AUTH_NONE
        _apply(listener, data)
        out = {"listener": show.view(s, listener)}
    driver.notify()
    return out


def delete_listener(ctx, listener_id: str) -> None:
    with db.transaction() as s:
        listener = tree.get(s, M.Listener, listener_id, ctx, ("listener", "delete"))
        tree.take(s, listener.load_balancer_id)
        listener.provisioning_status = C.PENDING_DELETE
        for policy in tree.rows(s, M.L7Policy, listener.load_balancer_id,
                                listener_id=listener.id):
            policy.provisioning_status = C.PENDING_DELETE
            for rule in tree.rows(s, M.L7Rule, listener.load_balancer_id,
                                  l7policy_id=policy.id):
                rule.provisioning_status = C.PENDING_DELETE
    driver.notify()
