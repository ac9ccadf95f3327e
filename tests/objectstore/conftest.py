"""Object storage fixtures: swift connections (python-swiftclient) on the session cloud
for the admin and for fresh projects."""
from __future__ import annotations

import os
import sys
import uuid

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from swift_helpers import Holder  # noqa: E402


@pytest.fixture
def owner(cloud):
    """A member of a fresh project: its user, session, storage URL, token, swift client."""
    user = cloud.make_user(roles=("member",))
    session = cloud.user_session(user)
    return Holder(cloud, user, session)


@pytest.fixture
def container(owner):
    name = f"c-{uuid.uuid4().hex[:8]}"
    owner.swift.put_container(name)
    return name
