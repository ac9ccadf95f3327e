"""Where authorization meets the edges of swift's middlewares: FormPOST's redirect and
digests, X-Delete-At bounds, names in container ACLs (default domain only), and what a
temporary URL to a symlink or a large object reaches."""
from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid

import pytest
import requests
import swiftclient

from swift_helpers import Holder


def _form_url(owner, container):
    base, path = owner.url.split("/object-store")
    path = f"{path}/{container}"
    return f"{base}/object-store{path}", path


def _form(path, key, redirect="", digest="sha256", **extra):
    expires = int(time.time()) + 60
    body = f"{path}\n{redirect}\n1024\n2\n{expires}"
    signature = hmac.new(key.encode(), body.encode(), getattr(hashlib, digest)).hexdigest()
    return {"redirect": redirect, "max_file_size": "1024", "max_file_count": "2",
            "expires": str(expires), "signature": signature, **extra}


def test_formpost_redirects_only_for_a_verified_form(owner, container):
    owner.swift.post_account({"X-Account-Meta-Temp-URL-Key": "form-key"})
    url, path = _form_url(owner, container)
    evil = "https://evil.example/phish"
    # not signed, or signed with another key: 401 and no redirect anywhere
    for data in ({"redirect": evil, "expires": str(int(time.time()) + 60)},
                 _form(path, "other-key", evil)):
        r = requests.post(url, data=data, files={"f": ("x", b"x")}, allow_redirects=False)
        assert r.status_code == 401 and "Location" not in r.headers, data
        assert "invalid signature" in r.text
    # an expired form neither
    r = requests.post(url, data={**_form(path, "form-key", evil),
                                 "expires": str(int(time.time()) - 5)},
                      files={"f": ("x", b"x")}, allow_redirects=False)
    assert r.status_code == 401 and "Location" not in r.headers
    # a redirect that would split the answer's headers: 400, signed or not, nothing stored
    split = "https://example.com/\r\nX-Injected: yes"
    for key in ("form-key", "other-key"):
        r = requests.post(url, data=_form(path, key, split), files={"f": ("y", b"y")},
                          allow_redirects=False)
        assert r.status_code in (400, 401) and "Location" not in r.headers
        assert "X-Injected" not in r.headers
    r = requests.post(url, data=_form(path, "form-key", split), files={"f": ("y", b"y")},
                      allow_redirects=False)
    assert r.status_code == 400 and "invalid redirect" in r.text
    assert owner.swift.get_container(container)[1] == []
    # the signed form's own redirect, its non-ASCII characters escaped
    target = "https://example.com/dóne"
    r = requests.post(url, data=_form(path, "form-key", target), files={"f": ("z", b"z")},
                      allow_redirects=False)
    assert r.status_code == 303
    assert r.headers["Location"] == "https://example.com/d%C3%B3ne?status=201&message="
    assert owner.swift.get_object(container, "z")[1] == b"z"


@pytest.fixture
def tempurl_digests(cloud):
    """Set [objectstore] tempurl_digests of the session's cloud for one test."""
    from pocketstack.common import config

    def set_digests(digests):
        with cloud.cloud.runtime.activated():
            config.CONF.set_override("tempurl_digests", digests, group="objectstore")
    yield set_digests
    with cloud.cloud.runtime.activated():
        config.CONF.clear_override("tempurl_digests", group="objectstore")


def test_formpost_and_tempurl_refuse_a_digest_the_operator_removed(owner, container,
                                                                   tempurl_digests):
    owner.swift.post_container(container, {"X-Container-Meta-Temp-URL-Key": "ckey"})
    owner.swift.put_object(container, "t", b"t")
    url, path = _form_url(owner, container)
    temp = swiftclient.utils.generate_temp_url(f"{path}/t", 60, "ckey", "GET",
                                               digest="sha1")
    base = url.split("/object-store")[0] + "/object-store"
    assert requests.get(base + temp).status_code == 200
    r = requests.post(url, data=_form(path, "ckey", digest="sha1"),
                      files={"f": ("a", b"a")})
    assert r.status_code == 201
    tempurl_digests(["sha256", "sha512"])
    assert requests.get(base + temp).status_code == 401
    r = requests.post(url, data=_form(path, "ckey", digest="sha1"),
                      files={"f": ("b", b"b")})
    assert r.status_code == 401 and "invalid signature" in r.text
    r = requests.post(url, data=_form(path, "ckey", digest="sha512"),
                      files={"f": ("c", b"c")})
    assert r.status_code == 201
    assert [o["name"] for o in owner.swift.get_container(container)[1]] == ["a", "c", "t"]


def _status(call):
    try:
        call()
    except swiftclient.ClientException as error:
        return error.http_status, error.http_response_content
    return 201, b""


def test_delete_at_beyond_swifts_horizon_is_capped_bad_values_are_400(owner, container):
    swift = owner.swift
    swift.put_object(container, "after", b"a", headers={"X-Delete-After": "9" * 400})
    assert swift.head_object(container, "after")["x-delete-at"] == "9999999999"
    swift.put_object(container, "at", b"a", headers={"X-Delete-At": "1" + "0" * 29})
    assert swift.head_object(container, "at")["x-delete-at"] == "9999999999"
    swift.post_object(container, "at", headers={"X-Delete-At": "9" * 30})
    assert swift.head_object(container, "at")["x-delete-at"] == "9999999999"
    for headers, text in (({"X-Delete-After": "-" + "9" * 400}, b"X-Delete-After in past"),
                          ({"X-Delete-At": "-" + "9" * 30}, b"X-Delete-At in past"),
                          ({"X-Delete-At": "9" * 5000}, b"Non-integer X-Delete-At"),
                          ({"X-Delete-After": "1e9"}, b"Non-integer X-Delete-After")):
        status, body = _status(lambda h=headers: swift.put_object(container, "bad", b"b",
                                                                  headers=h))
        assert (status, body) == (400, text), headers
    # a form's x_delete_after takes the same way
    swift.post_account({"X-Account-Meta-Temp-URL-Key": "form-key"})
    url, path = _form_url(owner, container)
    r = requests.post(url, data=_form(path, "form-key", x_delete_after="9" * 400),
                      files={"f": ("form", b"f")})
    assert r.status_code == 201
    assert swift.head_object(container, "form")["x-delete-at"] == "9999999999"
    r = requests.post(url, data=_form(path, "form-key", x_delete_at="9" * 5000),
                      files={"f": ("form2", b"f")})
    assert r.status_code == 400


def _user_in(cloud, domain_id, project_name, user_name, roles=("member",)):
    """A user and project of ``domain_id`` with these names (direct database writes)."""
    from pocketstack.common import db
    from pocketstack.identity import passwords
    from pocketstack.identity.models import Assignment, Domain, Project, Role, User

    project_id, user_id = uuid.uuid4().hex, uuid.uuid4().hex
    with cloud.cloud.runtime.activated(), db.transaction() as s:
        if s.get(Domain, domain_id) is None:
            s.add(Domain(id=domain_id, name=f"domain-{domain_id}"))
            s.flush()
        s.add(Project(id=project_id, name=project_name, domain_id=domain_id))
        s.add(User(id=user_id, name=user_name, domain_id=domain_id,
                   password_hash=passwords.hash_password("pass-word"),
                   default_project_id=project_id))
        s.flush()
        for role in roles:
            role_id = s.query(Role.id).filter_by(name=role, domain_id=None).scalar()
            s.add(Assignment(type="UserProject", actor_id=user_id, target_id=project_id,
                             role_id=role_id, inherited=False))
    user = {"id": user_id, "name": user_name, "project_id": project_id}
    session = cloud.session(username=user_name, password="pass-word",
                            project_id=project_id, domain_id=domain_id)
    return Holder(cloud, user, session)


def test_acl_names_match_users_and_projects_of_the_default_domain_only(cloud, owner,
                                                                        container):
    owner.swift.put_object(container, "shared", b"by name")
    suffix = uuid.uuid4().hex[:8]
    project_name, user_name = f"acl-project-{suffix}", f"acl-user-{suffix}"
    grantee = _user_in(cloud, "default", project_name, user_name)
    namesake = _user_in(cloud, f"d{suffix}", project_name, user_name)
    url = f"{owner.url}/{container}/shared"
    for holder in (grantee, namesake):
        assert requests.get(url, headers=holder.headers).status_code == 403
    for acl in (f"{project_name}:{user_name}", f"{project_name}:*", f"*:{user_name}"):
        owner.swift.post_container(container, {"X-Container-Read": acl,
                                               "X-Container-Write": acl})
        r = requests.get(url, headers=grantee.headers)
        assert (r.status_code, r.content) == (200, b"by name"), acl
        assert requests.get(url, headers=namesake.headers).status_code == 403, acl
        assert requests.put(url, data=b"w", headers=namesake.headers).status_code == 403
        assert requests.put(url, data=b"w", headers=grantee.headers).status_code == 201
        owner.swift.put_object(container, "shared", b"by name")
    # a user of another domain is still reached by id
    owner.swift.post_container(container, {
        "X-Container-Read": f"{namesake.user['project_id']}:{namesake.user['id']}"})
    assert requests.get(url, headers=namesake.headers).content == b"by name"
    # names through python-swiftclient too
    owner.swift.post_container(container, {"X-Container-Read": f"{project_name}:{user_name}"})
    other = swiftclient.Connection(preauthurl=owner.url, preauthtoken=grantee.token,
                                   retries=0)
    assert other.get_object(container, "shared")[1] == b"by name"


def _temp_get(owner, path, key):
    base = owner.url.split("/object-store")[0] + "/object-store"
    return base + swiftclient.utils.generate_temp_url(path, 60, key, "GET")


def test_temp_url_follows_links_and_reads_segments_within_its_keys_reach(owner, container):
    swift = owner.swift
    account_path = owner.url.split("/object-store")[1]
    other = f"o-{uuid.uuid4().hex[:8]}"
    swift.put_container(other)
    swift.put_object(container, "target", b"linked bytes")
    swift.put_object(other, "far", b"far bytes")
    swift.put_object(container, "link", b"", headers={"X-Symlink-Target": f"{container}/target"})
    swift.put_object(container, "far-link", b"", headers={"X-Symlink-Target": f"{other}/far"})
    for i in range(3):
        swift.put_object(other, f"seg/{i}", bytes([65 + i]) * 1000)
    manifest = [{"path": f"/{other}/seg/{i}"} for i in range(3)]
    swift.put_object(container, "slo", json.dumps(manifest),
                     query_string="multipart-manifest=put")
    swift.put_object(container, "dlo", b"", headers={"X-Object-Manifest": f"{other}/seg/"})
    whole = b"A" * 1000 + b"B" * 1000 + b"C" * 1000

    swift.post_account({"X-Account-Meta-Temp-URL-Key": "acct-key"})
    r = requests.get(_temp_get(owner, f"{account_path}/{container}/link", "acct-key"))
    assert (r.status_code, r.content) == (200, b"linked bytes")
    r = requests.get(_temp_get(owner, f"{account_path}/{container}/far-link", "acct-key"))
    assert (r.status_code, r.content) == (200, b"far bytes")
    for name in ("slo", "dlo"):
        r = requests.get(_temp_get(owner, f"{account_path}/{container}/{name}", "acct-key"))
        assert (r.status_code, r.content) == (200, whole), name
    r = requests.get(_temp_get(owner, f"{account_path}/{container}/slo", "acct-key"),
                     headers={"Range": "bytes=999-1000"})
    assert (r.status_code, r.content) == (206, b"AB")

    # a container's key reaches that container only (swift's authorize_same_container)
    swift.post_account({"X-Remove-Account-Meta-Temp-URL-Key": "x"})
    swift.post_container(container, {"X-Container-Meta-Temp-URL-Key": "c-key"})
    r = requests.get(_temp_get(owner, f"{account_path}/{container}/link", "c-key"))
    assert (r.status_code, r.content) == (200, b"linked bytes")
    for name in ("far-link", "slo", "dlo"):
        r = requests.get(_temp_get(owner, f"{account_path}/{container}/{name}", "c-key"))
        assert r.status_code == 401, name

    # a writing temporary URL may not make a link or a manifest (which a reading one
    # would then follow)
    base = owner.url.split("/object-store")[0] + "/object-store"
    put = base + swiftclient.utils.generate_temp_url(
        f"{account_path}/{container}/made-link", 60, "c-key", "PUT")
    for header, value in (("X-Symlink-Target", f"{other}/far"),
                          ("X-Object-Manifest", f"{other}/seg/")):
        r = requests.put(put, data=b"", headers={header: value})
        assert r.status_code == 400 and "is not allowed in this tempurl" in r.text, header
    assert requests.put(put, data=b"plain").status_code == 201
