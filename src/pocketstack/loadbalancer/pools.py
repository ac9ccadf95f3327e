"""Pools, their members (one by one and the batch update) and health monitors."""
from __future__ import annotations

import ipaddress
import re

from pocketstack.common import db, exceptions
from pocketstack.loadbalancer import api, certs, driver, quotas, show, tree, vip
from pocketstack.loadbalancer import constants as C
from pocketstack.loadbalancer import models as M
from pocketstack.loadbalancer import validation as V
from pocketstack.loadbalancer.validation import Field

POOL_FIELDS = {**api.COMMON, "lb_algorithm": Field("enum", choices=C.LB_ALGORITHMS,
                                                   nullable=False),
               "session_persistence": Field("dict"), "tls_enabled": Field("bool"),
               "tls_container_ref": Field("str"), "ca_tls_container_ref": Field("str"),
               "crl_container_ref": Field("str")}
TLS_REFS = ("tls_container_ref", "ca_tls_container_ref", "crl_container_ref")
POOL_SCHEMA = {**POOL_FIELDS, **api.OWNER, "loadbalancer_id": V.UUID, "listener_id": V.UUID,
               "protocol": Field("enum", mandatory=True, choices=C.POOL_PROTOCOLS),
               "lb_algorithm": Field("enum", mandatory=True, choices=C.LB_ALGORITHMS)}
SP_SCHEMA = {"type": Field("enum", mandatory=True, choices=C.SESSION_PERSISTENCE_TYPES),
             "cookie_name": Field("str"), "persistence_timeout": Field("int", minimum=0),
             "persistence_granularity": Field("ip")}
COOKIE = re.compile(r"^[\x21\x23-\x2b\x2d-\x3a\x3c\x3e-\x5a\x5c\x5e-\x7e]+$")


def session_persistence(value, protocol: str):
    if value is None:
        return None
    sp = V.parse({"session_persistence": value}, "session_persistence", SP_SCHEMA,
                 create=True)
    if protocol in (C.UDP, C.SCTP):
        if sp["type"] != "SOURCE_IP":
            raise V.validation_failure(f"Session persistence of type {sp['type']} is not "
                                       f"supported for UDP/SCTP protocol pools.")
        if sp.get("cookie_name"):
            raise V.validation_failure("Cookie names are not supported for UDP/SCTP pools.")
    elif sp.get("persistence_timeout") is not None or sp.get("persistence_granularity"):
        raise V.validation_failure("persistence_timeout and persistence_granularity is only "
                                   "for UDP and SCTP protocol pools.")
    if sp["type"] == "APP_COOKIE" and not sp.get("cookie_name"):
        raise V.validation_failure("A cookie_name must be provided with APP_COOKIE session "
                                   "persistence.")
    if sp["type"] != "APP_COOKIE" and sp.get("cookie_name"):
        raise V.validation_failure("Field cookie_name can only be specified with "
                                   "APP_COOKIE session persistence type.")
    if sp.get("cookie_name") and not COOKIE.fullmatch(sp["cookie_name"]):
        raise V.Invalid("Invalid characters in cookie_name")
    return {"type": sp["type"], "cookie_name": sp.get("cookie_name"),
            "persistence_timeout": sp.get("persistence_timeout"),
            "persistence_granularity": sp.get("persistence_granularity")}


def check_tls_refs(ctx, data: dict, current: M.Pool | None = None) -> None:
    """Octavia's checks of a pool's TLS refs to its members: a CRL needs a CA (given or
    kept; a kept CRL keeps its CA), the client certificate is a usable certificate
    container, the CA and CRL readable PEM and the CRL signed by the CA; all read for
    the user (calls to another service: outside any transaction)."""
    crl = data["crl_container_ref"] if "crl_container_ref" in data else \
        getattr(current, "crl_container_ref", None)
    stored_ca = getattr(current, "ca_tls_container_ref", None)
    if current is None:
        if crl and not data.get("ca_tls_container_ref"):
            raise V.validation_failure("A CA certificate reference is required to specify a "
                                       "revocation list.")
        ca = data.get("ca_tls_container_ref")
    elif "ca_tls_container_ref" in data:
        if not data["ca_tls_container_ref"] and stored_ca and crl:
            raise V.validation_failure("A CA reference cannot be removed when a certificate "
                                       "revocation list is present.")
        if not data["ca_tls_container_ref"] and not stored_ca and crl:
            raise V.validation_failure("A CA reference is required to specify a "
                                       "certificate revocation list.")
        ca = data["ca_tls_container_ref"]
    elif stored_ca:
        ca = stored_ca
    elif crl:
        raise V.validation_failure("A CA reference is required to specify a certificate "
                                   "revocation list.")
    else:
        ca = None
    if data.get("tls_container_ref"):
        certs.check(ctx, [data["tls_container_ref"]])
    if ca and ("ca_tls_container_ref" in data or "crl_container_ref" in data):
        certs.check_ca_and_crl(ctx, ca, crl)


class NotImplementedByProvider(exceptions.PocketstackError):
    code = 501


def create_pool(ctx, body) -> dict:
    data = V.parse(body, "pool", POOL_SCHEMA, create=True)
    api.project_of(ctx, data)
    lb_id, listener_id = data.get("loadbalancer_id"), data.get("listener_id")
    if not lb_id and not listener_id:
        raise V.validation_failure("Must provide at least one of: loadbalancer_id, "
                                   "listener_id")
    check_tls_refs(ctx, data)
    with db.transaction() as s:
        listener = None
        if listener_id:
            listener = tree.get(s, M.Listener, listener_id, ctx, ("pool", "post"))
            if lb_id and lb_id != listener.load_balancer_id:
                raise V.validation_failure("The listener's load balancer and the "
                                           "load balancer given differ.")
            lb_id = listener.load_balancer_id
            if listener.default_pool_id:
                raise exceptions.Conflict("This listener already has a default pool")
            api.check_protocols(listener.protocol, data["protocol"])
        lb = tree.get(s, M.LoadBalancer, lb_id, ctx, ("pool", "post"))
        check_algorithm(lb, data["protocol"], data["lb_algorithm"])
        sp = session_persistence(data.get("session_persistence"), data["protocol"])
        quotas.check(s, lb.project_id, "pool")
        tree.take(s, lb_id)
        pool = new_pool(lb, data, sp)
        s.add(pool)
        if listener is not None:
            listener.default_pool_id = pool.id
            tree.mark(listener)
        s.flush()
        out = {"pool": show.view(s, pool)}
    driver.notify()
    return out


def new_pool(lb: M.LoadBalancer, data: dict, sp: dict | None) -> M.Pool:
    return M.Pool(id=tree.new_id(), project_id=lb.project_id, load_balancer_id=lb.id,
                  name=data.get("name"), description=data.get("description"),
                  admin_state_up=data.get("admin_state_up", True),
                  tags=data.get("tags") or [], provisioning_status=C.PENDING_CREATE,
                  operating_status=C.OFFLINE, protocol=data["protocol"],
                  lb_algorithm=data["lb_algorithm"], session_persistence=sp,
                  tls_enabled=bool(data.get("tls_enabled")),
                  **{key: data.get(key) for key in TLS_REFS})


def check_algorithm(lb: M.LoadBalancer, protocol: str, algorithm: str | None) -> None:
    if algorithm == C.SOURCE_IP_PORT and protocol not in (C.UDP, C.SCTP):
        raise NotImplementedByProvider(
            f"Provider '{lb.provider}' does not support a requested option: Amphora "
            f"provider does not support SOURCE_IP_PORT algorithm.")


def update_pool(ctx, pool_id: str, body) -> dict:
    data = V.parse(body, "pool", POOL_FIELDS, create=False)
    if any(key in data for key in TLS_REFS):
        with db.reader() as s:
            current = tree.get(s, M.Pool, pool_id, ctx, ("pool", "put"))
            s.expunge(current)
        check_tls_refs(ctx, data, current)
    if "tls_enabled" in data and data["tls_enabled"] is None:
        data["tls_enabled"] = False
    with db.transaction() as s:
        pool = tree.get(s, M.Pool, pool_id, ctx, ("pool", "put"))
        lb = s.get(M.LoadBalancer, pool.load_balancer_id)
        check_algorithm(lb, pool.protocol, data.get("lb_algorithm"))
        if "session_persistence" in data:
            data["session_persistence"] = session_persistence(data["session_persistence"],
                                                               pool.protocol)
        tree.take(s, lb.id)
        tree.mark(pool, *tree.listeners_of_pool(s, pool.id))
        api._apply(pool, data)
        out = {"pool": show.view(s, pool)}
    driver.notify()
    return out


def delete_pool(ctx, pool_id: str) -> None:
    with db.transaction() as s:
        pool = tree.get(s, M.Pool, pool_id, ctx, ("pool", "delete"))
        for policy in tree.rows(s, M.L7Policy, pool.load_balancer_id,
                                redirect_pool_id=pool.id):
            raise exceptions.Conflict(f"Pool {pool.id} is in use by L7 policy {policy.id}")
        tree.take(s, pool.load_balancer_id)
        for listener in tree.rows(s, M.Listener, pool.load_balancer_id,
                                  default_pool_id=pool.id):
            listener.default_pool_id = None
            tree.mark(listener)
        pool.provisioning_status = C.PENDING_DELETE
        for model in (M.Member, M.HealthMonitor):
            for obj in tree.rows(s, model, pool.load_balancer_id, pool_id=pool.id):
                obj.provisioning_status = C.PENDING_DELETE
    driver.notify()


# --- members ------------------------------------------------------------------------------

MEMBER_FIELDS = {"name": V.NAME, "admin_state_up": V.ADMIN_STATE, "tags": V.TAGS,
                 "weight": Field("int", minimum=0, maximum=256), "backup": Field("bool"),
                 "monitor_address": Field("ip"), "monitor_port": V.PORT}
MEMBER_SCHEMA = {**MEMBER_FIELDS, **api.OWNER, "address": Field("ip", mandatory=True),
                 "protocol_port": Field("int", mandatory=True, minimum=1, maximum=65535),
                 "subnet_id": V.UUID, "request_sriov": Field("bool")}
RESERVED = ("169.254.169.254",)  # Octavia's [networking] reserved_ips


def check_member(ctx, data: dict) -> None:
    for key, option in (("address", "member address"),
                        ("monitor_address", "member monitor address")):
        value = data.get(key)
        if value and str(ipaddress.ip_address(value)) in RESERVED:
            raise V.invalid_option(value, option)
    if data.get("request_sriov"):
        raise V.validation_failure("Members with request_sriov are not supported by the "
                                   "amphora provider.")
    data.pop("request_sriov", None)
    if data.get("subnet_id"):
        vip.subnet_visible(ctx, data["subnet_id"])


def new_member(pool: M.Pool, data: dict, monitored: bool) -> M.Member:
    return M.Member(id=tree.new_id(), project_id=pool.project_id,
                    load_balancer_id=pool.load_balancer_id, pool_id=pool.id,
                    name=data.get("name"), admin_state_up=data.get("admin_state_up", True),
                    tags=data.get("tags") or [], provisioning_status=C.PENDING_CREATE,
                    operating_status=C.OFFLINE if monitored else C.NO_MONITOR,
                    address=data["address"], protocol_port=data["protocol_port"],
                    weight=1 if data.get("weight") is None else data["weight"],
                    backup=bool(data.get("backup")), subnet_id=data.get("subnet_id"),
                    monitor_address=data.get("monitor_address"),
                    monitor_port=data.get("monitor_port"))


def _monitored(s, pool: M.Pool) -> bool:
    return bool(tree.rows(s, M.HealthMonitor, pool.load_balancer_id, pool_id=pool.id))


def create_member(ctx, pool_id: str, body) -> dict:
    data = V.parse(body, "member", MEMBER_SCHEMA, create=True)
    api.project_of(ctx, data)
    with db.transaction() as s:
        pool = tree.get(s, M.Pool, pool_id, ctx, ("member", "post"))
        check_member(ctx, data)
        if tree.rows(s, M.Member, pool.load_balancer_id, pool_id=pool.id,
                     address=data["address"], protocol_port=data["protocol_port"]):
            raise exceptions.Conflict(f"Another member on this pool is already using ip "
                                      f"{data['address']} on protocol_port "
                                      f"{data['protocol_port']}")
        quotas.check(s, pool.project_id, "member")
        tree.take(s, pool.load_balancer_id)
        tree.mark(pool, *tree.listeners_of_pool(s, pool.id))
        member = new_member(pool, data, _monitored(s, pool))
        s.add(member)
        s.flush()
        out = {"member": show.view(s, member)}
    driver.notify()
    return out


def _member_of(s, ctx, pool_id: str, member_id: str, action: str) -> M.Member:
    tree.get(s, M.Pool, pool_id)
    member = tree.get(s, M.Member, member_id, ctx, ("member", action))
    if member.pool_id != pool_id:
        raise tree.not_found(M.Member, member_id)
    return member


def update_member(ctx, pool_id: str, member_id: str, body) -> dict:
    data = V.parse(body, "member", MEMBER_FIELDS, create=False)
    with db.transaction() as s:
        member = _member_of(s, ctx, pool_id, member_id, "put")
        check_member(ctx, data)
        tree.take(s, member.load_balancer_id)
        pool = s.get(M.Pool, pool_id)
        tree.mark(member, pool, *tree.listeners_of_pool(s, pool_id))
        if data.get("weight", 0) is None:
            data["weight"] = 1
        api._apply(member, data)
        out = {"member": show.view(s, member)}
    driver.notify()
    return out


def delete_member(ctx, pool_id: str, member_id: str) -> None:
    with db.transaction() as s:
        member = _member_of(s, ctx, pool_id, member_id, "delete")
        tree.take(s, member.load_balancer_id)
        tree.mark(s.get(M.Pool, pool_id), *tree.listeners_of_pool(s, pool_id))
        member.provisioning_status = C.PENDING_DELETE
    driver.notify()


BATCH_SCHEMA = {**MEMBER_SCHEMA}


def batch_update_members(ctx, pool_id: str, body, additive_only: bool) -> None:
    """PUT .../members: the pool's members become the list given (matched by address and
    port: new ones made, known ones updated, the rest deleted unless additive_only)."""
    if not isinstance(body, dict) or not isinstance(body.get("members"), list):
        raise V.Invalid("Invalid input for field/attribute members. Value: "
                        f"'{body.get('members') if isinstance(body, dict) else body}'. "
                        "Mandatory field missing.")
    wanted = [V.parse({"member": m}, "member", BATCH_SCHEMA, create=True)
              for m in body["members"]]
    with db.transaction() as s:
        pool = tree.get(s, M.Pool, pool_id, ctx, ("member", "put"))
        seen = set()
        for data in wanted:
            data.pop("project_id", None)
            data.pop("tenant_id", None)
            check_member(ctx, data)
            key = (data["address"], data["protocol_port"])
            if key in seen:
                raise V.validation_failure("Member must be updated only once in the same "
                                           "request.")
            seen.add(key)
        existing = {(m.address, m.protocol_port): m
                    for m in tree.rows(s, M.Member, pool.load_balancer_id, pool_id=pool.id)}
        added = len([k for k in seen if k not in existing])
        quotas.check(s, pool.project_id, "member", added) if added else None
        tree.take(s, pool.load_balancer_id)
        tree.mark(pool, *tree.listeners_of_pool(s, pool.id))
        monitored = _monitored(s, pool)
        for data in wanted:
            member = existing.get((data["address"], data["protocol_port"]))
            if member is None:
                s.add(new_member(pool, data, monitored))
            else:
                tree.mark(member)
                api._apply(member, {k: v for k, v in data.items()
                                    if k in MEMBER_FIELDS or k == "subnet_id"})
        if not additive_only:
            for key, member in existing.items():
                if key not in seen:
                    member.provisioning_status = C.PENDING_DELETE
    driver.notify()


# --- health monitors ----------------------------------------------------------------------

# Octavia's constants.DOMAIN_NAME_REGEX (matched whole: Python's $ also matches before a
# final newline, which would reach haproxy.cfg).
DOMAIN_NAME = (r'^(?=.{1,253}\.?$)(?:(?!-|[^.]+_)[A-Za-z0-9-_]{1,63}(?<!-)(?:\.|$))+$')
CODES_PATTERN = r"^(\d{3}(\s*,\s*\d{3})*)$|^(\d{3}-\d{3})$"
CODES = re.compile(r"^(\d{3}( *, *\d{3})*)$|^(\d{3}-\d{3})$")  # blanks: spaces only
URL_PATH = re.compile(r"/[\x21-\x7e]*")


def _domain_name(value: str) -> str | None:
    """Octavia's HealthMonitorPOST.domain_name: StringType(min_length=1, max_length=255,
    pattern=DOMAIN_NAME_REGEX)."""
    if not value or not re.fullmatch(DOMAIN_NAME, value):
        return f"Value should match the pattern {DOMAIN_NAME}"
    return None


def _expected_codes(value: str) -> str | None:
    if not CODES.fullmatch(value):
        return f"Value should match the pattern {CODES_PATTERN}"
    return None


def _url_path(value: str) -> str | None:
    """Octavia's URLPathType: a path (no scheme, host nor blank), beginning with /."""
    if not URL_PATH.fullmatch(value):
        return "Value must be a valid URL Path string"
    return None


HM_FIELDS = {"name": V.NAME, "admin_state_up": V.ADMIN_STATE, "tags": V.TAGS,
             "delay": Field("int", minimum=0, maximum=2147483647),
             "timeout": Field("int", minimum=0, maximum=2147483647),
             "max_retries": Field("int", minimum=1, maximum=10),
             "max_retries_down": Field("int", minimum=1, maximum=10),
             "http_method": Field("enum", choices=C.HM_HTTP_METHODS),
             "url_path": Field("str", max_length=2048, check=_url_path),
             "expected_codes": Field("str", check=_expected_codes),
             "http_version": Field("float"),
             "domain_name": Field("str", check=_domain_name)}
HM_SCHEMA = {**HM_FIELDS, **api.OWNER, "pool_id": Field("uuid", mandatory=True),
             "type": Field("enum", mandatory=True, choices=C.HM_TYPES),
             "delay": Field("int", mandatory=True, minimum=0, maximum=2147483647),
             "timeout": Field("int", mandatory=True, minimum=0, maximum=2147483647),
             "max_retries": Field("int", mandatory=True, minimum=1, maximum=10)}


def check_monitor(hm_type: str, pool_protocol: str, data: dict) -> None:
    if hm_type not in C.HM_HTTP_TYPES:
        for field in ("http_method", "url_path", "expected_codes", "http_version",
                      "domain_name"):
            if data.get(field) is not None:
                raise V.invalid_option(field, f"health monitors of type {hm_type}")
    if pool_protocol == C.UDP and hm_type not in C.HM_TYPES_FOR_UDP:
        raise V.validation_failure(f"The associated pool protocol is {pool_protocol}, so "
                                   f"only a UDP-CONNECT, HTTP, TCP, PING type health "
                                   f"monitor is supported.")
    if pool_protocol != C.UDP and hm_type == "UDP-CONNECT":
        raise V.validation_failure(f"The associated pool protocol is {pool_protocol}, so "
                                   f"only a HTTP, HTTPS, PING, TCP, TLS-HELLO type health "
                                   f"monitor is supported.")
    if data.get("http_version") is not None and data["http_version"] not in (1.0, 1.1):
        raise V.invalid_field("http_version", data["http_version"],
                              "Value should be one of: 1.0, 1.1")
    if data.get("domain_name") and data.get("http_version") != 1.1:
        raise V.validation_failure("'http_version' must be specified when 'domain_name' "
                                   "is provided.") if data.get("http_version") is None else \
            V.validation_failure("'domain_name' is not supported by HTTP version 1.0")


def new_monitor(pool: M.Pool, data: dict) -> M.HealthMonitor:
    """A monitor row (PENDING_CREATE) with Octavia's defaults for HTTP monitors."""
    http = data["type"] in C.HM_HTTP_TYPES
    return M.HealthMonitor(
        id=tree.new_id(), project_id=pool.project_id,
        load_balancer_id=pool.load_balancer_id, pool_id=pool.id, name=data.get("name"),
        admin_state_up=data.get("admin_state_up", True), tags=data.get("tags") or [],
        provisioning_status=C.PENDING_CREATE, operating_status=C.OFFLINE,
        type=data["type"], delay=data["delay"], timeout=data["timeout"],
        max_retries=data["max_retries"],
        max_retries_down=data.get("max_retries_down") or 3,
        http_method=(data.get("http_method") or "GET") if http else None,
        url_path=(data.get("url_path") or "/") if http else None,
        expected_codes=(data.get("expected_codes") or "200") if http else None,
        http_version=data.get("http_version"), domain_name=data.get("domain_name"))


def create_health_monitor(ctx, body) -> dict:
    data = V.parse(body, "healthmonitor", HM_SCHEMA, create=True)
    api.project_of(ctx, data)
    with db.transaction() as s:
        pool = tree.get(s, M.Pool, data["pool_id"], ctx, ("healthmonitor", "post"))
        check_monitor(data["type"], pool.protocol, data)
        if _monitored(s, pool):
            raise exceptions.Conflict("This pool already has a health monitor")
        quotas.check(s, pool.project_id, "health_monitor")
        tree.take(s, pool.load_balancer_id)
        tree.mark(pool, *tree.listeners_of_pool(s, pool.id))
        hm = new_monitor(pool, data)
        s.add(hm)
        s.flush()
        out = {"healthmonitor": show.view(s, hm)}
    driver.notify()
    return out


def update_health_monitor(ctx, hm_id: str, body) -> dict:
    data = V.parse(body, "healthmonitor", HM_FIELDS, create=False)
    with db.transaction() as s:
        hm = tree.get(s, M.HealthMonitor, hm_id, ctx, ("healthmonitor", "put"))
        pool = s.get(M.Pool, hm.pool_id)
        merged = {k: getattr(hm, k) for k in ("http_version", "domain_name")}
        merged.update(data)
        check_monitor(hm.type, pool.protocol, merged if hm.type in C.HM_HTTP_TYPES else data)
        for field in ("delay", "timeout", "max_retries"):
            if field in data and data[field] is None:
                raise V.invalid_option("None", field)
        tree.take(s, hm.load_balancer_id)
        tree.mark(hm, pool, *tree.listeners_of_pool(s, pool.id))
        api._apply(hm, data)
        out = {"healthmonitor": show.view(s, hm)}
    driver.notify()
    return out


def delete_health_monitor(ctx, hm_id: str) -> None:
    with db.transaction() as s:
        hm = tree.get(s, M.HealthMonitor, hm_id, ctx, ("healthmonitor", "delete"))
        tree.take(s, hm.load_balancer_id)
        pool = s.get(M.Pool, hm.pool_id)
        tree.mark(pool, *tree.listeners_of_pool(s, pool.id))
        hm.provisioning_status = C.PENDING_DELETE
    driver.notify()
