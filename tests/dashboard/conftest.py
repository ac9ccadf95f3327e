"""Fixtures of the dashboard's tests: over HTTP a public image, the admin logged in and a
fresh member logged in (a module that needs another defines its own); headless Chromium
for the browser tests."""
from __future__ import annotations

import uuid

import pytest

from helpers.dashboard import login


@pytest.fixture(scope="module")
def image_id(cloud):
    s = cloud.session()
    image = s.post(cloud.url + "/image/v2/images", json={
        "name": f"dash2-img-{uuid.uuid4().hex[:6]}", "disk_format": "raw",
        "container_format": "bare", "visibility": "public"}).json()
    s.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=b"\0" * 4096,
          headers={"Content-Type": "application/octet-stream"})
    return image["id"]


@pytest.fixture(scope="module")
def admin_client(cloud):
    client = login(cloud, "admin", cloud.admin_password, "admin")
    yield client
    client.close()


@pytest.fixture()
def member(cloud):
    user = cloud.make_user()
    client = login(cloud, user["name"], user["password"])
    yield user, client
    client.close()


@pytest.fixture
def browser(tmp_path):
    """Headless Chromium (skipped without selenium, chromium or chromedriver)."""
    pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from helpers.dashboard_browser import chromium

    with chromium(tmp_path) as driver:
        yield driver
