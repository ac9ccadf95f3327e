"""The image service on SQLite, PostgreSQL and MariaDB (``pocketstack up`` in a
subprocess), through openstacksdk and raw HTTP: upload, list filters and paging, patch,
members, and the bad inputs that touch the database's limits."""
from __future__ import annotations

import hashlib
import json
import os
import uuid

import httpx


class _Api:
    def __init__(self, cloud, session):
        self.base = cloud.url + "/image"
        self.headers = {"X-Auth-Token": session.get_token()}

    def __call__(self, method, path, **kwargs):
        headers = dict(self.headers, **kwargs.pop("headers", {}))
        return httpx.request(method, self.base + path, headers=headers, timeout=60, **kwargs)


def test_image_life_cycle(backend_cloud):
    conn = backend_cloud.sdk()
    data = os.urandom(3 * 1024 * 1024 + 1)
    name = f"img-{uuid.uuid4().hex[:8]}"
    image = conn.image.create_image(name, data=data, disk_format="raw",
                                    container_format="bare", hw_disk_bus="virtio",
                                    tags=["b", "a"], allow_duplicates=True)
    image = conn.image.get_image(image)
    assert (image.status, image.size) == ("active", len(data))
    assert image.hash_value == hashlib.sha512(data).hexdigest()
    assert image.tags == ["a", "b"]
    assert conn.image.download_image(image).content == data
    conn.image.update_image(image, os_distro="cirros", kernel_id=None, min_ram=128)
    assert conn.image.get_image(image).os_distro == "cirros"
    listed = [i.id for i in conn.image.images(os_distro="cirros", tag="a", size_min=1,
                                               sort="name:asc", limit=1)]
    assert image.id in listed
    conn.image.delete_image(image, ignore_missing=False)
    assert conn.image.find_image(image.id) is None


def test_listing_paging_members_and_limits(backend_cloud):
    api = _Api(backend_cloud, backend_cloud.session())
    prefix = uuid.uuid4().hex[:6]
    ids = []
    for i in range(5):
        r = api("POST", "/v2/images", json={"name": f"{prefix}-{i}", "min_disk": i,
                                            "disk_format": "raw", "container_format": "bare"})
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    seen, url = [], f"/v2/images?name=in:{','.join(f'{prefix}-{i}' for i in range(5))}" \
                     "&sort=name:asc&limit=2"
    while url:
        body = api("GET", url).json()
        seen += [i["name"] for i in body["images"]]
        url = body.get("next")
    assert seen == [f"{prefix}-{i}" for i in range(5)]
    r = api("GET", "/v2/images", params={"created_at": "gte:2000-01-01T00:00:00Z",
                                         "min_disk": 3, "sort_key": "size"})
    assert [i["id"] for i in r.json()["images"]] == [ids[3]]

    r = api("POST", f"/v2/images/{ids[0]}/members", json={"member": "project-x"})
    assert r.status_code == 200 and r.json()["status"] == "pending"
    assert api("POST", f"/v2/images/{ids[0]}/members",
               json={"member": "project-x"}).status_code == 409

    patch = {"Content-Type": "application/openstack-images-v2.1-json-patch"}
    for ops, status in (([{"op": "replace", "path": "/min_ram", "value": 2**40}], 400),
                        ([{"op": "add", "path": "/" + "p" * 255, "value": "v" * 5000}], 200),
                        ([{"op": "add", "path": "/uni", "value": "κόσμε ☃"}], 200),
                        ([{"op": "replace", "path": "/size", "value": 1}], 403)):
        r = api("PATCH", f"/v2/images/{ids[1]}", content=json.dumps(ops), headers=patch)
        assert r.status_code == status, r.text
    assert api("GET", f"/v2/images/{ids[1]}").json()["uni"] == "κόσμε ☃"
    assert api("GET", "/v2/images", params={"size_min": 10**30}).status_code == 400
    for image_id in ids:
        assert api("DELETE", f"/v2/images/{image_id}").status_code == 204
