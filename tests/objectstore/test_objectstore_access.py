"""Who reaches an account, as swift's keystoneauth decides: the project's operators own
it, readers read it, ResellerAdmin reaches any; container ACLs and temporary URLs let
others in."""
from __future__ import annotations

import hashlib
import hmac
import time
import uuid

import requests

from swift_helpers import Holder


def _holder(cloud, roles, project_id=None):
    user = cloud.make_user(roles=roles)
    if project_id is not None:  # the same project as another user
        from pocketstack.common import db
        from pocketstack.identity.models import Assignment, Role
        with cloud.cloud.runtime.activated(), db.transaction() as s:
            s.query(Assignment).filter_by(actor_id=user["id"]).delete()
            for role in roles:
                role_id = s.query(Role.id).filter_by(name=role, domain_id=None).scalar()
                s.add(Assignment(type="UserProject", actor_id=user["id"],
                                 target_id=project_id, role_id=role_id, inherited=False))
        user = dict(user, project_id=project_id)
    return Holder(cloud, user, cloud.user_session(user))


def test_project_members_own_their_account_others_are_refused(cloud, owner, container):
    owner.swift.put_object(container, "o", b"mine")
    stranger = _holder(cloud, ("member",))
    url = f"{owner.url}/{container}/o"
    assert requests.get(url, headers=stranger.headers).status_code == 403
    assert requests.put(url, data=b"x", headers=stranger.headers).status_code == 403
    assert requests.get(owner.url, headers=stranger.headers).status_code == 403
    assert requests.get(url).status_code == 401  # no token at all
    assert requests.get(url, headers={"X-Auth-Token": "bogus"}).status_code == 401


def test_readers_read_but_do_not_write(cloud, owner, container):
    owner.swift.put_object(container, "o", b"mine")
    reader = _holder(cloud, ("reader",), project_id=owner.user["project_id"])
    assert reader.url == owner.url
    assert requests.get(f"{owner.url}/{container}/o", headers=reader.headers).content == b"mine"
    assert requests.get(f"{owner.url}/{container}", headers=reader.headers).status_code == 200
    assert requests.put(f"{owner.url}/{container}/o", data=b"x",
                        headers=reader.headers).status_code == 403
    assert requests.delete(f"{owner.url}/{container}/o",
                           headers=reader.headers).status_code == 403
    assert requests.post(owner.url, headers={**reader.headers, "X-Account-Meta-A": "b"}
                         ).status_code == 403


def test_reseller_admin_reaches_any_account(cloud, owner, container):
    from pocketstack.common import db
    from pocketstack.identity.models import Role

    with cloud.cloud.runtime.activated(), db.transaction() as s:
        if s.query(Role).filter_by(name="ResellerAdmin", domain_id=None).first() is None:
            s.add(Role(id=uuid.uuid4().hex, name="ResellerAdmin", domain_id=None))
    reseller = _holder(cloud, ("member", "ResellerAdmin"))
    r = requests.put(f"{owner.url}/{container}/from-reseller", data=b"r",
                     headers=reseller.headers)
    assert r.status_code == 201
    assert owner.swift.get_object(container, "from-reseller")[1] == b"r"
    admin = _holder(cloud, ("admin",))  # admin of another project: not a reseller
    assert requests.get(owner.url, headers=admin.headers).status_code == 403


def test_container_read_acl_public_and_listings(cloud, owner, container):
    owner.swift.put_object(container, "pub", b"public")
    url = f"{owner.url}/{container}"
    owner.swift.post_container(container, {"X-Container-Read": ".r:*"})
    assert requests.get(f"{url}/pub").content == b"public"
    assert requests.get(url).status_code == 401  # no .rlistings: no listing
    owner.swift.post_container(container, {"X-Container-Read": ".r:*,.rlistings"})
    assert requests.get(url).text == "pub\n"
    assert requests.put(f"{url}/pub", data=b"x").status_code == 401
    head = requests.head(url)
    assert "X-Container-Read" not in head.headers  # ACLs are shown to owners only
    assert owner.swift.head_container(container)["x-container-read"] == ".r:*,.rlistings"


def test_container_user_acls_for_read_and_write(cloud, owner, container):
    other = _holder(cloud, ("member",))
    url = f"{owner.url}/{container}/shared"
    owner.swift.put_object(container, "shared", b"s")
    assert requests.get(url, headers=other.headers).status_code == 403
    grant = f"{other.user['project_id']}:{other.user['id']}"
    owner.swift.post_container(container, {"X-Container-Read": grant})
    assert requests.get(url, headers=other.headers).content == b"s"
    assert requests.put(url, data=b"w", headers=other.headers).status_code == 403
    owner.swift.post_container(container, {"X-Container-Write": f"{other.user['project_id']}:*"})
    assert requests.put(url, data=b"w", headers=other.headers).status_code == 201
    assert owner.swift.get_object(container, "shared")[1] == b"w"
    # ACLs grant objects, not the container's own settings
    assert requests.post(f"{owner.url}/{container}", headers={
        **other.headers, "X-Container-Read": ".r:*"}).status_code == 403


def _temp_url(path, key, method="GET", expires=None, digest="sha256", prefix=None):
    expires = expires or int(time.time()) + 60
    signed = f"prefix:{prefix}" if prefix is not None else path
    body = f"{method}\n{expires}\n{signed}"
    sig = hmac.new(key.encode(), body.encode(), getattr(hashlib, digest)).hexdigest()
    query = f"temp_url_sig={sig}&temp_url_expires={expires}"
    if prefix is not None:
        query += f"&temp_url_prefix={prefix.split('/', 4)[4]}"
    return query


def test_temp_urls_with_account_and_container_keys(cloud, owner, container):
    swiftclient_utils = __import__("swiftclient.utils", fromlist=["generate_temp_url"])
    owner.swift.put_object(container, "t", b"temporary")
    owner.swift.post_account({"X-Account-Meta-Temp-URL-Key": "acct-key"})
    base = owner.url.split("/object-store/")[0]
    path = owner.url[len(base):] + f"/{container}/t"  # as the client reaches it
    swift_path = path[len("/object-store"):]  # as swift sees it (without the mount)
    for signed, digest in ((swift_path, "sha1"), (path, "sha256"), (swift_path, "sha512")):
        r = requests.get(f"{base}{path}?{_temp_url(signed, 'acct-key', digest=digest)}")
        assert (r.status_code, r.content) == (200, b"temporary"), digest
    r = requests.get(f"{base}{path}?{_temp_url(swift_path, 'wrong-key')}")
    assert r.status_code == 401
    expired = _temp_url(swift_path, "acct-key", expires=int(time.time()) - 1)
    assert requests.get(f"{base}{path}?{expired}").status_code == 401
    # A GET URL does not allow a PUT; a PUT URL does.
    assert requests.put(f"{base}{path}?{_temp_url(swift_path, 'acct-key')}",
                        data=b"x").status_code == 401
    put_url = swiftclient_utils.generate_temp_url(swift_path, 60, "acct-key", "PUT")
    assert requests.put(f"{base}/object-store{put_url}", data=b"uploaded").status_code == 201
    assert owner.swift.get_object(container, "t")[1] == b"uploaded"
    # A container key and a prefix URL
    owner.swift.post_container(container, {"X-Container-Meta-Temp-URL-Key": "c-key"})
    owner.swift.put_object(container, "dir/a", b"in dir")
    prefix = swift_path.rsplit("/", 1)[0] + "/dir/"
    query = _temp_url(None, "c-key", prefix=prefix)
    assert requests.get(f"{base}{path.rsplit('/', 1)[0]}/dir/a?{query}").content == b"in dir"
    assert requests.get(f"{base}{path}?{query}").status_code == 401
    # The keys are the owner's to see
    reader = _holder(cloud, ("reader",), project_id=owner.user["project_id"])
    assert "X-Account-Meta-Temp-URL-Key" not in requests.head(
        owner.url, headers=reader.headers).headers
