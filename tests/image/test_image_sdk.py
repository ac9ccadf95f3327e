"""The image service through openstacksdk and keystoneauth1, as users drive it."""
import hashlib
import io
import os

import pytest
from keystoneauth1 import adapter

from image_helpers import files_of, store_dir, unique


@pytest.fixture(scope="module")
def sdk(cloud):
    return cloud.sdk()


def test_discovery_finds_v2_from_the_catalog(cloud, glance):
    sess = cloud.session()
    image = adapter.Adapter(sess, service_type="image", interface="public", version="2")
    assert image.get_endpoint() == cloud.url + "/image/v2/"
    data = image.get_endpoint_data()
    assert data.api_version == (2, 18)  # glance's with an image cache (api/versions.py)
    root = glance.get("/")
    assert root.status_code == 300
    assert root.json()["versions"][0] == {
        "id": "v2.18", "status": "CURRENT",
        "links": [{"rel": "self", "href": cloud.url + "/image/v2/"}]}
    # glance's list with one store and a cache; 2.17 (the location APIs) is not there
    ids = [v["id"] for v in root.json()["versions"]]
    assert ids == ["v2.18", "v2.16", "v2.15", "v2.14", "v2.9"] + [f"v2.{n}" for n in
                                                                  range(7, -1, -1)]
    assert glance.get("/versions").json() == root.json()


def test_schemas_allow_string_properties(glance):
    schema = glance.get("/v2/schemas/image").json()
    assert schema["name"] == "image"
    assert schema["additionalProperties"] == {"type": "string"}
    assert "qcow2" in schema["properties"]["disk_format"]["enum"]
    assert schema["properties"]["visibility"]["enum"] == ["community", "public", "private",
                                                         "shared"]
    images = glance.get("/v2/schemas/images").json()
    assert images["properties"]["images"]["items"] == schema
    assert glance.get("/v2/schemas/member").json()["properties"]["status"]["enum"] == [
        "pending", "accepted", "rejected"]
    # one store: copy-image has nowhere to copy to, so it is not offered
    assert glance.get("/v2/info/import").json()["import-methods"]["value"] == [
        "glance-direct", "web-download"]


def test_create_upload_show_download_delete(sdk):
    data = os.urandom(5 * 1024 * 1024 + 123)
    name = unique("sdk")
    created = sdk.image.create_image(name, data=data, disk_format="raw",
                                     container_format="bare", hw_disk_bus="virtio",
                                     tags=["demo"], allow_duplicates=True)
    image = sdk.image.get_image(created.id)
    assert image.status == "active"
    assert image.size == len(data)
    assert image.checksum == hashlib.md5(data).hexdigest()
    assert image.hash_algo == "sha512"
    assert image.hash_value == hashlib.sha512(data).hexdigest()
    assert image.hw_disk_bus == "virtio"
    assert image.tags == ["demo"]
    assert image.visibility == "shared"
    # openstacksdk's own bookkeeping properties come back as they were sent.
    assert image.properties["owner_specified.openstack.object"] == f"images/{name}"
    assert "owner_specified.openstack.md5" in image.properties

    downloaded = sdk.image.download_image(image)  # the sdk verifies the sha512 itself
    assert downloaded.headers["Content-MD5"] == image.checksum
    assert hashlib.sha512(downloaded.content).hexdigest() == image.hash_value
    out = io.BytesIO()
    sdk.image.download_image(image, output=out, stream=True)
    assert out.getvalue() == data

    assert files_of(image.id) == [os.path.join(store_dir(), image.id)]
    sdk.image.delete_image(image, ignore_missing=False)
    assert sdk.image.find_image(image.id) is None
    assert files_of(image.id) == []


def test_update_properties_tags_and_attributes(sdk):
    image = sdk.image.create_image(unique("upd"), disk_format="raw", container_format="bare",
                                   allow_duplicates=True)
    image = sdk.image.update_image(image, os_distro="cirros", min_ram=64, name="renamed",
                                   is_protected=True)
    sdk.image.update_image_properties(image, hw_qemu_guest_agent="yes", custom_key="value")
    sdk.image.add_tag(image, "alpha")
    sdk.image.add_tag(image, "beta")
    sdk.image.remove_tag(image, "alpha")
    image = sdk.image.get_image(image)
    assert (image.name, image.os_distro, image.min_ram, image.is_protected) == (
        "renamed", "cirros", 64, True)
    assert image.hw_qemu_guest_agent == "yes"
    assert image.properties["custom_key"] == "value"
    assert image.tags == ["beta"]
    image = sdk.image.update_image(image, is_protected=False)
    sdk.image.delete_image(image)


def test_import_through_staging(sdk):
    data = os.urandom(300_000)
    created = sdk.image.create_image(unique("import"), data=data, disk_format="raw",
                                     container_format="bare", use_import=True,
                                     allow_duplicates=True)
    image = sdk.image.get_image(created)
    assert image.status == "active"
    assert image.size == image.virtual_size == len(data)
    assert image.hash_value == hashlib.sha512(data).hexdigest()
    assert sdk.image.download_image(image).content == data
    assert [f for f in files_of(image.id) if "staging" in f] == []


def test_range_downloads(glance):
    data = bytes(range(256)) * 40
    image = glance.create_active(data)
    url = f"/v2/images/{image['id']}/file"
    for header, first, last in (("bytes=0-9", 0, 9), ("bytes=100-", 100, len(data) - 1),
                                ("bytes=-16", len(data) - 16, len(data) - 1),
                                ("bytes=10000-99999", 10000, len(data) - 1)):
        r = glance.get(url, headers={"Range": header})
        assert r.status_code == 206, header
        assert r.content == data[first:last + 1]
        assert r.headers["content-range"] == f"bytes {first}-{last}/{len(data)}"
        assert r.headers["content-length"] == str(last - first + 1)
    for header in ("bytes=20000-", "bytes=9-3", "bytes=-0", "bytes=0-1,5-6", "pages=1-2"):
        r = glance.get(url, headers={"Range": header})
        assert r.status_code == 416, header
        assert r.headers["content-range"] == f"bytes */{len(data)}"
    head = glance.request("HEAD", url)
    assert head.status_code == 200 and head.headers["content-length"] == str(len(data))


def test_queued_image_download_is_204(glance):
    image = glance.create()
    r = glance.get(f"/v2/images/{image['id']}/file")
    assert r.status_code == 204 and r.content == b""


def test_qcow2_virtual_size_comes_from_its_header(glance):
    header = b"QFI\xfb" + (3).to_bytes(4, "big") + bytes(16) + (1 << 30).to_bytes(8, "big")
    image = glance.create_active(header + bytes(1000), disk_format="qcow2")
    assert image["virtual_size"] == 1 << 30
    assert image["size"] == len(header) + 1000
    # Regression: a garbage "qcow2" header once overflowed the database column (500).
    garbage = b"QFI\xfb" + b"\xff" * 4 + bytes(8) + b"\xff" * 48  # no backing file
    image = glance.create_active(garbage, disk_format="qcow2")
    assert image["status"] == "active" and image["virtual_size"] is None


def test_register_image_in_process(cloud):
    from pocketstack.common.context import RequestContext
    from pocketstack.image import api

    ctx = RequestContext.admin()
    ctx.project_id = cloud.cloud.ids["admin_project_id"]
    chunks = [b"a" * 1000, b"b" * 1000]
    image = api.register_image(ctx, unique("demo"), iter(chunks), disk_format="raw",
                               visibility="public", os_distro="cirros")
    assert image["status"] == "active" and image["size"] == 2000
    assert image["visibility"] == "public" and image["os_distro"] == "cirros"
    assert image["checksum"] == hashlib.md5(b"".join(chunks)).hexdigest()
    assert image["owner"] == ctx.project_id

    def broken():
        yield b"x" * 10
        raise OSError("source went away")

    name = unique("broken")
    with pytest.raises(OSError):
        api.register_image(ctx, name, broken())
    assert api.list_images(ctx, [("name", name)]).images == []
