"""Visibility, members and activation: glance's rules for who sees and does what."""
from image_helpers import assert_error, unique


def _listed(caller, **params):
    params.setdefault("limit", 1000)
    return {i["id"] for i in caller.get("/v2/images", params=params).json()["images"]}


def test_only_admin_publicizes(glance, alice):
    r = alice.post("/v2/images", json={"name": unique(), "visibility": "public"})
    assert_error(r, 403, "publicize_image")
    image = alice.create()
    r = alice.patch(image["id"], [{"op": "replace", "path": "/visibility", "value": "public"}])
    assert_error(r, 403, "publicize_image")
    assert alice.show(image["id"])["visibility"] == "shared"
    r = glance.patch(image["id"], [{"op": "replace", "path": "/visibility", "value": "public"}])
    assert r.json()["visibility"] == "public"


def test_public_images_are_seen_by_all_but_changed_by_owner_only(glance, alice, bob):
    image = glance.create_active(visibility="public")
    assert image["id"] in _listed(bob)
    assert image["id"] in _listed(bob, visibility="public")
    assert bob.get(f"/v2/images/{image['id']}/file").status_code == 200
    r = bob.patch(image["id"], [{"op": "replace", "path": "/name", "value": "mine"}])
    assert_error(r, 403)
    assert_error(bob.delete(f"/v2/images/{image['id']}"), 403)
    assert_error(bob.put(f"/v2/images/{image['id']}/tags/mine"), 403)


def test_community_images_found_by_id_not_listed_by_default(alice, bob):
    image = alice.create_active(visibility="community")
    assert bob.show(image["id"])["visibility"] == "community"
    assert image["id"] not in _listed(bob)
    assert image["id"] in _listed(bob, visibility="community")
    assert image["id"] in _listed(alice)  # the owner lists it


def test_private_and_shared_images_stay_in_their_project(alice, bob):
    private = alice.create(visibility="private")
    shared = alice.create()
    assert {private["id"], shared["id"]} <= _listed(alice)
    assert _listed(alice, visibility="private") >= {private["id"]}
    assert shared["id"] not in _listed(alice, visibility="private")
    assert not {private["id"], shared["id"]} & _listed(bob, visibility="all")
    assert_error(bob.get(f"/v2/images/{shared['id']}"), 404)


def test_sharing_with_a_project_accept_and_reject(alice, bob, as_user):
    carol = as_user()
    image = alice.create_active(b"shared bytes")
    url = f"/v2/images/{image['id']}/members"
    r = alice.post(url, json={"member": bob.project_id})
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "pending" and r.json()["member_id"] == bob.project_id
    assert_error(alice.post(url, json={"member": bob.project_id}), 409, "duplicated")
    assert alice.post(url, json={"member": carol.project_id}).status_code == 200

    # Pending: bob can fetch it by id (to decide) but does not list it.
    assert bob.show(image["id"])["id"] == image["id"]
    assert image["id"] not in _listed(bob)
    assert image["id"] in _listed(bob, member_status="pending")
    # Only the member decides; the owner cannot accept for it.
    assert_error(alice.put(f"{url}/{bob.project_id}", json={"status": "accepted"}), 403)
    assert_error(bob.put(f"{url}/{bob.project_id}", json={"status": "maybe"}), 400)
    r = bob.put(f"{url}/{bob.project_id}", json={"status": "accepted"})
    assert r.status_code == 200 and r.json()["status"] == "accepted"
    assert image["id"] in _listed(bob)
    assert image["id"] in _listed(bob, visibility="shared")
    assert bob.get(f"/v2/images/{image['id']}/file").content == b"shared bytes"

    # The owner sees every member; a member sees only itself.
    assert {m["member_id"] for m in alice.get(url).json()["members"]} == {
        bob.project_id, carol.project_id}
    assert [m["member_id"] for m in bob.get(url).json()["members"]] == [bob.project_id]
    assert_error(bob.get(f"{url}/{carol.project_id}"), 404)
    assert bob.get(f"{url}/{bob.project_id}").json()["status"] == "accepted"
    # Members cannot share further, nor change or delete the image.
    assert_error(bob.post(url, json={"member": unique("p")}), 403)
    assert_error(bob.delete(f"{url}/{carol.project_id}"), 403)
    assert_error(bob.patch(image["id"], [{"op": "replace", "path": "/name",
                                          "value": "x"}]), 403)

    r = bob.put(f"{url}/{bob.project_id}", json={"status": "rejected"})
    assert r.json()["status"] == "rejected"
    assert image["id"] not in _listed(bob)
    assert alice.delete(f"{url}/{bob.project_id}").status_code == 204
    assert_error(bob.get(f"/v2/images/{image['id']}"), 404)
    assert_error(alice.delete(f"{url}/{bob.project_id}"), 404)


def test_members_only_for_shared_images(alice, bob):
    image = alice.create(visibility="private")
    url = f"/v2/images/{image['id']}/members"
    assert_error(alice.post(url, json={"member": bob.project_id}), 403, "Only shared images")
    assert_error(alice.get(url), 403, "Only shared images")
    shared = alice.create()
    surl = f"/v2/images/{shared['id']}/members"
    assert_error(alice.post(surl, json={}), 400, "Member")
    assert_error(alice.post(surl, json={"member": 5}), 400)
    assert_error(alice.post(surl, content=b"nope"), 400)


def test_deactivate_and_reactivate_by_owner_or_admin(glance, alice, bob):
    # Glance's default policy lets the owning project's members do it too.
    image = alice.create_active(b"some bytes")
    url = f"/v2/images/{image['id']}"
    assert_error(bob.post(f"{url}/actions/deactivate"), 404)  # cannot even see it
    assert alice.post(f"{url}/actions/deactivate").status_code == 204
    assert glance.post(f"{url}/actions/deactivate").status_code == 204  # no-op
    assert alice.show(image["id"])["status"] == "deactivated"
    assert_error(alice.get(f"{url}/file"), 403, "deactivated")
    assert glance.get(f"{url}/file").content == b"some bytes"
    assert alice.post(f"{url}/actions/reactivate").status_code == 204
    assert alice.get(f"{url}/file").content == b"some bytes"
    assert glance.post(f"{url}/actions/deactivate").status_code == 204
    assert glance.post(f"{url}/actions/reactivate").status_code == 204

    queued = alice.create()
    assert_error(glance.post(f"/v2/images/{queued['id']}/actions/deactivate"), 403,
                 "status 'queued'")


def test_owner_changes_are_for_admins(glance, alice, bob):
    image = alice.create()
    r = alice.patch(image["id"], [{"op": "replace", "path": "/owner", "value": bob.project_id}])
    assert_error(r, 403, "Owner")
    assert_error(alice.post("/v2/images", json={"owner": bob.project_id}), 403)
    r = glance.patch(image["id"], [{"op": "replace", "path": "/owner", "value": bob.project_id}])
    assert r.status_code == 200 and r.json()["owner"] == bob.project_id
    assert bob.show(image["id"])["owner"] == bob.project_id
    assert_error(alice.get(f"/v2/images/{image['id']}"), 404)


def test_readers_see_but_do_not_change(alice, as_user):
    reader = as_user(roles=("reader",))
    image = alice.create_active(visibility="community")
    assert reader.show(image["id"])["id"] == image["id"]
    assert_error(reader.post("/v2/images", json={"name": unique()}), 403)
    assert_error(reader.get(f"/v2/images/{image['id']}/file"), 403)
