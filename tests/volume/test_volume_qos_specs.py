"""Block storage: /qos-specs as cinder's qos_specs_manage answers it - CRUD, keys,
associations with volume types and the admin-only policy - through openstacksdk's
block_storage proxy and keystoneauth."""
from __future__ import annotations

import uuid

import pytest
from openstack import exceptions as sdk_exc

from volume_helpers import Raw


@pytest.fixture
def admin_raw(cloud):
    return Raw(cloud.session())


def _name(prefix="qos"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_qos_specs_crud_through_sdk(cloud, admin_raw):
    conn = cloud.sdk()
    name = _name()
    spec = conn.block_storage.create_qos_spec(name=name, consumer="front-end",
                                              total_iops_sec="1000")
    assert (spec.name, spec.consumer, spec.specs) == (name, "front-end",
                                                      {"total_iops_sec": "1000"})
    shown = admin_raw("GET", f"/qos-specs/{spec.id}")[1]
    assert shown["qos_specs"] == {"id": spec.id, "name": name, "consumer": "front-end",
                                  "specs": {"total_iops_sec": "1000"}}
    assert [link["rel"] for link in shown["links"]] == ["self", "bookmark"]
    assert spec.id in [q.id for q in conn.block_storage.qos_specs()]
    # update merges keys; consumer is its own field
    status, body, _ = admin_raw("PUT", f"/qos-specs/{spec.id}", {"qos_specs": {
        "read_bytes_sec": "2048", "consumer": "both"}})
    assert status == 200 and body == {"qos_specs": {"read_bytes_sec": "2048",
                                                    "consumer": "both"}}
    got = conn.block_storage.get_qos_spec(spec.id)
    assert got.consumer == "both"
    assert got.specs == {"total_iops_sec": "1000", "read_bytes_sec": "2048"}
    conn.block_storage.delete_qos_spec_metadata(spec.id, ["read_bytes_sec"])
    assert conn.block_storage.get_qos_spec(spec.id).specs == {"total_iops_sec": "1000"}
    status, body, _ = admin_raw("PUT", f"/qos-specs/{spec.id}/delete_keys",
                                {"keys": ["nope"]})
    assert status == 404 and body["itemNotFound"]["message"] == (
        f"QoS spec {spec.id} has no spec with key nope.")
    # a second spec with the name is a conflict
    status, body, _ = admin_raw("POST", "/qos-specs", {"qos_specs": {"name": name}})
    assert status == 409 and body["conflictingRequest"]["code"] == 409
    conn.block_storage.delete_qos_spec(spec.id, ignore_missing=False)
    status, body, _ = admin_raw("GET", f"/qos-specs/{spec.id}")
    assert status == 404 and body["itemNotFound"]["message"] == f"No such QoS spec {spec.id}."


def test_qos_specs_associations(cloud, admin_raw):
    conn = cloud.sdk()
    spec = conn.block_storage.create_qos_spec(name=_name(), write_iops_sec="10")
    other = conn.block_storage.create_qos_spec(name=_name())
    vtype = conn.block_storage.create_type(name=_name("type"))
    conn.block_storage.associate_qos_spec(spec.id, vtype.id)
    assert admin_raw("GET", f"/types/{vtype.id}")[1]["volume_type"]["qos_specs_id"] == spec.id
    body = admin_raw("GET", f"/qos-specs/{spec.id}/associations")[1]
    assert body == {"qos_associations": [{"association_type": "volume_type",
                                          "name": vtype.name, "id": vtype.id}]}
    # again with the same spec is fine; another spec is refused
    assert admin_raw("GET", f"/qos-specs/{spec.id}/associate?vol_type_id={vtype.id}")[0] \
        == 202
    status, body, _ = admin_raw("GET",
                                f"/qos-specs/{other.id}/associate?vol_type_id={vtype.id}")
    assert status == 400 and "already associated with another qos specs" in \
        body["badRequest"]["message"]
    status, body, _ = admin_raw("GET", f"/qos-specs/{spec.id}/associate")
    assert status == 400 and body["badRequest"]["message"] == \
        "Volume Type id must not be None."
    status, body, _ = admin_raw("GET", f"/qos-specs/{spec.id}/associate?vol_type_id=nope")
    assert status == 404 and "itemNotFound" in body
    # a spec in use is not deleted without force
    status, body, _ = admin_raw("DELETE", f"/qos-specs/{spec.id}")
    assert status == 400 and body["badRequest"]["message"] == "Qos specs still in use."
    conn.block_storage.disassociate_qos_spec(spec.id, vtype.id)
    assert admin_raw("GET", f"/qos-specs/{spec.id}/associations")[1] == {
        "qos_associations": []}
    conn.block_storage.associate_qos_spec(spec.id, vtype.id)
    conn.block_storage.disassociate_all_qos_spec(spec.id)
    assert admin_raw("GET", f"/types/{vtype.id}")[1]["volume_type"]["qos_specs_id"] is None
    conn.block_storage.associate_qos_spec(spec.id, vtype.id)
    assert admin_raw("DELETE", f"/qos-specs/{spec.id}?force=true")[0] == 202
    assert admin_raw("GET", f"/types/{vtype.id}")[1]["volume_type"]["qos_specs_id"] is None
    conn.block_storage.delete_qos_spec(other.id)
    conn.block_storage.delete_type(vtype.id)


def test_qos_specs_errors_and_policy(cloud, admin_raw):
    for bad in ({"qos_specs": {}}, {"qos_specs": {"name": "  "}}, {"qos": {"name": "x"}},
                {"qos_specs": {"name": _name(), "consumer": "nobody"}},
                {"qos_specs": {"name": _name(), "k": {"nested": 1}}}, []):
        status, body, _ = admin_raw("POST", "/qos-specs", bad)
        assert status == 400 and body["badRequest"]["code"] == 400, (bad, body)
    spec_id = admin_raw("POST", "/qos-specs", {"qos_specs": {"name": _name()}})[1][
        "qos_specs"]["id"]
    for bad in ({"qos_specs": {"bad*key": "1"}}, {"qos_specs": {"k": 5}}, {},
                {"qos_specs": {"consumer": "x"}}):
        status, body, _ = admin_raw("PUT", f"/qos-specs/{spec_id}", bad)
        assert status == 400 and "badRequest" in body, (bad, body)
    assert admin_raw("PUT", f"/qos-specs/{spec_id}/delete_keys", {"keys": "k"})[0] == 400
    assert admin_raw("DELETE", f"/qos-specs/{spec_id}?force=maybe")[0] == 400
    assert admin_raw("GET", "/qos-specs/nope/associations")[0] == 404
    # members may not see or change qos specs
    member = Raw(cloud.user_session(cloud.make_user(roles=("member",))))
    for method, path, body in (("GET", "/qos-specs", None),
                               ("GET", f"/qos-specs/{spec_id}", None),
                               ("POST", "/qos-specs", {"qos_specs": {"name": _name()}}),
                               ("DELETE", f"/qos-specs/{spec_id}", None)):
        status, answer, _ = member(method, path, body)
        assert status == 403 and answer["forbidden"]["code"] == 403, (method, path)
    with pytest.raises(sdk_exc.ForbiddenException):
        list(cloud.user_sdk(cloud.make_user(roles=("member",))).block_storage.qos_specs())
    assert admin_raw("DELETE", f"/qos-specs/{spec_id}")[0] == 202
