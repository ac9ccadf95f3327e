"""Each object as Octavia's API shows it."""
from __future__ import annotations

from pocketstack.loadbalancer import models


def isotime(value) -> str | None:
    """WSME's datetime: seconds, no zone (2017-02-28T00:41:44)."""
    return value.strftime("%Y-%m-%dT%H:%M:%S") if value is not None else None


def _common(obj) -> dict:
    return {"id": obj.id, "project_id": obj.project_id, "tenant_id": obj.project_id,
            "name": obj.name or "", "description": obj.description or "",
            "admin_state_up": obj.admin_state_up,
            "provisioning_status": obj.provisioning_status,
            "operating_status": obj.operating_status, "tags": list(obj.tags or []),
            "created_at": isotime(obj.created_at), "updated_at": isotime(obj.updated_at)}


def load_balancer(lb: models.LoadBalancer, listeners, pools) -> dict:
    out = _common(lb)
    out.update(vip_address=lb.vip_address, vip_port_id=lb.vip_port_id,
               vip_subnet_id=lb.vip_subnet_id, vip_network_id=lb.vip_network_id,
               vip_qos_policy_id=lb.vip_qos_policy_id, provider=lb.provider,
               flavor_id=lb.flavor_id, availability_zone=lb.availability_zone,
               vip_vnic_type="normal", vip_sg_ids=[], additional_vips=[],
               listeners=[{"id": i} for i in listeners], pools=[{"id": i} for i in pools])
    return out


def listener(li: models.Listener, l7policy_ids) -> dict:
    out = _common(li)
    out.pop("tenant_id")
    out.update(protocol=li.protocol, protocol_port=li.protocol_port,
               connection_limit=li.connection_limit, default_pool_id=li.default_pool_id,
               loadbalancers=[{"id": li.load_balancer_id}],
               l7policies=[{"id": i} for i in l7policy_ids],
               default_tls_container_ref=li.default_tls_container_ref,
               sni_container_refs=list(li.sni_container_refs or []),
               insert_headers=dict(li.insert_headers or {}),
               timeout_client_data=li.timeout_client_data,
               timeout_member_connect=li.timeout_member_connect,
               timeout_member_data=li.timeout_member_data,
               timeout_tcp_inspect=li.timeout_tcp_inspect,
               allowed_cidrs=li.allowed_cidrs,
               client_ca_tls_container_ref=li.client_ca_tls_container_ref,
               client_authentication=li.client_authentication or "NONE",
               client_crl_container_ref=li.client_crl_container_ref,
               tls_ciphers=None, tls_versions=None, alpn_protocols=None,
               hsts_max_age=None, hsts_include_subdomains=False, hsts_preload=False)
    return out


def pool(p: models.Pool, listener_ids, member_ids, healthmonitor_id) -> dict:
    out = _common(p)
    out.pop("tenant_id")
    out.update(protocol=p.protocol, lb_algorithm=p.lb_algorithm,
               session_persistence=p.session_persistence,
               loadbalancers=[{"id": p.load_balancer_id}],
               listeners=[{"id": i} for i in listener_ids],
               members=[{"id": i} for i in member_ids], healthmonitor_id=healthmonitor_id,
               tls_enabled=p.tls_enabled, tls_container_ref=p.tls_container_ref,
               ca_tls_container_ref=p.ca_tls_container_ref,
               crl_container_ref=p.crl_container_ref, tls_ciphers=None, tls_versions=None,
               alpn_protocols=None)
    return out


def member(m: models.Member) -> dict:
    out = _common(m)
    out.pop("tenant_id")
    out.update(address=m.address, protocol_port=m.protocol_port, weight=m.weight,
               backup=m.backup, subnet_id=m.subnet_id, monitor_address=m.monitor_address,
               monitor_port=m.monitor_port, vnic_type="normal")
    out.pop("description")
    return out


def health_monitor(hm: models.HealthMonitor) -> dict:
    out = _common(hm)
    out.pop("tenant_id")
    out.pop("description")
    out.update(type=hm.type, delay=hm.delay, timeout=hm.timeout,
               max_retries=hm.max_retries, max_retries_down=hm.max_retries_down,
               http_method=hm.http_method, url_path=hm.url_path,
               expected_codes=hm.expected_codes, http_version=hm.http_version,
               domain_name=hm.domain_name, pools=[{"id": hm.pool_id}])
    return out


def l7policy(p: models.L7Policy, rule_ids) -> dict:
    out = _common(p)
    out.pop("tenant_id")
    out.update(listener_id=p.listener_id, action=p.action, position=p.position,
               redirect_pool_id=p.redirect_pool_id, redirect_url=p.redirect_url,
               redirect_prefix=p.redirect_prefix, redirect_http_code=p.redirect_http_code,
               rules=[{"id": i} for i in rule_ids])
    return out


def l7rule(r: models.L7Rule) -> dict:
    out = _common(r)
    out.pop("tenant_id")
    for key in ("name", "description"):
        out.pop(key)
    out.update(type=r.type, compare_type=r.compare_type, key=r.key, value=r.value,
               invert=r.invert)
    return out


def amphora(a: models.Amphora) -> dict:
    return {"id": a.id, "loadbalancer_id": a.load_balancer_id, "compute_id": a.compute_id,
            "lb_network_ip": a.lb_network_ip, "vrrp_ip": a.ha_ip, "ha_ip": a.ha_ip,
            "vrrp_port_id": None, "ha_port_id": a.ha_port_id, "cert_expiration": None,
            "cert_busy": False, "role": a.role, "status": a.status, "vrrp_interface": None,
            "vrrp_id": None, "vrrp_priority": None, "cached_zone": None,
            "created_at": isotime(a.created_at), "updated_at": isotime(a.updated_at),
            "image_id": None, "compute_flavor": None}
