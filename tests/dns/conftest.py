"""Fixtures for the DNS service's tests: designate clients of the admin and of a member."""
from __future__ import annotations

import pytest

from dns_helpers import Designate


@pytest.fixture(scope="module")
def designate(cloud):
    return Designate(cloud.session())


@pytest.fixture(scope="module")
def member(cloud):
    user = cloud.make_user()
    return user, Designate(cloud.user_session(user))
