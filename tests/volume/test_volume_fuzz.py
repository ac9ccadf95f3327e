"""Whatever a client sends, the volume API answers with a result or a 4xx in cinder's
format — never a 500 (the bad-input rule), for creates, updates, actions,
attachments, quota sets and list queries."""
from __future__ import annotations

import json
import urllib.parse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from volume_helpers import EP, create, wait_status

VOLUME_KEYS = ["size", "name", "description", "metadata", "volume_type", "imageRef",
               "snapshot_id", "source_volid", "availability_zone", "multiattach",
               "backup_id", "display_name", ""]
ACTIONS = ["os-extend", "os-reset_status", "os-set_bootable", "os-update_readonly_flag",
           "os-retype", "os-reserve", "os-unreserve", "os-begin_detaching",
           "os-roll_detaching", "os-attach", "os-detach", "os-initialize_connection",
           "os-terminate_connection", "os-volume_upload_image", "os-force_delete", "x"]
ARG_KEYS = ["new_size", "status", "bootable", "readonly", "new_type", "connector",
            "instance_uuid", "mountpoint", "mode", "attachment_id", "image_name",
            "disk_format", "host_name", "attach_status"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
    | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                  max_size=3),
    max_leaves=5)
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def session(cloud):
    user = cloud.make_user()
    return cloud.user_session(user)


def _send(session, method, path, body=None, raw=None, version="3.60"):
    kwargs = {"data": raw, "headers": {"Content-Type": "application/json",
                                       "OpenStack-API-Version": f"volume {version}"}} \
        if raw is not None else {"json": body,
                                 "headers": {"OpenStack-API-Version": f"volume {version}"}}
    resp = session.request(path, method, endpoint_filter=EP, raise_exc=False, **kwargs)
    assert resp.status_code < 500, f"{method} {path} {body!r}: {resp.status_code} {resp.text}"
    if resp.status_code >= 400:
        fault = next(iter(resp.json().values()))
        assert fault["code"] == resp.status_code
    return resp


@pytest.fixture(scope="module")
def volume_id(session):
    from volume_helpers import Raw

    raw = Raw(session)
    return wait_status(raw, create(raw, name="fuzz")["id"], "available")["id"]


@FUZZ
@given(body=st.dictionaries(st.sampled_from(VOLUME_KEYS) | st.text(max_size=6), json_values,
                            max_size=4),
       wrap=st.booleans())
def test_create_and_update_bodies(session, volume_id, body, wrap):
    payload = {"volume": body} if wrap else body
    resp = _send(session, "POST", "/volumes", payload)
    if resp.status_code == 202:
        _send(session, "DELETE", f"/volumes/{resp.json()['volume']['id']}")
    _send(session, "PUT", f"/volumes/{volume_id}", payload)


@FUZZ
@given(action=st.sampled_from(ACTIONS),
       args=json_values | st.dictionaries(st.sampled_from(ARG_KEYS), json_values, max_size=3))
def test_actions(session, volume_id, action, args):
    if action in ("os-force_delete", "os-volume_upload_image"):
        args = {"image_name": None} if action == "os-volume_upload_image" else args
    _send(session, "POST", f"/volumes/{volume_id}/action", {action: args})
    if action != "os-force_delete":
        # put the volume back for the next example
        shown = _send(session, "GET", f"/volumes/{volume_id}").json()["volume"]
        for attachment in shown["attachments"]:
            _send(session, "POST", f"/volumes/{volume_id}/action",
                  {"os-detach": {"attachment_id": attachment["attachment_id"]}})
        if shown["status"] in ("attaching", "reserved"):
            _send(session, "POST", f"/volumes/{volume_id}/action", {"os-unreserve": None})


@FUZZ
@given(body=json_values | st.dictionaries(
    st.sampled_from(["attachment", "quota_set", "snapshot", "metadata"]),
    json_values | st.dictionaries(st.sampled_from(
        ["volume_uuid", "instance_uuid", "connector", "mode", "volumes", "gigabytes",
         "volume_id", "force", "name"]), json_values, max_size=3), max_size=2))
def test_other_bodies(session, cloud, body):
    for method, path in (("POST", "/attachments"), ("PUT", "/os-quota-sets/x"),
                         ("POST", "/snapshots"), ("POST", "/types")):
        resp = _send(session, method, path, body)
        if method == "POST" and path == "/snapshots" and resp.status_code == 202:
            _send(session, "DELETE", f"/snapshots/{resp.json()['snapshot']['id']}")
        if path == "/attachments" and resp.status_code == 200:
            _send(session, "DELETE", f"/attachments/{resp.json()['attachment']['id']}")


@FUZZ
@given(query=st.dictionaries(st.sampled_from(
    ["limit", "marker", "sort", "sort_key", "sort_dir", "status", "name", "metadata",
     "bootable", "all_tenants", "with_count", "offset", "availability_zone"]),
    st.text(max_size=12), max_size=4))
def test_list_queries(session, query):
    _send(session, "GET", "/volumes/detail?" + urllib.parse.urlencode(query))
    _send(session, "GET", "/snapshots?" + urllib.parse.urlencode(query))


def test_metadata_filters_that_are_not_dictionaries(session):
    for text in ("{[1]: 2}", "[1]", "{", "(" * 300 + ")" * 300, "{'a': 'b'}"):
        _send(session, "GET", "/volumes/detail?" + urllib.parse.urlencode({"metadata": text}))


def test_ids_and_strings_of_the_wrong_type(session, volume_id):
    """Examples hypothesis found once: non-string ids and connector fields."""
    for body in ({"volume": {"snapshot_id": [None, None]}}, {"volume": {"source_volid": {}}},
                 {"volume": {"backup_id": 1}}, {"volume": {"volume_type": ["x"]}}):
        assert _send(session, "POST", "/volumes", body).status_code == 400
    assert _send(session, "POST", "/attachments", {"attachment": {
        "volume_uuid": volume_id, "instance_uuid": ["x"]}}).status_code == 400
    assert _send(session, "POST", "/attachments", {"attachment": {
        "volume_uuid": volume_id, "connector": {"host": ["h"]}}}).status_code == 400
    assert _send(session, "POST", f"/volumes/{volume_id}/action", {"os-attach": {
        "instance_uuid": {"a": 1}, "mountpoint": "/dev/vdb"}}).status_code == 400
    assert _send(session, "GET", f"/volumes/{volume_id}").json()["volume"]["status"] == \
        "available"


def test_malformed_json(session):
    for raw in (b"{", b"[1,", b"\xff", json.dumps({"volume": {"size": 1}})[:-1].encode()):
        assert _send(session, "POST", "/volumes", raw=raw).status_code == 400


@FUZZ
@given(body=json_values | st.dictionaries(
    st.sampled_from(["transfer", "accept", "default_type", "quota_class_set", "volume",
                     "snapshot"]),
    json_values | st.dictionaries(st.sampled_from(
        ["volume_id", "name", "no_snapshots", "auth_key", "volume_type", "volumes", "host",
         "ref", "bootable", "metadata"]), json_values, max_size=3), max_size=2),
    action=st.sampled_from(["os-extend_volume_completion", "os-reimage"]))
def test_transfer_manage_and_default_type_bodies(session, cloud, volume_id, body, action):
    """Transfers, default types, quota classes, manage and the 3.68/3.71 actions: a
    result or a 4xx, for members and admins."""
    admin = cloud.session()
    for who in (session, admin):
        for method, path in (("POST", "/volume-transfers"), ("POST", "/os-volume-transfer"),
                             ("POST", f"/volume-transfers/{volume_id}/accept"),
                             ("PUT", "/default-types/fuzz-project"),
                             ("PUT", "/os-quota-class-sets/fuzz-class"),
                             ("POST", "/os-volume-manage"),
                             ("POST", "/os-snapshot-manage")):
            resp = _send(who, method, path, body, version="3.71")
            if path.endswith("transfer") or path.endswith("transfers"):
                if resp.status_code == 202:
                    _send(who, "DELETE", f"/os-volume-transfer/{resp.json()['transfer']['id']}")
            if path == "/os-volume-manage" and resp.status_code == 202:
                _send(admin, "DELETE", f"/volumes/{resp.json()['volume']['id']}")
            if path == "/os-snapshot-manage" and resp.status_code == 202:
                _send(admin, "DELETE", f"/snapshots/{resp.json()['snapshot']['id']}")
        _send(who, "POST", f"/volumes/{volume_id}/action", {action: body}, version="3.71")
    _send(admin, "DELETE", "/default-types/fuzz-project", version="3.71")


@FUZZ
@given(query=st.dictionaries(st.sampled_from(
    ["limit", "marker", "sort", "offset", "created_at", "updated_at", "consumes_quota",
     "all_tenants", "host", "resource", "name"]), st.text(max_size=30), max_size=4))
def test_list_queries_of_newer_endpoints(session, cloud, query):
    encoded = urllib.parse.urlencode(query)
    for path in ("/volumes/detail", "/volumes/summary", "/snapshots", "/volume-transfers",
                 "/os-volume-transfer/detail", "/resource_filters"):
        _send(session, "GET", f"{path}?{encoded}", version="3.71")
    _send(cloud.session(), "GET", f"/manageable_volumes?{encoded}", version="3.71")
    _send(cloud.session(), "GET", f"/manageable_snapshots?{encoded}", version="3.71")


@FUZZ
@given(body=json_values | st.dictionaries(
    st.sampled_from(["group", "group_type", "group_snapshot", "create-from-src", "delete",
                     "reset_status", "group_specs", "consistencygroup", "cgsnapshot",
                     "consistencygroup-from-src", "consistency_group"]),
    json_values | st.dictionaries(st.sampled_from(
        ["name", "group_type", "volume_types", "group_id", "add_volumes", "remove_volumes",
         "delete-volumes", "status", "source_group_id", "group_snapshot_id", "is_public",
         "group_specs", "volume_types", "force", "consistencygroup_id", "cgsnapshot_id",
         "source_cgid"]), json_values, max_size=3), max_size=2))
def test_group_endpoint_bodies(session, cloud, body):
    """Groups, group types and group snapshots: a result or a 4xx, never a 500."""
    admin = cloud.session()
    for who in (session, admin):
        for method, path in (("POST", "/groups"), ("POST", "/groups/action"),
                             ("PUT", "/groups/fuzz"), ("POST", "/groups/fuzz/action"),
                             ("POST", "/group_snapshots"), ("POST", "/group_types"),
                             ("PUT", "/group_types/fuzz"),
                             ("POST", "/group_types/fuzz/group_specs"),
                             ("POST", "/group_snapshots/fuzz/action"),
                             ("POST", "/consistencygroups"),
                             ("POST", "/consistencygroups/create_from_src"),
                             ("PUT", "/consistencygroups/fuzz"),
                             ("POST", "/consistencygroups/fuzz/delete"),
                             ("POST", "/cgsnapshots")):
            resp = _send(who, method, path, body, version="3.71")
            if resp.status_code == 202 and path == "/groups":
                _send(who, "POST", f"/groups/{resp.json()['group']['id']}/action",
                      {"delete": {}}, version="3.71")
            if resp.status_code == 202 and path == "/consistencygroups":
                _send(who, "POST", f"/consistencygroups/"
                      f"{resp.json()['consistencygroup']['id']}/delete", None, version="3.71")
            if resp.status_code == 202 and path == "/group_types":
                _send(admin, "DELETE", f"/group_types/{resp.json()['group_type']['id']}",
                      version="3.71")
