"""Helpers of the load balancer tests (a module of its own: ``from conftest import`` can
resolve to another directory's conftest)."""
from __future__ import annotations

import uuid

from helpers.cloud import wait_for


class Raw:
    """Plain HTTP on the load-balancer endpoint, for status codes and Octavia's bodies."""

    def __init__(self, session):
        self.session = session

    def __call__(self, method: str, path: str, body=None, **kwargs):
        return self.session.request(path, method, json=body, raise_exc=False,
                                    endpoint_filter={"service_type": "load-balancer",
                                                     "interface": "public"}, **kwargs)

    def error(self, method: str, path: str, body=None) -> tuple[int, str]:
        response = self(method, path, body)
        assert 400 <= response.status_code < 500 or response.status_code == 501, (
            response.status_code, response.text)
        assert response.headers["content-type"].startswith("application/json")
        fault = response.json()
        assert set(fault) == {"faultcode", "faultstring", "debuginfo"}, fault
        assert fault["faultcode"] == ("Client" if response.status_code < 500 else "Server")
        assert fault["debuginfo"] is None
        return response.status_code, fault["faultstring"]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def make_subnet(conn, cidr: str = "10.20.0.0/24"):
    network = conn.network.create_network(name=unique("lbnet"))
    return conn.network.create_subnet(network_id=network.id, ip_version=4, cidr=cidr,
                                      name=unique("lbsub"))


def active(conn, lb_id: str, timeout: float = 30):
    """The load balancer once ACTIVE (ERROR fails the test)."""
    def ready():
        lb = conn.load_balancer.get_load_balancer(lb_id)
        assert lb.provisioning_status != "ERROR", lb
        return lb if lb.provisioning_status == "ACTIVE" else None
    return wait_for(ready, timeout, f"load balancer {lb_id} ACTIVE", interval=0.05)


def gone(conn, lb_id: str, timeout: float = 30):
    return wait_for(lambda: conn.load_balancer.find_load_balancer(lb_id) is None, timeout,
                    f"load balancer {lb_id} deleted", interval=0.05)
