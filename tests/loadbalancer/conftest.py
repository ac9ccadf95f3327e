"""Fixtures for the load balancer tests: SDK connections of a fresh member project with
a network and subnet of its own, raw HTTP on the load-balancer endpoint, and the haproxy
data plane on this host (its host agent and configuration)."""
from __future__ import annotations

import pytest

from helpers.guestnet import running_agent, unique_table
from lb_helpers import BRIDGE_HOST, Raw, make_subnet


@pytest.fixture(scope="session")
def admin_conn(cloud):
    return cloud.sdk()


@pytest.fixture
def member(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture
def conn(cloud, member):
    return cloud.user_sdk(member)


@pytest.fixture
def subnet(conn):
    return make_subnet(conn)


@pytest.fixture
def raw(cloud, member):
    return Raw(cloud.user_session(member))


@pytest.fixture
def admin_raw(cloud):
    return Raw(cloud.session())


@pytest.fixture(scope="module")
def host_agent(cloud):
    """The host agent plumbing BRIDGE_HOST's ports (the haproxy tests' guests and VIPs)."""
    with running_agent(BRIDGE_HOST, unique_table("lb_haproxy")) as handle:
        yield handle


@pytest.fixture
def haproxy_plane(cloud):
    """The haproxy data plane on BRIDGE_HOST, for the test."""
    from pocketstack.common import config

    config.CONF.set_override("data_plane", "haproxy", group="loadbalancer")
    config.CONF.set_override("haproxy_host", BRIDGE_HOST, group="loadbalancer")
    try:
        yield
    finally:
        config.CONF.clear_override("data_plane", group="loadbalancer")
        config.CONF.clear_override("haproxy_host", group="loadbalancer")
