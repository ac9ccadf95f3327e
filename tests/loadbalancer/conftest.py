"""Fixtures for the load balancer tests: SDK connections of a fresh member project with
a network and subnet of its own, and raw HTTP on the load-balancer endpoint."""
from __future__ import annotations

import pytest

from lb_helpers import Raw, make_subnet


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
