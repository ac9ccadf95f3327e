"""Fixtures for the network service's tests: admin and member clients, a recording
compute notifier, raw neutron error bodies, and the DHCP files of a network."""
from __future__ import annotations

import os
import uuid

import pytest


class RecordingNotifier:
    """The test double for the compute notifier: remembers every event, in order."""

    def __init__(self):
        self.events: list[dict] = []

    def send(self, events):
        self.events.extend(events)

    def stop(self):
        pass

    def names_for(self, port_id: str) -> list[str]:
        return [e["name"] for e in self.events if e["tag"] == port_id]


@pytest.fixture
def recorder():
    from pocketstack.network import notifier

    double = RecordingNotifier()
    previous = notifier.set_notifier(double)
    try:
        yield double
    finally:
        notifier.set_notifier(previous)


@pytest.fixture(scope="session")
def admin_conn(cloud):
    return cloud.sdk()


@pytest.fixture
def member(cloud):
    """A fresh project with a member user: quotas and visibility start from scratch."""
    return cloud.make_user(roles=("member",))


@pytest.fixture
def member_conn(cloud, member):
    return cloud.user_sdk(member)


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


@pytest.fixture
def raw(cloud):
    return Raw(cloud.session())


@pytest.fixture
def member_raw(cloud, member):
    return Raw(cloud.user_session(member))


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
