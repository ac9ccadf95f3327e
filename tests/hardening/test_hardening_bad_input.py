"""The classes of bad input a hostile or careless user sends, on every service.

Each answer must be a 4xx in the service's own error format; the database keeps the same
rows; and the request logs no traceback and nothing at ERROR (one access line, at most a
warning). Hypothesis draws the bad values: lone UTF-16 surrogates, NaN/Infinity and numbers
that overflow a float, integers past 64 bits, Unicode digits that ``str.isdigit()`` accepts,
deep nesting and oversized ids.
"""
from __future__ import annotations

import json
import logging
import time
import uuid

import httpx
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pocketstack.common import db, numbers

FAST = settings(max_examples=12, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

BAD = "__BAD__"  # placeholder in a body template, replaced by the raw bad JSON text

# --- bad values ---------------------------------------------------------------------------

surrogate_text = st.builds(
    lambda head, s, tail: head + s + tail,
    st.text(alphabet="abc", max_size=3),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    st.text(alphabet="xyz", max_size=3))
# json.dumps writes a lone surrogate as its \ud8xx escape: exactly what a client sends.
surrogates = surrogate_text.map(json.dumps)
non_finite = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1E400"])
huge_ints = st.one_of(st.integers(min_value=2**63, max_value=2**400),
                      st.integers(max_value=-2**63 - 1, min_value=-2**400)).map(str)
nul_text = st.just(json.dumps("a\x00b"))  # PostgreSQL refuses NUL in text
bad_json_values = st.one_of(surrogates, non_finite, huge_ints, nul_text)

UNICODE_DIGITS = "²³¹٣۳߃०১੧૧୧௧౧೧൧๑໑༡၁႑០᠑᧑０"
unicode_digit_text = st.text(alphabet=UNICODE_DIGITS, min_size=1, max_size=4)
bad_numbers_in_text = st.one_of(
    unicode_digit_text,
    st.integers(min_value=2**63, max_value=2**300).map(str),
    st.sampled_from(["1" * 5000, "-1", "1_000", " 7", "1e3", "0x10", "NaN", "Infinity",
                     "1\x00"]))


# --- the service's own error format ----------------------------------------------------

def keystone_format(body):
    return set(body["error"]) == {"code", "message", "title"}


def nova_format(body):
    (fault,) = body.values()
    return set(fault) == {"code", "message"}


def glance_format(body):
    return {"message", "code", "title"} <= set(body)


def neutron_format(body):
    return {"type", "message", "detail"} <= set(body["NeutronError"])


FORMATS = {"identity": keystone_format, "compute": nova_format, "image": glance_format,
           "network": neutron_format, "volume": nova_format}  # cinder's body is nova's


# --- harness --------------------------------------------------------------------------

class LogWatch(logging.Handler):
    """Collects what pocketstack logs while a request is answered."""

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


def _row_counts() -> dict[str, int]:
    with db.reader() as s:
        return {t.name: s.scalar(sa.select(sa.func.count()).select_from(t))
                for t in db.Base.metadata.sorted_tables
                if not t.name.startswith(("trace", "instance_action"))}


class Api:
    def __init__(self, cloud, token):
        self.cloud = cloud
        self.client = httpx.Client(base_url=cloud.url, timeout=60)
        self.token = token

    def send(self, service, method, path, raw=None, token=True, content_type=None,
             query=None, headers=None):
        # Accept JSON as the SDK does: glance answers */* with an HTML error page.
        headers = {"Content-Type": content_type or "application/json",
                   "Accept": "application/json", "OpenStack-API-Version": "compute 2.79",
                   **(headers or {})}
        if token:
            headers["X-Auth-Token"] = self.token
        content = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
        return self.client.request(method, path, content=content, headers=headers,
                                   params=query)

    def refused(self, service, method, path, raw=None, *, token=True, content_type=None,
                query=None, codes=range(400, 500), headers=None):
        """Send, and check: a 4xx in the service's format, no row written, no traceback."""
        before = _row_counts()
        watch = LogWatch()
        root = logging.getLogger()
        root.addHandler(watch)
        old_level = root.level
        root.setLevel(logging.INFO)
        try:
            r = self.send(service, method, path, raw, token, content_type, query, headers)
        finally:
            root.removeHandler(watch)
            root.setLevel(old_level)
        assert r.status_code in codes, (method, path, raw and raw[:200], r.status_code,
                                        r.text[:300])
        assert FORMATS[service](r.json()), r.text
        assert "Traceback" not in r.text
        assert _row_counts() == before, f"{method} {path} wrote a row"
        noisy = [rec for rec in watch.records
                 if rec.exc_info or rec.levelno >= logging.ERROR or "Traceback" in
                 rec.getMessage()]
        assert not noisy, [rec.getMessage() for rec in noisy]
        return r


@pytest.fixture(scope="module")
def api(cloud):
    a = Api(cloud, cloud.session().get_token())
    yield a
    a.client.close()


@pytest.fixture(scope="module")
def targets(cloud, api):
    """Objects whose updates the tests try to poison."""
    s = cloud.session()
    image = s.post(cloud.url + "/image/v2/images",
                   json={"name": "hardening-target", "disk_format": "raw",
                         "container_format": "bare"}).json()
    net = s.post(cloud.url + "/network/v2.0/networks",
                 json={"network": {"name": "hardening-target"}}).json()["network"]
    user = cloud.make_user()
    yield {"image": image["id"], "network": net["id"], "user": user["id"]}
    s.delete(cloud.url + f"/image/v2/images/{image['id']}")
    s.delete(cloud.url + f"/network/v2.0/networks/{net['id']}")


def _body(template: dict, raw_value: str) -> str:
    return json.dumps(template).replace(json.dumps(BAD), raw_value)


def _name() -> str:
    return "hx-" + uuid.uuid4().hex[:8]


# Create calls per service, each with one field that gets the bad value.
CREATES = [
    ("identity", "/identity/v3/users", lambda: {"user": {"name": BAD, "password": "pw"}}),
    ("identity", "/identity/v3/users", lambda: {"user": {"name": _name(), "password": BAD}}),
    ("identity", "/identity/v3/projects", lambda: {"project": {"name": BAD}}),
    ("identity", "/identity/v3/domains", lambda: {"domain": {"name": BAD}}),
    ("compute", "/compute/v2.1/flavors",
     lambda: {"flavor": {"name": _name(), "ram": 64, "vcpus": 1, "disk": 1,
                         "rxtx_factor": BAD}}),
    ("compute", "/compute/v2.1/flavors",
     lambda: {"flavor": {"name": _name(), "ram": BAD, "vcpus": 1, "disk": 1}}),
    ("compute", "/compute/v2.1/flavors",
     lambda: {"flavor": {"name": BAD, "ram": 64, "vcpus": 1, "disk": 1}}),
    ("compute", "/compute/v2.1/os-server-groups",
     lambda: {"server_group": {"name": BAD, "policy": "affinity"}}),
    ("compute", "/compute/v2.1/os-keypairs", lambda: {"keypair": {"name": BAD}}),
    ("compute", "/compute/v2.1/servers",
     lambda: {"server": {"name": BAD, "imageRef": str(uuid.uuid4()), "flavorRef": "1",
                         "networks": "none"}}),
    ("compute", "/compute/v2.1/servers",
     lambda: {"server": {"name": _name(), "imageRef": str(uuid.uuid4()), "flavorRef": "1",
                         "networks": "none", "min_count": BAD}}),
    ("image", "/image/v2/images", lambda: {"name": BAD}),
    ("image", "/image/v2/images", lambda: {"name": _name(), "hx_property": BAD}),
    ("image", "/image/v2/images", lambda: {"name": _name(), "min_ram": BAD}),
    ("network", "/network/v2.0/networks", lambda: {"network": {"name": BAD}}),
    ("network", "/network/v2.0/networks", lambda: {"network": {"name": _name(), "mtu": BAD}}),
    ("network", "/network/v2.0/subnets",
     lambda: {"subnet": {"network_id": str(uuid.uuid4()), "cidr": "10.9.0.0/24",
                         "ip_version": BAD}}),
    ("network", "/network/v2.0/security-groups",
     lambda: {"security_group": {"name": BAD}}),
]


@FAST
@given(case=st.sampled_from(CREATES), value=bad_json_values)
def test_bad_values_in_create_bodies(api, case, value):
    service, path, template = case
    api.refused(service, "POST", path, _body(template(), value))


@pytest.mark.parametrize("case", [c for c in CREATES if "rxtx_factor" not in str(c[2]())],
                         ids=lambda c: c[1].rsplit("/", 1)[-1])
@pytest.mark.parametrize("number", [2**63, -2**63 - 1, 10**30])
def test_integers_past_64_bits_in_every_create(api, case, number):
    """Each field validates its own range (with its own message): none of them reaches
    the database, where it would overflow the column."""
    service, path, template = case
    api.refused(service, "POST", path, _body(template(), str(number)))


@FAST
@given(value=bad_json_values)
def test_bad_values_in_updates(api, targets, value):
    patch = json.dumps([{"op": "replace", "path": "/name", "value": BAD}])
    api.refused("image", "PATCH", f"/image/v2/images/{targets['image']}",
                patch.replace(json.dumps(BAD), value),
                content_type="application/openstack-images-v2.1-json-patch")
    patch = json.dumps([{"op": "add", "path": "/hx_prop", "value": BAD}])
    api.refused("image", "PATCH", f"/image/v2/images/{targets['image']}",
                patch.replace(json.dumps(BAD), value),
                content_type="application/openstack-images-v2.1-json-patch")
    api.refused("network", "PUT", f"/network/v2.0/networks/{targets['network']}",
                _body({"network": {"name": BAD}}, value))
    api.refused("identity", "PATCH", f"/identity/v3/users/{targets['user']}",
                _body({"user": {"name": BAD}}, value))


@FAST
@given(value=surrogates, where=st.sampled_from(["user_name", "domain_name", "user_id",
                                                "password", "scope_project",
                                                "scope_domain"]))
def test_surrogates_without_a_token(api, value, where):
    user = {"name": "admin", "domain": {"id": "default"}, "password": "x"}
    scope = {"project": {"name": "admin", "domain": {"id": "default"}}}
    if where == "user_name":
        user["name"] = BAD
    elif where == "domain_name":
        user["domain"] = {"name": BAD}
    elif where == "user_id":
        user = {"id": BAD, "password": "x"}
    elif where == "password":
        user["password"] = BAD
    elif where == "scope_project":
        scope = {"project": {"id": BAD}}
    else:
        scope = {"domain": {"name": BAD}}
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": user}},
                     "scope": scope}}
    api.refused("identity", "POST", "/identity/v3/auth/tokens", _body(body, value),
                token=False, codes=(400,))


@pytest.mark.parametrize("service,path", [
    ("identity", "/identity/v3/auth/tokens"),
    ("identity", "/identity/v3/projects"),
    ("compute", "/compute/v2.1/servers"),
    ("compute", "/compute/v2.1/flavors"),
    ("image", "/image/v2/images"),
    ("network", "/network/v2.0/networks"),
])
@pytest.mark.parametrize("shape", ["[", "{\"a\":"])
def test_deep_nesting_is_400_from_the_pipeline(api, service, path, shape):
    closing = "]" if shape == "[" else "}"
    raw = shape * 50000 + "1" + closing * 50000
    api.refused(service, "POST", path, raw, token=not path.endswith("auth/tokens"),
                codes=(400,))


@pytest.mark.parametrize("raw", [b'{"name": "\xff\xfe"}', b'\xff\xfe{\x00}\x00',
                                 b'{"name": "\xed\xa0\x80"}'])
def test_invalid_utf8_is_400(api, raw):
    api.refused("identity", "POST", "/identity/v3/auth/tokens", raw, token=False,
                codes=(400,))
    api.refused("network", "POST", "/network/v2.0/networks", raw, codes=(400,))


QUERIES = [
    ("compute", "/compute/v2.1/servers", "limit"),
    ("compute", "/compute/v2.1/servers/detail", "limit"),
    ("compute", "/compute/v2.1/os-server-groups", "limit"),
    ("compute", "/compute/v2.1/os-server-groups", "offset"),
    ("compute", "/compute/v2.1/flavors", "minRam"),
    ("compute", "/compute/v2.1/flavors/detail", "minDisk"),
    ("compute", "/compute/v2.1/flavors", "limit"),
    ("network", "/network/v2.0/networks", "limit"),
    ("network", "/network/v2.0/networks", "mtu"),
    ("image", "/image/v2/images", "limit"),
    ("image", "/image/v2/images", "size_min"),
    ("volume", "/volume/v3/volumes", "limit"),
    ("volume", "/volume/v3/volumes/detail", "offset"),
]


@FAST
@given(case=st.sampled_from(QUERIES), value=bad_numbers_in_text)
def test_bad_numbers_in_query_parameters(api, case, value):
    service, path, name = case
    r = api.send(service, "GET", path, query={name: value})
    assert r.status_code < 500, (path, name, value, r.text)
    if r.status_code >= 400:
        assert FORMATS[service](r.json()), r.text
    # Only ASCII integers within 64 bits are numbers; a page size past the maximum is
    # clamped (as upstream does) however many digits it has. Anything else is a 400.
    number = numbers.is_int_text(value.strip(), signed=True)
    page_size = name == "limit" and value.isascii() and value.isdigit()
    if not number and not page_size:
        assert r.status_code == 400, (path, name, value, r.status_code, r.text)


@FAST
@given(ident=st.one_of(unicode_digit_text,
                       st.integers(min_value=2**63, max_value=2**300).map(str),
                       st.just("9" * 5000), st.just("x" * 4000), st.just("%00")))
def test_bad_ids_in_paths_are_404(api, ident):
    for service, path in [("compute", f"/compute/v2.1/os-hypervisors/{ident}"),
                          ("compute", f"/compute/v2.1/os-hypervisors/{ident}/uptime"),
                          ("compute", f"/compute/v2.1/servers/{ident}"),
                          ("compute", f"/compute/v2.1/flavors/{ident}"),
                          ("compute", f"/compute/v2.1/os-server-groups/{ident}"),
                          ("image", f"/image/v2/images/{ident}"),
                          ("network", f"/network/v2.0/networks/{ident}"),
                          ("identity", f"/identity/v3/users/{ident}")]:
        r = api.send(service, "GET", path)
        assert r.status_code in (400, 404, 414), (path[:80], r.status_code, r.text[:300])
        if r.status_code != 414:
            assert FORMATS[service](r.json()), r.text


@pytest.mark.parametrize("version", ["2." + "1" * 5000, "2." + "٣", "²." + "1",
                                     "2.99999999999999999999", "9" * 100])
def test_bad_microversions(api, version):
    r = api.client.get("/compute/v2.1/servers", headers={
        "X-Auth-Token": api.token,
        "OpenStack-API-Version": f"compute {version}".encode()})  # UTF-8 on the wire
    assert r.status_code in (400, 406), r.text
    assert nova_format(r.json())


def test_infinity_is_never_stored_nor_served(api, cloud):
    """A flavor with rxtx_factor 1e999 used to be stored and served as Infinity to every
    user; now refused, and a non-finite value that is already stored comes out as null."""
    name = _name()
    api.refused("compute", "POST", "/compute/v2.1/flavors", _body(
        {"flavor": {"name": name, "ram": 64, "vcpus": 1, "disk": 1, "rxtx_factor": BAD}},
        "1e999"))
    r = api.send("compute", "POST", "/compute/v2.1/flavors", json.dumps(
        {"flavor": {"name": name, "ram": 64, "vcpus": 1, "disk": 1}}))
    assert r.status_code == 200, r.text
    flavor_id = r.json()["flavor"]["id"]
    from pocketstack.compute.models import Flavor

    try:
        with db.transaction() as s:  # a row written before the fix
            s.execute(sa.update(Flavor).where(Flavor.flavorid == flavor_id)
                      .values(rxtx_factor=float("inf")))
        r = api.send("compute", "GET", "/compute/v2.1/flavors/detail")
        assert r.status_code == 200
        assert "Infinity" not in r.text and "NaN" not in r.text
        json.loads(r.text, parse_constant=lambda c: pytest.fail(f"{c} in the response"))
        served = [f for f in r.json()["flavors"] if f["id"] == flavor_id][0]
        assert served["rxtx_factor"] is None
    finally:
        api.send("compute", "DELETE", f"/compute/v2.1/flavors/{flavor_id}")


@pytest.mark.parametrize("field,value", [("rxtx_factor", "9" * 400), ("ram", "9" * 5000),
                                         ("rxtx_factor", "1e999"), ("disk", "9" * 25)])
def test_flavor_numbers_as_strings(api, field, value):
    flavor = {"name": _name(), "ram": 64, "vcpus": 1, "disk": 1, field: value}
    api.refused("compute", "POST", "/compute/v2.1/flavors", json.dumps({"flavor": flavor}),
                codes=(400,))


def test_domain_scoped_member_cannot_create_project_resources(api, cloud):
    """A domain-scoped token passed policy on POST /servers and /os-server-groups, then
    failed the NOT NULL project_id: 403 now, and nothing written."""
    user = cloud.make_user()
    from pocketstack.common import db as database
    from pocketstack.identity.models import Assignment, Role

    with database.transaction() as s:
        role_id = s.query(Role.id).filter_by(name="member", domain_id=None).scalar()
        s.add(Assignment(type="UserDomain", actor_id=user["id"], target_id="default",
                         role_id=role_id, inherited=False))
    r = api.client.post("/identity/v3/auth/tokens", json={"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "id": user["id"], "password": user["password"]}}},
        "scope": {"domain": {"id": "default"}}}})
    assert r.status_code == 201, r.text
    domain_api = Api(cloud, r.headers["X-Subject-Token"])
    try:
        domain_api.refused("compute", "POST", "/compute/v2.1/servers", json.dumps(
            {"server": {"name": _name(), "imageRef": str(uuid.uuid4()), "flavorRef": "1",
                        "networks": "none"}}), codes=(403,))
        domain_api.refused("compute", "POST", "/compute/v2.1/os-server-groups", json.dumps(
            {"server_group": {"name": _name(), "policies": ["affinity"]}}), codes=(403,))
        # The other services' project-owned resources: a 4xx too, never a NOT NULL 500.
        domain_api.refused("network", "POST", "/network/v2.0/networks", json.dumps(
            {"network": {"name": _name()}}))
        domain_api.refused("network", "POST", "/network/v2.0/security-groups", json.dumps(
            {"security_group": {"name": _name()}}))
        domain_api.refused("image", "POST", "/image/v2/images", json.dumps(
            {"name": _name(), "disk_format": "raw", "container_format": "bare"}))
    finally:
        domain_api.client.close()


# Numbers sent as JSON strings: "²" and "٣" are digits to str.isdigit() but int() refuses
# (or misreads) them, so each field must refuse them itself with a 400.
TEXT_NUMBER_CREATES = [
    ("volume", "/volume/v3/volumes", lambda v: {"volume": {"size": v}}),
    ("network", "/network/v2.0/security-group-rules",
     lambda v: {"security_group_rule": {"security_group_id": str(uuid.uuid4()),
                                        "direction": "ingress", "protocol": "tcp",
                                        "port_range_min": v, "port_range_max": 22}}),
    ("network", "/network/v2.0/security-group-rules",
     lambda v: {"security_group_rule": {"security_group_id": str(uuid.uuid4()),
                                        "direction": "ingress", "protocol": v}}),
]


@pytest.mark.parametrize("case", TEXT_NUMBER_CREATES, ids=lambda c: c[1].rsplit("/", 1)[-1])
@pytest.mark.parametrize("value", ["²", "٣", "１２", "1" * 5000])
def test_unicode_digits_as_body_numbers_are_400(api, case, value):
    service, path, template = case
    api.refused(service, "POST", path, json.dumps(template(value)), codes=(400,))


@pytest.mark.parametrize("value", ["²", "٣", "1" * 5000])
def test_unicode_digits_in_volume_quota_update_are_400(api, cloud, value):
    project = cloud.session().get_project_id()
    api.refused("volume", "PUT", f"/volume/v3/os-quota-sets/{project}",
                json.dumps({"quota_set": {"volumes": value}}), codes=(400,))


# --- the volume API: 400 in cinder's format where it was a 500 or accepted ---

VOLUME_3_60 = {"OpenStack-API-Version": "volume 3.60"}


def _volume_call(api, method, path, body=None):
    return api.send("volume", method, "/volume/v3" + path,
                    None if body is None else json.dumps(body), headers=VOLUME_3_60)


@pytest.fixture(scope="module")
def volume_id(api):
    r = _volume_call(api, "POST", "/volumes", {"volume": {"size": 1, "name": _name()}})
    assert r.status_code == 202, r.text
    ident = r.json()["volume"]["id"]
    deadline = time.monotonic() + 60
    while _volume_call(api, "GET", f"/volumes/{ident}").json()["volume"]["status"] != \
            "available":
        assert time.monotonic() < deadline, "the volume never became available"
        time.sleep(0.05)
    yield ident
    _volume_call(api, "DELETE", f"/volumes/{ident}")


@pytest.fixture(scope="module")
def volume_type_id(api):
    r = _volume_call(api, "POST", "/types", {"volume_type": {"name": _name()}})
    assert r.status_code == 200, r.text
    yield r.json()["volume_type"]["id"]
    _volume_call(api, "DELETE", f"/types/{r.json()['volume_type']['id']}")


@pytest.mark.parametrize("version", ["4" * 4400, "٣", "99999999999999999999"])
def test_bad_volume_microversion_is_answered_as_compute_answers(api, version):
    """A 4,400-digit minor version made int() raise past Python's limit: a 500."""
    def get(path, header):
        return api.client.get(path, headers={"X-Auth-Token": api.token,
                                             "OpenStack-API-Version": header.encode()})
    compute = get("/compute/v2.1/servers", f"compute 2.{version}")
    volume = get("/volume/v3/volumes", f"volume 3.{version}")
    assert volume.status_code == compute.status_code == 400, volume.text
    assert nova_format(volume.json()) and "badRequest" in volume.json()
    assert len(volume.text) < 300  # the version is not echoed whole


@pytest.mark.parametrize("snapshot_id", [2**63, 2**64, 10**30, -2**63 - 1, {"id": "x"}, {},
                                         [], 0, 1, True, False, ""])
def test_backup_snapshot_id_must_be_an_id(api, volume_id, snapshot_id):
    api.refused("volume", "POST", "/volume/v3/backups", json.dumps(
        {"backup": {"volume_id": volume_id, "snapshot_id": snapshot_id}}),
        headers=VOLUME_3_60, codes=(400,))


@pytest.mark.parametrize("connector", [0, 1, "", "host", [], [{}], True, False])
def test_attachment_connector_must_be_an_object(api, volume_id, connector):
    api.refused("volume", "POST", "/volume/v3/attachments", json.dumps(
        {"attachment": {"volume_uuid": volume_id, "instance_uuid": str(uuid.uuid4()),
                        "connector": connector}}), headers=VOLUME_3_60, codes=(400,))
    r = _volume_call(api, "POST", "/attachments", {"attachment": {
        "volume_uuid": volume_id, "instance_uuid": str(uuid.uuid4())}})
    assert r.status_code == 200, r.text
    attachment_id = r.json()["attachment"]["id"]
    try:
        api.refused("volume", "PUT", f"/volume/v3/attachments/{attachment_id}",
                    json.dumps({"attachment": {"connector": connector}}),
                    headers=VOLUME_3_60, codes=(400,))
        shown = _volume_call(api, "GET", f"/attachments/{attachment_id}").json()
        assert shown["attachment"]["status"] == "reserved"
    finally:
        _volume_call(api, "DELETE", f"/attachments/{attachment_id}")


@pytest.mark.parametrize("specs", ["", 0, 1, [], ["a"], "a=b", True, False])
def test_volume_type_extra_specs_must_be_an_object(api, volume_type_id, specs):
    api.refused("volume", "POST", "/volume/v3/types", json.dumps(
        {"volume_type": {"name": _name(), "extra_specs": specs}}),
        headers=VOLUME_3_60, codes=(400,))
    api.refused("volume", "PUT", f"/volume/v3/types/{volume_type_id}", json.dumps(
        {"volume_type": {"extra_specs": specs}}), headers=VOLUME_3_60, codes=(400,))
    api.refused("volume", "POST", f"/volume/v3/types/{volume_type_id}/extra_specs",
                json.dumps({"extra_specs": specs}), headers=VOLUME_3_60, codes=(400,))


def test_volume_type_extra_specs_null_is_none(api):
    """cinder's schema allows null: a type without extra specs."""
    r = _volume_call(api, "POST", "/types", {"volume_type": {"name": _name(),
                                                             "extra_specs": None}})
    assert r.status_code == 200, r.text
    assert r.json()["volume_type"]["extra_specs"] == {}
    _volume_call(api, "DELETE", f"/types/{r.json()['volume_type']['id']}")


@pytest.mark.parametrize("args", [{"status": None}, {"attach_status": None},
                                  {"status": None, "attach_status": None,
                                   "migration_status": None},
                                  {"status": ""}, {}, None, 0, {"migration_status": ["x"]},
                                  {"migration_status": "bogus"}, {"status": ["available"]}])
def test_volume_reset_status_needs_a_status(api, volume_id, args):
    api.refused("volume", "POST", f"/volume/v3/volumes/{volume_id}/action",
                json.dumps({"os-reset_status": args}), headers=VOLUME_3_60, codes=(400,))
    shown = _volume_call(api, "GET", f"/volumes/{volume_id}").json()["volume"]
    assert shown["status"] == "available"


@pytest.mark.parametrize("kind", ["snapshots", "backups"])
def test_snapshot_and_backup_reset_status_null_is_400(api, kind):
    api.refused("volume", "POST", f"/volume/v3/{kind}/{uuid.uuid4()}/action",
                json.dumps({"os-reset_status": {"status": None}}), headers=VOLUME_3_60,
                codes=(400,))
