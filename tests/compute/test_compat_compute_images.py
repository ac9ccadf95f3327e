"""Nova's /images proxy below 2.36 (its metadata below 2.39) through
openstacksdk's compute proxy, which speaks 2.1 for it; glance keeps deciding who may do
what (a member cannot delete another project's image)."""
import uuid

import pytest

from compute_rest import Compute


@pytest.fixture(scope="module")
def conn(cloud, member):
    return cloud.user_sdk(member)


@pytest.fixture
def own_image(conn):
    image = conn.image.create_image(name=f"ccimg-{uuid.uuid4().hex[:6]}", disk_format="raw",
                                    container_format="bare", min_ram=64,
                                    architecture="x86_64", auto_disk_config="true")
    yield image
    conn.image.delete_image(image, ignore_missing=True)


def test_list_show_detail(conn, own_image, image_id):
    listed = {i.id: i for i in conn.compute.images(details=False)}
    assert own_image.id in listed and image_id in listed
    detailed = {i.id: i for i in conn.compute.images(details=True)}
    mine = detailed[own_image.id]
    assert (mine.name, mine.min_ram, mine.status, mine.progress) == (
        own_image.name, 64, "SAVING", 25)  # queued: no data yet
    shown = conn.compute.get_image(image_id)
    assert (shown.status, shown.progress, shown.size) == (
        "ACTIVE", 100, conn.image.get_image(image_id).size)
    only = list(conn.compute.images(name=own_image.name))
    assert [i.id for i in only] == [own_image.id]


def test_show_shape(api, own_image, cloud):
    old = Compute(cloud, api.s, version="2.35")
    image = old.get(f"/images/{own_image.id}").json()["image"]
    assert set(image) == {"id", "name", "minRam", "minDisk", "metadata", "created", "updated",
                          "status", "progress", "OS-EXT-IMG-SIZE:size", "links",
                          "OS-DCF:diskConfig"}
    # openstacksdk's create_image adds its owner_specified.* properties
    assert {k: v for k, v in image["metadata"].items() if "owner_specified" not in k} == {
        "architecture": "x86_64", "auto_disk_config": "true"}
    assert image["OS-DCF:diskConfig"] == "AUTO"
    assert image["created"].endswith("Z") and "." not in image["created"]
    assert [link["rel"] for link in image["links"]] == ["self", "bookmark", "alternate"]
    r = old.get("/images?limit=1")
    assert len(r.json()["images"]) == 1 and r.json()["images_links"][0]["rel"] == "next"
    assert old.get(f"/images/{uuid.uuid4()}").status_code == 404


def test_metadata_read_and_update(conn, own_image):
    image = conn.compute.get_image_metadata(own_image.id)
    assert {"architecture": "x86_64", "auto_disk_config": "true"}.items() <= \
        image.metadata.items()
    image = conn.compute.set_image_metadata(own_image.id, os_distro="cirros")
    assert image.metadata["os_distro"] == "cirros"
    assert conn.image.get_image(own_image.id).os_distro == "cirros"
    conn.compute.delete_image_metadata(own_image.id, ["architecture"])
    assert "architecture" not in conn.compute.get_image_metadata(own_image.id).metadata


def test_metadata_item_and_replace(api, cloud, own_image):
    old = Compute(cloud, api.s, version="2.38")
    base = f"/images/{own_image.id}/metadata"
    assert old.get(f"{base}/architecture").json() == {"meta": {"architecture": "x86_64"}}
    assert old.get(f"{base}/nope").status_code == 404
    r = old.req("PUT", f"{base}/hw_disk_bus", json={"meta": {"hw_disk_bus": "scsi"}})
    assert r.status_code == 200 and r.json() == {"meta": {"hw_disk_bus": "scsi"}}
    r = old.req("PUT", f"{base}/hw_disk_bus", json={"meta": {"other": "x"}})
    assert r.status_code == 400 and "mismatch" in r.text
    r = old.req("PUT", base, json={"metadata": {"only": "this"}})
    assert r.status_code == 200 and r.json() == {"metadata": {"only": "this"}}
    assert old.get(base).json() == {"metadata": {"only": "this"}}
    assert old.req("PUT", base, json={"metadata": {"k": 1}}).status_code == 400
    assert old.delete(f"{base}/nope").status_code == 404
    assert old.delete(f"{base}/only").status_code == 204
    assert old.get(base).json() == {"metadata": {}}
    assert old.get(f"/images/{uuid.uuid4()}/metadata").status_code == 404


def test_delete_and_refusals(api, cloud, conn, image_id):
    old = Compute(cloud, api.s, version="2.35")
    image = conn.image.create_image(name=f"ccimg-{uuid.uuid4().hex[:6]}", disk_format="raw",
                                    container_format="bare")
    conn.compute.delete_image(image.id)
    assert conn.image.find_image(image.id) is None
    assert old.delete(f"/images/{image.id}").status_code == 404
    # the admin's public image: glance refuses the member, nova answers 403
    r = old.delete(f"/images/{image_id}")
    assert r.status_code == 403 and "forbidden" in r.json(), r.text
    r = old.req("PUT", f"/images/{image_id}/metadata", json={"metadata": {"a": "b"}})
    assert r.status_code == 403, r.text


@pytest.mark.parametrize("version,path", [("2.36", "/images"), ("2.36", "/images/detail"),
                                          ("2.36", "/images/{id}"),
                                          ("2.39", "/images/{id}/metadata")])
def test_gone_from_2_36(api, image_id, version, path):
    r = api.get(path.format(id=image_id), headers={"OpenStack-API-Version":
                                                   f"compute {version}"})
    assert r.status_code == 404 and "itemNotFound" in r.json(), r.text
