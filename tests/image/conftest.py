"""Fixtures for the image tests: Glance callers as the admin or as fresh member projects,
and config overrides that undo themselves."""
from __future__ import annotations

import pytest

from image_helpers import Glance


@pytest.fixture(scope="session")
def glance(cloud):
    return Glance(cloud, cloud.session())


@pytest.fixture(scope="session")
def as_user(cloud):
    """Factory: a Glance caller for a new project whose user holds ``roles``."""

    def make(roles=("member",)):
        user = cloud.make_user(roles=roles)
        caller = Glance(cloud, cloud.user_session(user))
        caller.user = user
        return caller

    return make


@pytest.fixture(scope="module")
def alice(as_user):
    return as_user()


@pytest.fixture(scope="module")
def bob(as_user):
    return as_user()


def _override_fixture(option):
    @pytest.fixture
    def override():
        from pocketstack.common import config

        def set_value(value):
            config.CONF.set_override(option, value, group="image")

        yield set_value
        config.CONF.clear_override(option, group="image")

    return override


cap_override = _override_fixture("image_size_cap")
idle_timeout_override = _override_fixture("upload_idle_timeout")
hashing_override = _override_fixture("hashing_algorithm")


@pytest.fixture(scope="module")
def fuzz_image(glance):
    return glance.create()["id"]


@pytest.fixture(scope="module")
def active_image(glance):
    return glance.create_active(b"0123456789" * 100)["id"]
