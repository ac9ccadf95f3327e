"""Compute test helpers: a public image in the image service, a member user per module,
and small REST helpers that speak a chosen microversion."""
from __future__ import annotations


import pytest
from compute_rest import Compute, public_image

from pocketstack.common import config

MV = {"OpenStack-API-Version": "compute 2.79"}


@pytest.fixture(scope="session")
def image_id(cloud):
    """A small public active image named like DevStack's cirros."""
    return public_image(cloud)


@pytest.fixture(scope="module")
def member(cloud):
    user = cloud.make_user(roles=("member",))
    return user


@pytest.fixture(scope="module")
def api(cloud, member):
    """Compute REST as a project member."""
    return Compute(cloud, cloud.user_session(member))


@pytest.fixture(scope="module")
def make_api(cloud):
    """Compute REST as another user: ``make_api(user)``."""
    return lambda user: Compute(cloud, cloud.user_session(user))


@pytest.fixture(scope="module")
def admin_api(cloud):
    return Compute(cloud, cloud.session())


@pytest.fixture
def faults(cloud):
    """The fault-injection API; every rule is removed after the test."""
    s = cloud.session()
    base = cloud.url + "/pocketstack/v1/faults"

    class Faults:
        def add(self, **rule):
            r = s.post(base, json={"fault": rule}, raise_exc=False)
            assert r.status_code == 201, r.text
            return r.json()["fault"]

        def list(self):
            return s.get(base).json()["faults"]

    yield Faults()
    s.delete(base, raise_exc=False)


@pytest.fixture
def conf_override():
    """Change a config option for one test (the cloud runs in this process)."""
    changed = []

    def set_(group, name, value):
        config.CONF.set_override(name, value, group=group)
        changed.append((group, name))

    yield set_
    for group, name in changed:
        config.CONF.clear_override(name, group=group)


def network_available(cloud) -> bool:
    r = cloud.session().get(cloud.url + "/network/v2.0/networks", raise_exc=False)
    return r.status_code == 200
