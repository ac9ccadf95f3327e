"""The image service's swift store: image data as objects of the image service's own
object-store account (container ``glance``), segments and a manifest from
swift_store_large_object_size on, uploaded, downloaded and deleted through openstacksdk."""
from __future__ import annotations

import hashlib
import json
import os
import uuid

import pytest
import swiftclient
from helpers.cloud import own_cloud


@pytest.fixture(scope="module")
def cloud():
    with own_cloud("image-swift", **{
            "image.default_store": "swift", "image.show_image_direct_url": True,
            "image.swift_store_large_object_size": 1,
            "image.swift_store_large_object_chunk_size": 1}) as c:
        yield c


@pytest.fixture(scope="module")
def glance_account(cloud):
    """python-swiftclient as the image service's user, on its project's account."""
    with open(os.path.join(cloud.data_dir, "service-passwords")) as f:
        password = json.load(f)["glance"]
    session = cloud.session(username="glance", password=password, project_name="service")
    url = session.get_endpoint(service_type="object-store", interface="public")
    return swiftclient.Connection(preauthurl=url, preauthtoken=session.get_token(),
                                  retries=0)


def _objects(account, prefix):
    try:
        return [o["name"] for o in account.get_container("glance", prefix=prefix)[1]]
    except swiftclient.ClientException as error:
        assert error.http_status == 404
        return []


def _round_trip(cloud, glance_account, data):
    user = cloud.make_user(roles=("member",))
    conn = cloud.user_sdk(user)
    image = conn.image.create_image(name=f"swift-{uuid.uuid4().hex[:6]}", data=data,
                                    disk_format="raw", container_format="bare")
    image = conn.image.get_image(image.id)
    assert image.status == "active" and image.size == len(data)
    assert image.checksum == hashlib.md5(data).hexdigest()
    assert image.hash_value == hashlib.sha512(data).hexdigest()
    got = conn.image.download_image(image.id)
    assert hashlib.sha512(got.content).hexdigest() == image.hash_value
    admin_view = cloud.sdk().image.get_image(image.id)
    assert admin_view.direct_url.startswith("swift+http://")
    assert admin_view.direct_url.endswith(f"/glance/{image.id}")
    return conn, image


def test_a_small_image_is_one_object_of_the_image_services_account(cloud, glance_account):
    data = os.urandom(300_000)
    conn, image = _round_trip(cloud, glance_account, data)
    assert _objects(glance_account, image.id) == [image.id]
    assert glance_account.get_object("glance", image.id)[1] == data
    conn.image.delete_image(image.id)
    assert _objects(glance_account, image.id) == []


def test_a_large_image_is_segments_and_a_manifest(cloud, glance_account):
    data = os.urandom((5 << 19) + 12345)  # 2.5 MiB and a bit: three 1 MiB segments
    conn, image = _round_trip(cloud, glance_account, data)
    names = _objects(glance_account, image.id)
    assert names == [image.id] + [f"{image.id}-{i:05d}" for i in (1, 2, 3)]
    headers = glance_account.head_object("glance", image.id)
    assert headers["x-object-manifest"] == f"glance/{image.id}-"
    ranged = conn.session.get(
        f"{cloud.url}/image/v2/images/{image.id}/file",
        headers={"Range": f"bytes={(1 << 20) - 10}-{(1 << 20) + 9}"})
    assert ranged.status_code == 206
    assert ranged.content == data[(1 << 20) - 10:(1 << 20) + 10]
    conn.image.delete_image(image.id)
    assert _objects(glance_account, image.id) == []
    user_objects = [c["name"] for c in swiftclient.Connection(
        preauthurl=conn.session.get_endpoint(service_type="object-store"),
        preauthtoken=conn.session.get_token(), retries=0).get_account()[1]]
    assert user_objects == []  # nothing in the uploader's own account


def test_a_glance_direct_import_lands_in_the_swift_store(cloud, glance_account):
    user = cloud.make_user(roles=("member",))
    conn = cloud.user_sdk(user)
    data = os.urandom(200_000)
    image = conn.image.create_image(name="imported", disk_format="raw",
                                    container_format="bare")
    conn.image.stage_image(image, data=data)
    conn.image.import_image(image, method="glance-direct")
    image = conn.image.wait_for_status(conn.image.get_image(image.id), "active",
                                       wait=60, interval=0.2)
    assert _objects(glance_account, image.id) == [image.id]
    assert conn.image.download_image(image.id).content == data
    assert cloud.sdk().image.get_image(image.id).direct_url.startswith("swift+http://")
    conn.image.delete_image(image.id)
    assert _objects(glance_account, image.id) == []
