"""Whatever a client sends, the image API answers with a result or a 4xx — never a 500."""
import json
import urllib.parse

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from image_helpers import PATCH_TYPE

KEYS = ["name", "id", "disk_format", "container_format", "visibility", "protected", "min_ram",
        "min_disk", "tags", "owner", "os_hidden", "kernel_id", "status", "size", "locations",
        "self", "os_distro", "hw_disk_bus", "os_glance_x", "deleted", "checksum", ""]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
    | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                  max_size=3),
    max_leaves=5)
bodies = st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), json_values, max_size=5)
paths = st.sampled_from(["/" + k for k in KEYS] + ["/tags/-", "/locations/0", "name", "/",
                                                   "//x", "/a~2"]) | st.text(max_size=10)
ops = st.fixed_dictionaries({"op": st.sampled_from(["add", "replace", "remove", "copy", 1]),
                             "path": paths}, optional={"value": json_values})
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def _ok(r):
    assert r.status_code < 500, f"{r.status_code} {r.text}"
    if r.status_code >= 400:
        assert r.json()["code"].startswith(str(r.status_code))


@FUZZ
@given(body=bodies)
def test_create_bodies(glance, body):
    r = glance.post("/v2/images", content=json.dumps(body))
    _ok(r)
    if r.status_code == 201:
        glance.patch(r.json()["id"], [{"op": "replace", "path": "/protected", "value": False}])
        glance.delete(f"/v2/images/{r.json()['id']}")


@FUZZ
@given(document=st.lists(ops, max_size=4) | json_values)
def test_patch_documents(glance, fuzz_image, document):
    _ok(glance.request("PATCH", f"/v2/images/{fuzz_image}", content=json.dumps(document),
                       headers={"Content-Type": PATCH_TYPE}))


@FUZZ
@given(params=st.lists(st.tuples(
    st.sampled_from(["limit", "marker", "sort", "sort_key", "sort_dir", "name", "status",
                     "visibility", "tag", "member_status", "size_min", "size_max", "created_at",
                     "updated_at", "os_hidden", "protected", "owner", "min_ram", "x"]),
    st.text(max_size=12)), max_size=4))
def test_list_queries(glance, params):
    _ok(glance.get("/v2/images", params=params))


@FUZZ
@given(range_header=st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=20),
       member=json_values, tag=st.text(min_size=1,
                                                                       max_size=30))
def test_ranges_members_tags(glance, fuzz_image, active_image, range_header, member, tag):
    _ok(glance.get(f"/v2/images/{active_image}/file", headers={"Range": range_header}))
    _ok(glance.post(f"/v2/images/{fuzz_image}/members", content=json.dumps({"member": member})))
    if tag not in (".", ".."):  # those two are resolved by the client
        _ok(glance.put(f"/v2/images/{fuzz_image}/tags/{urllib.parse.quote(tag, safe='')}"))
