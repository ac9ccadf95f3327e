"""Key manager fixtures: members of fresh projects and the admin, each a KeyManager
(keymanager_helpers.py)."""
from __future__ import annotations

import pytest

from keymanager_helpers import KeyManager


@pytest.fixture
def member(cloud):
    """A member of a fresh project."""
    user = cloud.make_user(roles=("member",))
    return KeyManager(cloud.user_session(user), user)


@pytest.fixture
def other(cloud):
    """A member of another fresh project."""
    user = cloud.make_user(roles=("member",))
    return KeyManager(cloud.user_session(user), user)


@pytest.fixture(scope="module")
def km_admin(cloud):
    return KeyManager(cloud.session())
