"""Helpers shared by the network tests (a module of its own: ``from conftest import`` can
resolve to another test directory's conftest when the whole suite runs)."""
from __future__ import annotations

import os
import uuid


class Raw:
    """Plain HTTP on the network endpoint, to see status codes and neutron's error bodies."""

    def __init__(self, session):
        self.session = session

    def __call__(self, method: str, path: str, body=None, **kwargs):
        return self.session.request(f"/v2.0{path}", method, json=body, raise_exc=False,
                                    endpoint_filter={"service_type": "network",
                                                     "interface": "public"}, **kwargs)

    def error(self, method: str, path: str, body=None) -> tuple[int, dict]:
        response = self(method, path, body)
        assert response.status_code >= 400, response.text
        assert response.headers["content-type"].startswith("application/json")
        fault = response.json()["NeutronError"]
        assert set(fault) == {"type", "message", "detail"}
        return response.status_code, fault


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def dhcp_files(cloud, network_id: str) -> dict[str, str] | None:
    """The network's DHCP files once the background writer has caught up."""
    from pocketstack.network import dhcp

    assert dhcp.wait(10), "the DHCP files were not written within 10 s"
    directory = os.path.join(cloud.data_dir, "network", "dhcp", network_id)
    if not os.path.isdir(directory):
        return None
    out = {}
    for name in ("host", "addn_hosts", "opts", "leases"):
        with open(os.path.join(directory, name)) as f:
            out[name] = f.read()
    return out
