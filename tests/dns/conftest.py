"""Fixtures for the DNS service's tests: designate clients of the admin and of a member."""
from __future__ import annotations

import pytest

from dns_helpers import Designate
from helpers.cloud import wait_for


@pytest.fixture(scope="module")
def designate(cloud):
    """The admin's client. The admin project is the session cloud's, shared by every test
    module of the worker, and holds at most 10 zones (designate's default quota): the
    zones a module made are deleted, and waited on to go, when it ends."""
    admin = Designate(cloud.session())
    before = {z["id"] for z in admin.get("/v2/zones?limit=max").json()["zones"]}
    yield admin
    made = [z["id"] for z in admin.get("/v2/zones?limit=max").json()["zones"]
            if z["id"] not in before]
    # subzones first: a zone with subzones cannot be deleted
    for zone_id in sorted(made, key=lambda i: -len(admin.get(f"/v2/zones/{i}").json()
                                                   .get("name", ""))):
        admin.req("DELETE", f"/v2/zones/{zone_id}")
    wait_for(lambda: all(admin.get(f"/v2/zones/{i}").status_code == 404 for i in made),
             30, "the module's zones deleted", 0.1)


@pytest.fixture(scope="module")
def member(cloud):
    user = cloud.make_user()
    return user, Designate(cloud.user_session(user))
