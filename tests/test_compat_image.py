"""issue 10, image: what python-glanceclient and glance's own API tests hit."""
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
