"""haproxy.cfg for one load balancer (listeners as frontends, pools as backends, members as
servers, health monitors as checks, L7 policies as ACLs), the UDP balancer's config and
the ping check's script; every user-supplied value passes word() or address() on its way
in, so no project member can write a line of their own into a root process's config.
dataplane.py runs what these render.
"""
from __future__ import annotations

import hashlib
import ipaddress
import re
import shlex
import shutil

from pocketstack.loadbalancer import tree
from pocketstack.loadbalancer import constants as C
from pocketstack.loadbalancer import models as M

ALGORITHMS = {C.ROUND_ROBIN: "roundrobin", C.LEAST_CONNECTIONS: "leastconn",
              C.SOURCE_IP: "source", C.SOURCE_IP_PORT: "source"}


# --- the configuration ----------------------------------------------------------------------

class UnsafeValue(ValueError):
    """A stored value the configuration cannot hold as one word: the API refuses these,
    so one here is a row of before its checks or written around them; the configuration
    is not written (the change fails) rather than let it begin a line of its own."""


UNSAFE = re.compile(r"[\x00-\x1f\x7f]")
ESCAPED = re.compile(r"""([\\ #'"])""")


def word(value, what: str, *, spaces: bool = False) -> str:
    """Every user-supplied value goes into haproxy.cfg through here: refused if it is
    empty or has a control character (a newline or a tab ends a line or a word of
    HAProxy's), or a blank where none belongs; escaped for HAProxy's parser (backslash,
    blank, the # of a comment, the quotes) so that it stays one word, read back as given."""
    text = str(value)
    if not text or UNSAFE.search(text) or (not spaces and " " in text):
        raise UnsafeValue(f"{what} {text!r} cannot go into haproxy.cfg")
    return ESCAPED.sub(r"\\\1", text)


def address(value: str, what: str) -> str:
    """An IP address (or network) as the API takes one: no IPv6 scope id (Python's
    ipaddress takes any characters after a %)."""
    try:
        if "%" in value or UNSAFE.search(value) or value != value.strip():
            raise ValueError(value)
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise UnsafeValue(f"{what} {value!r} is not an IP address") from None
    return value


def udp_config(s, lb: M.LoadBalancer, listeners: list[M.Listener]) -> dict | None:
    """The UDP balancer's configuration (udp_balancer.py) for the load balancer's UDP
    listeners that are up; None when there is none."""
    out = []
    for li in listeners:
        if li.protocol != C.UDP or not li.admin_state_up:
            continue
        conf = {"id": li.id, "address": lb.vip_address, "port": li.protocol_port,
                "allowed_cidrs": list(li.allowed_cidrs or []),
                "connection_limit": li.connection_limit if li.connection_limit else -1,
                "timeout": li.timeout_client_data or C.DEFAULT_TIMEOUT, "pool": None}
        pool = s.get(M.Pool, li.default_pool_id) if li.default_pool_id else None
        if pool is not None and pool.provisioning_status != C.PENDING_DELETE \
                and pool.admin_state_up:
            hm = next((h for h in tree.rows(s, M.HealthMonitor, lb.id, pool_id=pool.id)
                       if h.provisioning_status != C.PENDING_DELETE and h.admin_state_up),
                      None)
            sp = pool.session_persistence or {}
            conf["pool"] = {
                "id": pool.id, "algorithm": pool.lb_algorithm,
                "persistence": {"type": sp.get("type"),
                                "timeout": sp.get("persistence_timeout") or 360},
                "monitor": None if hm is None else {
                    "type": hm.type, "delay": hm.delay, "timeout": hm.timeout,
                    "max_retries": hm.max_retries, "max_retries_down": hm.max_retries_down,
                    "http_method": _checked(hm.http_method, "http_method"),
                    "url_path": _checked(hm.url_path, "url_path"),
                    "expected_codes": _code_list(hm.expected_codes)},
                "members": [{"id": m.id, "address": address(m.address, "address"),
                             "port": m.protocol_port,
                             "weight": m.weight, "backup": m.backup,
                             "enabled": m.admin_state_up,
                             "monitor_address": m.monitor_address and address(
                                 m.monitor_address, "monitor_address"),
                             "monitor_port": m.monitor_port}
                            for m in tree.rows(s, M.Member, lb.id, pool_id=pool.id)
                            if m.provisioning_status != C.PENDING_DELETE]}
        out.append(conf)
    return {"listeners": out} if out else None


def _checked(value: str | None, what: str) -> str | None:
    """A value the UDP balancer writes into a check's request line, as one word."""
    if value is not None:
        word(value, what)
    return value


def _code_list(expected: str | None) -> list[str]:
    codes = (expected or "200").replace(" ", "")
    if not re.fullmatch(r"\d{3}(,\d{3})*|\d{3}-\d{3}", codes):
        raise UnsafeValue(f"expected_codes {expected!r} are not status codes")
    if "-" in codes:
        low, high = (int(c) for c in codes.split("-"))
        return [str(c) for c in range(low, high + 1)]
    return codes.split(",")


def render(s, lb: M.LoadBalancer, listeners: list[M.Listener]) -> str:
    """haproxy.cfg for the load balancer (@DIR@ stands for its directory; apply puts
    the stats socket's own path for @DIR@/haproxy.sock)."""
    # maxconn: within the file descriptors a container grants
    lines = ["global", "    daemon", "    maxconn 4096",
             "    stats socket @DIR@/haproxy.sock mode 600 level admin expose-fd listeners",
             "", "defaults", "    retries 3", "    option redispatch",
             "    timeout connect 5000", "    timeout client 50000",
             "    timeout server 50000", ""]
    if uses_ping(s, lb):  # HAProxy runs external checks only when told it may fork
        lines[2:2] = ["    external-check", "    insecure-fork-wanted"]
    used_pools = []
    for li in listeners:
        if li.protocol in (C.UDP, C.SCTP) or not li.admin_state_up:
            continue
        mode = "http" if li.protocol in C.HEADER_PROTOCOLS + (C.PROMETHEUS,) else "tcp"
        lines += [f"frontend {li.id}", f"    mode {mode}",
                  f"    bind {address(lb.vip_address, 'vip_address')}:{li.protocol_port}"
                  f"{_tls_bind(li)}",
                  f"    timeout client {li.timeout_client_data or C.DEFAULT_TIMEOUT}"]
        if li.connection_limit and li.connection_limit > 0:
            lines.append(f"    maxconn {li.connection_limit}")
        for cidr in li.allowed_cidrs or []:
            lines.append(f"    acl allowed_cidr src {address(cidr, 'allowed_cidr')}")
        if li.allowed_cidrs:
            lines.append("    tcp-request connection reject unless allowed_cidr")
        headers = {k: str(v).lower() == "true" for k, v in (li.insert_headers or {}).items()}
        if mode == "http":
            if headers.get("X-Forwarded-For"):
                lines.append("    option forwardfor")
            if headers.get("X-Forwarded-Port"):
                lines.append("    http-request set-header X-Forwarded-Port %[dst_port]")
            if headers.get("X-Forwarded-Proto"):
                proto = "https" if li.protocol == C.TERMINATED_HTTPS else "http"
                lines.append(f"    http-request set-header X-Forwarded-Proto {proto}")
            if li.protocol == C.TERMINATED_HTTPS:
                lines += [f"    http-request set-header {name} {value}"
                          for name, value in SSL_HEADERS.items() if headers.get(name)]
            lines += _l7(s, lb, li, used_pools)
        if li.protocol == C.PROMETHEUS:  # Octavia's metrics endpoint, HAProxy's exporter
            lines.append("    http-request use-service prometheus-exporter if "
                         "{ path /metrics }")
            lines.append("    http-request deny")
        elif li.default_pool_id:
            lines.append(f"    default_backend {li.default_pool_id}")
            used_pools.append((li.default_pool_id, li))
        lines.append("")
    for pool_id, li in dict(reversed(used_pools)).items():  # the first listener's timeouts
        pool = s.get(M.Pool, pool_id)
        if pool is None or pool.provisioning_status == C.PENDING_DELETE:
            continue
        lines += _backend(s, lb, pool, "http" if pool.protocol == C.HTTP else "tcp", li)
    return "\n".join(lines) + "\n"


PING_CHECK = "ping-check"


def uses_ping(s, lb: M.LoadBalancer) -> bool:
    return any(h.type == "PING" and h.admin_state_up
               and h.provisioning_status != C.PENDING_DELETE
               for h in tree.rows(s, M.HealthMonitor, lb.id))


def ping_script(monitor_addresses: dict[str, str] | None = None) -> str:
    """The external check of PING monitors (Octavia's ping-wrapper.sh): HAProxy runs it
    with <proxy address> <proxy port> <server address> <server port> and the server's
    name (the member id) in HAPROXY_SERVER_NAME; one echo request, one second to answer,
    to the member's monitor_address if it has one (HAProxy passes the server's own
    address even with a check address). iputils' ping where installed, else busybox's."""
    ping = shutil.which("ping")
    command = f"{ping} -n" if ping else f"{shutil.which('busybox') or 'busybox'} ping"
    lines = ["#!/bin/sh", "# A PING health monitor's check: one ICMP echo to the member.",
             'address="$3"']
    if monitor_addresses:
        lines.append('case "$HAPROXY_SERVER_NAME" in')
        # The script runs as root: every address a plain IP (refused otherwise), quoted.
        lines += [f"    {shlex.quote(word(member_id, 'member id'))}) "
                  f"address={shlex.quote(address(addr, 'monitor_address'))} ;;"
                  for member_id, addr in sorted(monitor_addresses.items())]
        lines.append("esac")
    lines.append(f'exec {command} -q -c 1 -W 1 "$address" >/dev/null 2>&1')
    return "\n".join(lines) + "\n"


def tls_refs(s, lb: M.LoadBalancer, listeners: list[M.Listener]
             ) -> tuple[list[str], list[str]]:
    """The certificate refs (containers or PKCS12: certificate and key) and the secret
    refs (a CA bundle, a CRL) the configuration uses."""
    refs, secrets = [], []
    for li in listeners:
        if li.protocol == C.TERMINATED_HTTPS and li.admin_state_up:
            refs += [r for r in [li.default_tls_container_ref, *(li.sni_container_refs or [])]
                     if r]
            if li.client_ca_tls_container_ref:
                secrets += [r for r in (li.client_ca_tls_container_ref,
                                        li.client_crl_container_ref) if r]
    for pool in tree.rows(s, M.Pool, lb.id):
        if pool.tls_enabled and pool.provisioning_status != C.PENDING_DELETE:
            refs += [pool.tls_container_ref] if pool.tls_container_ref else []
            if pool.ca_tls_container_ref:
                secrets += [r for r in (pool.ca_tls_container_ref, pool.crl_container_ref)
                            if r]
    return list(dict.fromkeys(refs)), list(dict.fromkeys(secrets))


def cert_file(ref: str) -> str:
    return hashlib.sha256(ref.encode()).hexdigest()[:32] + ".pem"


def _tls_bind(li: M.Listener) -> str:
    """HAProxy terminates TLS with the default certificate first (served to clients
    that send no name or an unknown one) and picks among all by the SNI name."""
    if li.protocol != C.TERMINATED_HTTPS:
        return ""
    refs = list(dict.fromkeys(r for r in [li.default_tls_container_ref,
                                          *(li.sni_container_refs or [])] if r))
    out = " ssl" + "".join(f" crt @DIR@/certs/{cert_file(r)}" for r in refs)
    if li.client_ca_tls_container_ref:  # client authentication (Octavia's client_ca_opt)
        verify = C.CLIENT_AUTH_VERIFY[li.client_authentication or C.CLIENT_AUTH_NONE]
        out += f" ca-file @DIR@/certs/{cert_file(li.client_ca_tls_container_ref)} " \
               f"verify {verify}"
        if li.client_crl_container_ref:
            out += f" crl-file @DIR@/certs/{cert_file(li.client_crl_container_ref)}"
    return out


def _server_tls(pool: M.Pool) -> str:
    """TLS to the members of a pool with tls_enabled (Octavia's server options): its
    client certificate, and the members' verified against its CA (and CRL), else not
    verified; the client's SNI name passed on."""
    if not pool.tls_enabled:
        return ""
    out = " ssl"
    if pool.tls_container_ref:
        out += f" crt @DIR@/certs/{cert_file(pool.tls_container_ref)}"
    if pool.ca_tls_container_ref:
        out += f" ca-file @DIR@/certs/{cert_file(pool.ca_tls_container_ref)} verify required"
        if pool.crl_container_ref:
            out += f" crl-file @DIR@/certs/{cert_file(pool.crl_container_ref)}"
    else:
        out += " verify none"
    return out + " sni ssl_fc_sni"


def _l7(s, lb, li, used_pools: list) -> list[str]:
    lines = []
    policies = sorted((p for p in tree.rows(s, M.L7Policy, lb.id, listener_id=li.id)
                       if p.admin_state_up and p.provisioning_status != C.PENDING_DELETE),
                      key=lambda p: p.position)
    for policy in policies:
        rules = [r for r in tree.rows(s, M.L7Rule, lb.id, l7policy_id=policy.id)
                 if r.admin_state_up and r.provisioning_status != C.PENDING_DELETE]
        if not rules:
            continue  # Octavia: a policy without rules matches nothing
        names = []
        for rule in rules:
            name = f"r_{rule.id.replace('-', '')}"
            lines.append(f"    acl {name} {_acl(rule)}")
            names.append(("!" if rule.invert else "") + name)
        cond = " ".join(names)
        if policy.action == "REJECT":
            lines.append(f"    http-request deny if {cond}")
        elif policy.action == "REDIRECT_TO_URL":
            lines.append(f"    redirect code {policy.redirect_http_code} location "
                         f"{word(policy.redirect_url, 'redirect_url')} if {cond}")
        elif policy.action == "REDIRECT_PREFIX":
            lines.append(f"    redirect code {policy.redirect_http_code} prefix "
                         f"{word(policy.redirect_prefix, 'redirect_prefix')} if {cond}")
        elif policy.action == "REDIRECT_TO_POOL":
            lines.append(f"    use_backend {policy.redirect_pool_id} if {cond}")
            used_pools.append((policy.redirect_pool_id, li))
    return lines


# The client certificate's facts as Octavia's amphora inserts them.
SSL_HEADERS = {"X-SSL-Client-Verify": "%[ssl_c_verify]",
               "X-SSL-Client-Has-Cert": "%[ssl_c_used]",
               "X-SSL-Client-DN": "%{+Q}[ssl_c_s_dn]",
               "X-SSL-Client-CN": "%{+Q}[ssl_c_s_dn(cn)]",
               "X-SSL-Issuer": "%{+Q}[ssl_c_i_dn]",
               "X-SSL-Client-SHA1": "%{+Q}[ssl_c_sha1,hex]",
               "X-SSL-Client-Not-Before": "%{+Q}[ssl_c_notbefore]",
               "X-SSL-Client-Not-After": "%{+Q}[ssl_c_notafter]"}

COMPARE = {"REGEX": "-m reg", "STARTS_WITH": "-m beg", "ENDS_WITH": "-m end",
           "CONTAINS": "-m sub", "EQUAL_TO": "-m str"}


def _acl(rule: M.L7Rule) -> str:
    value = word(rule.value, "L7 rule value", spaces=True)
    match = COMPARE[rule.compare_type]
    key = rule.key and word(rule.key, "L7 rule key")
    if rule.type == "HOST_NAME":
        return f"req.hdr(host),field(1,:) -i {match} {value}"
    if rule.type == "PATH":
        return f"path {match} {value}"
    if rule.type == "FILE_TYPE":
        return f"path_end -i .{value}" if rule.compare_type == "EQUAL_TO" else \
            f"path_reg {value}"
    if rule.type == "HEADER":
        return f"req.hdr({_argument(key)}) {match} {value}"
    if rule.type == "SSL_CONN_HAS_CERT":
        return "ssl_c_used"
    if rule.type == "SSL_VERIFY_RESULT":
        return f"ssl_c_verify eq {value}"
    if rule.type == "SSL_DN_FIELD":
        return f"ssl_c_s_dn({_argument(key)}) {match} {value}"
    return f"req.cook({_argument(key)}) {match} {value}"  # COOKIE


def _argument(key: str) -> str:
    """A sample fetch's argument: it ends at a comma or a closing parenthesis."""
    if any(c in key for c in ",()"):
        raise UnsafeValue(f"{key!r} cannot be a sample fetch's argument")
    return key


def _codes(expected: str) -> str:
    """Octavia's expected_codes (200, 200,202 or 200-204) as an HAProxy status regex."""
    return "^(" + "|".join(_code_list(expected)) + ")$"



def _backend(s, lb, pool: M.Pool, mode: str, li: M.Listener) -> list[str]:
    lines = [f"backend {pool.id}", f"    mode {mode}",
             f"    balance {ALGORITHMS[pool.lb_algorithm]}",
             f"    timeout connect {li.timeout_member_connect or 5000}",
             f"    timeout server {li.timeout_member_data or C.DEFAULT_TIMEOUT}"]
    sp = pool.session_persistence or {}
    if sp.get("type") == "HTTP_COOKIE" and mode == "http":
        lines.append("    cookie SRV insert indirect nocache")
    elif sp.get("type") == "APP_COOKIE" and mode == "http":
        lines.append("    stick-table type string len 64 size 10k")
        cookie = _argument(word(sp["cookie_name"], "cookie_name"))
        lines.append(f"    stick store-response res.cook({cookie})")
        lines.append(f"    stick match req.cook({cookie})")
    elif sp.get("type") == "SOURCE_IP":
        lines += ["    stick-table type ip size 10k", "    stick on src"]
    hm = next((h for h in tree.rows(s, M.HealthMonitor, lb.id, pool_id=pool.id)
               if h.provisioning_status != C.PENDING_DELETE and h.admin_state_up), None)
    check = ""
    if hm is not None:
        lines.append(f"    timeout check {hm.timeout}s")
        if hm.type in C.HM_HTTP_TYPES:
            version = " ver HTTP/1.1" if hm.http_version == 1.1 else ""
            host = f" hdr Host {word(hm.domain_name, 'domain_name')}" \
                if hm.domain_name and version else ""
            lines.append("    option httpchk")
            lines.append(f"    http-check send meth {word(hm.http_method, 'http_method')} "
                         f"uri {word(hm.url_path, 'url_path')}{version}{host}")
            lines.append(f"    http-check expect rstatus {_codes(hm.expected_codes)}")
        elif hm.type == "TLS-HELLO":
            lines.append("    option ssl-hello-chk")
        elif hm.type == "PING":
            # HAProxy sends no ICMP: as Octavia's amphora, an external check runs a ping
            # of the member (the script apply writes) in the load balancer's namespace.
            lines.append("    option external-check")
            lines.append(f"    external-check command @DIR@/{PING_CHECK}")
        # TCP: a connect check.
        check = (f" check inter {hm.delay}s fall {hm.max_retries_down} "
                 f"rise {hm.max_retries}")
        if hm.type == "HTTPS":
            check += " check-ssl verify none"
    for member in tree.rows(s, M.Member, lb.id, pool_id=pool.id):
        if member.provisioning_status == C.PENDING_DELETE:
            continue
        line = (f"    server {member.id} {address(member.address, 'member address')}:"
                f"{member.protocol_port} weight {member.weight}{check}")
        if check and (member.monitor_address or member.monitor_port):
            if member.monitor_address:
                line += f" addr {address(member.monitor_address, 'monitor_address')}"
            if member.monitor_port:
                line += f" port {member.monitor_port}"
        line += _server_tls(pool)
        if sp.get("type") == "HTTP_COOKIE" and mode == "http":
            line += f" cookie {member.id}"
        if member.backup:
            line += " backup"
        if not member.admin_state_up:
            line += " disabled"
        lines.append(line)
    lines.append("")
    return lines
