"""GET /v2/images: glance's filters, sorting and marker pagination with next links."""
import time

import pytest

from image_helpers import assert_error


@pytest.fixture(scope="module")
def catalog(as_user):
    """A project with five images of known names, sizes, tags, properties and times."""
    owner = as_user()
    images = {}
    for i, name in enumerate(["delta", "alpha", "echo", "charlie", "bravo"]):
        image = owner.create(name=name, min_ram=i, os_distro="cirros" if i % 2 else "debian",
                             tags=["even"] if i % 2 == 0 else ["odd", "x86"])
        if name != "echo":
            assert owner.upload(image["id"], b"d" * (100 * (i + 1))).status_code == 204
        images[name] = owner.show(image["id"])
        time.sleep(0.01)  # distinct created_at
    hidden = owner.create(name="hidden", os_hidden=True)
    owner.images, owner.hidden = images, hidden
    return owner


def names(caller, **params):
    params.setdefault("owner", caller.project_id)
    r = caller.get("/v2/images", params=params)
    assert r.status_code == 200, r.text
    return [i["name"] for i in r.json()["images"]]


def test_default_order_is_newest_first_without_hidden(catalog):
    assert names(catalog) == ["bravo", "charlie", "echo", "alpha", "delta"]
    assert names(catalog, os_hidden="true") == ["hidden"]


def test_filters(catalog):
    assert names(catalog, name="alpha") == ["alpha"]
    assert sorted(names(catalog, name='in:alpha,"echo"')) == ["alpha", "echo"]
    assert names(catalog, status="queued") == ["echo"]
    assert names(catalog, tag="odd") == ["charlie", "alpha"]
    assert names(catalog, tag=["odd", "x86"]) == ["charlie", "alpha"]
    assert names(catalog, tag=["odd", "even"]) == []
    assert names(catalog, size_min=200, size_max=400) == ["charlie", "alpha"]
    assert names(catalog, os_distro="cirros") == ["charlie", "alpha"]
    assert names(catalog, min_ram=2) == ["echo"]
    assert names(catalog, visibility="shared") == ["bravo", "charlie", "echo", "alpha",
                                                   "delta"]
    assert names(catalog, visibility="public") == []
    checksum = catalog.images["alpha"]["checksum"]
    assert names(catalog, checksum=checksum) == ["alpha"]


def test_time_filters(catalog):
    assert len(names(catalog, created_at="gt:2000-01-01T00:00:00Z")) == 5
    assert names(catalog, created_at="lt:2000-01-01T00:00:00+00:00") == []
    assert names(catalog, updated_at="lte:2000-01-01T00:00:00Z") == []
    assert len(names(catalog, updated_at="neq:2000-01-01T00:00:00Z")) == 5
    assert names(catalog, created_at="2000-01-01T00:00:00Z") == []  # bare time: equality
    assert_error(catalog.get("/v2/images", params={"created_at": "gt:yesterday"}), 400,
                 "ISO 8601")
    assert_error(catalog.get("/v2/images", params={"created_at": "about:2020-01-01"}), 400,
                 "operator")


def test_sorting(catalog):
    assert names(catalog, sort_key="name", sort_dir="asc") == [
        "alpha", "bravo", "charlie", "delta", "echo"]
    assert names(catalog, sort="name:desc") == ["echo", "delta", "charlie", "bravo", "alpha"]
    # echo has no data (size null sorts as 0), then by size descending
    assert names(catalog, sort="size:asc,name:asc") == [
        "echo", "delta", "alpha", "charlie", "bravo"]
    assert names(catalog, sort_key=["status", "name"], sort_dir=["asc", "desc"]) == [
        "delta", "charlie", "bravo", "alpha", "echo"]


def test_pagination_follows_next_links(catalog):
    seen, url, params = [], "/v2/images", {"owner": catalog.project_id, "limit": 2,
                                           "sort": "name:asc"}
    pages = 0
    while url:
        body = catalog.get(url, params=params).json()
        params = None
        seen += [i["name"] for i in body["images"]]
        url = body.get("next")
        if url:
            assert url.startswith("/v2/images?") and "marker=" in url
        pages += 1
    assert seen == ["alpha", "bravo", "charlie", "delta", "echo"]
    assert pages == 3
    assert body["first"].startswith("/v2/images?")
    assert body["schema"] == "/v2/schemas/images"


def test_sdk_pagination(cloud, catalog):
    conn = cloud.user_sdk(catalog.user)
    listed = [i.name for i in conn.image.images(owner=catalog.project_id, limit=2,
                                                 sort="name:asc")]
    assert listed == ["alpha", "bravo", "charlie", "delta", "echo"]


def test_bad_list_parameters_are_400(catalog):
    for params, fragment in (({"limit": "many"}, "integer"), ({"limit": -1}, "positive"),
                             ({"sort_key": "owner"}, "Invalid sort key"),
                             ({"sort_dir": "up"}, "sort direction"),
                             ({"sort": "name", "sort_key": "name"}, "combined"),
                             ({"visibility": "secret"}, "visibility"),
                             ({"member_status": "maybe"}, "status"),
                             ({"size_min": "big"}, "non-numeric"),
                             ({"os_hidden": "perhaps"}, "os_hidden"),
                             ({"protected": "yes"}, "protected"),
                             ({"marker": "00000000-0000-0000-0000-000000000000"}, "Marker"),
                             ({"changes-since": "2020-01-01"}, "changes-since"),
                             ({"name": "neq:alpha"}, "operator")):
        assert_error(catalog.get("/v2/images", params=params), 400, fragment)
