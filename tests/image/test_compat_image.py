"""Image: what python-glanceclient and glance's own API tests hit."""
from __future__ import annotations

import io
import uuid

import httpx
import pytest


@pytest.fixture(scope="module")
def glanceclient_for(cloud):
    from glanceclient import Client

    def make(session):
        return Client("2", session=session, region_name="RegionOne")

    return make


@pytest.fixture(scope="module")
def owner(cloud, glanceclient_for):
    user = cloud.make_user()
    return glanceclient_for(cloud.user_session(user))


def _image(gc, data=b"image bytes", **attrs):
    image = gc.images.create(name=f"compat-{uuid.uuid4().hex[:8]}", disk_format="raw",
                             container_format="bare", **attrs)
    if data is not None:
        gc.images.upload(image["id"], io.BytesIO(data))
    return gc.images.get(image["id"])


def test_glanceclient_reads_error_responses(cloud, glanceclient_for):
    """It sends ``Accept: */*`` and parses glance's HTML error page: no AttributeError."""
    from glanceclient import exc

    gc = glanceclient_for(cloud.session())
    missing = str(uuid.uuid4())
    with pytest.raises(exc.HTTPNotFound) as caught:
        gc.images.get(missing)
    assert missing in str(caught.value)
    protected = _image(gc, protected=True)
    with pytest.raises(exc.HTTPForbidden) as caught:
        gc.images.delete(protected["id"])
    assert "protected" in str(caught.value)
    gc.images.update(protected["id"], protected=False)
    gc.images.delete(protected["id"])


def test_error_body_follows_the_accept_header(cloud):
    token = cloud.session().get_token()
    url = f"{cloud.url}/image/v2/images/{uuid.uuid4()}"
    as_json = httpx.get(url, headers={"X-Auth-Token": token, "Accept": "application/json"})
    assert as_json.status_code == 404
    assert as_json.headers["content-type"] == "application/json"
    assert as_json.json()["code"] == "404 Not Found"
    for accept in ("*/*", None):
        headers = {"X-Auth-Token": token, **({"Accept": accept} if accept else {})}
        page = httpx.get(url, headers=headers)
        assert page.status_code == 404
        assert page.headers["content-type"] == "text/html"
        assert "<h1>404 Not Found</h1>" in page.text
    plain = httpx.get(url, headers={"X-Auth-Token": token, "Accept": "text/plain"})
    assert plain.headers["content-type"] == "text/plain"
    assert plain.text.startswith("404 Not Found\n\n")


def test_empty_image_id_is_404(cloud, glanceclient_for):
    from glanceclient import exc

    gc = glanceclient_for(cloud.session())
    with pytest.raises(exc.HTTPNotFound):
        gc.images.get("")
    with pytest.raises(exc.HTTPNotFound):
        gc.images.delete("")
    token = cloud.session().get_token()
    r = httpx.delete(f"{cloud.url}/image/v2/images", headers={"X-Auth-Token": token})
    assert r.status_code == 405


def test_owner_deactivates_and_reactivates_its_image(owner):
    image = _image(owner)
    owner.images.deactivate(image["id"])
    assert owner.images.get(image["id"])["status"] == "deactivated"
    owner.images.reactivate(image["id"])
    assert owner.images.get(image["id"])["status"] == "active"


def test_list_filter_size_is_exact(owner):
    small, large = _image(owner, b"x" * 7), _image(owner, b"y" * 9)
    listed = {i["id"] for i in owner.images.list(filters={"size": 7})}
    assert small["id"] in listed and large["id"] not in listed
    with pytest.raises(Exception) as caught:
        list(owner.images.list(filters={"size": "seven"}))
    assert getattr(caught.value, "code", None) == 400


def _queued(gc, disk_format):
    return gc.images.create(name=f"compat-{uuid.uuid4().hex[:8]}", disk_format=disk_format,
                            container_format="bare")


@pytest.mark.parametrize("disk_format, data, reason", [
    ("qcow2", b"\x13random bytes, not a disk image" * 100, "looks like raw"),
    ("raw", None, "looks like qcow2"),                        # a qcow2 declared raw
    ("vmdk", b"\0" * 4096, "looks like raw"),
    ("qcow2", "backing", "backing file"),
])
def test_upload_must_match_the_disk_format(owner, disk_format, data, reason):
    """glance 2024+: the upload is refused (400), the image stays queued."""
    import struct

    from glanceclient import exc

    from pocketstack.common.image_formats import qcow2_header

    if data is None:
        data = qcow2_header(1 << 30)
    elif data == "backing":
        header = bytearray(qcow2_header(1 << 30))
        header[8:16] = struct.pack(">Q", 512)  # backing file name at offset 512
        data = bytes(header) + b"/etc/passwd"
    image = _queued(owner, disk_format)
    with pytest.raises(exc.HTTPBadRequest) as caught:
        owner.images.upload(image["id"], io.BytesIO(data))
    assert reason in str(caught.value)
    assert owner.images.get(image["id"])["status"] == "queued"
    owner.images.delete(image["id"])


def test_uploads_in_their_format_are_accepted(owner):
    from pocketstack.common.image_formats import qcow2_header

    qcow2 = _queued(owner, "qcow2")
    owner.images.upload(qcow2["id"], io.BytesIO(qcow2_header(1 << 30) + b"\0" * 1000))
    shown = owner.images.get(qcow2["id"])
    assert (shown["status"], shown["virtual_size"]) == ("active", 1 << 30)
    iso = bytearray(64 * 1024)
    iso[0x8001:0x8006] = b"CD001"
    for disk_format in ("iso", "raw"):  # an ISO is also a raw disk
        image = _queued(owner, disk_format)
        owner.images.upload(image["id"], io.BytesIO(bytes(iso)))
        assert owner.images.get(image["id"])["status"] == "active"
    kernel = _queued(owner, "aki")  # not inspected, as in glance
    owner.images.upload(kernel["id"], io.BytesIO(b"any kernel bytes"))
    assert owner.images.get(kernel["id"])["status"] == "active"


def test_import_must_match_the_disk_format(owner):
    from glanceclient import exc

    image = _queued(owner, "qcow2")
    owner.images.stage(image["id"], io.BytesIO(b"\x13not qcow2" * 100))
    with pytest.raises(exc.HTTPBadRequest):
        owner.images.image_import(image["id"], method="glance-direct")
    assert owner.images.get(image["id"])["status"] == "queued"


def test_cli_metadef_namespaces(cloud):
    """`openstack image metadef namespace list/show` over glance's seeded data."""
    listed = cloud.cli("image", "metadef", "namespace", "list", "-f", "json")
    names = [row.get("namespace") or row.get("Namespace") for row in listed]
    assert "OS::Compute::Libvirt" in names and len(names) == 33
    shown = cloud.cli("image", "metadef", "namespace", "show", "OS::Compute::Libvirt",
                      "-f", "json")
    assert shown["protected"] is True and shown["visibility"] == "public"
    assert "OS::Glance::Image" in str(shown["resource_type_associations"])


def test_glanceclient_tasks_and_image_tasks_version_gate(cloud, glanceclient_for):
    """glanceclient's task calls; /v2/images/{id}/tasks is gated by v2.12, which glance
    lists only with several stores: with one store glanceclient refuses, as against
    glance."""
    from glanceclient import exc

    gc = glanceclient_for(cloud.session())
    image = gc.images.create(name=f"compat-{uuid.uuid4().hex[:8]}", disk_format="raw",
                             container_format="bare")
    gc.images.stage(image["id"], io.BytesIO(b"staged"))
    gc.images.image_import(image["id"], method="glance-direct")
    tasks = list(gc.tasks.list())
    mine = [t for t in tasks if gc.tasks.get(t["id"]).get("image_id") == image["id"]]
    assert len(mine) == 1 and mine[0]["status"] == "success"
    with pytest.raises(exc.HTTPNotImplemented):
        gc.images.get_associated_image_tasks(image["id"])
