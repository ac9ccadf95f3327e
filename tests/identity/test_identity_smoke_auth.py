"""Authentication through keystoneauth1 against the running cloud."""
import httpx


def test_password_auth_gives_scoped_token_with_catalog(cloud):
    sess = cloud.session()
    assert sess.get_token()
    access = sess.auth.get_access(sess)
    assert access.project_name == "admin"
    assert "admin" in access.role_names
    types = {entry["type"] for entry in access.service_catalog.catalog}
    assert {"identity", "compute", "image", "network", "block-storage", "volumev3"} <= types


def test_garbage_token_is_401_in_keystone_format(cloud):
    r = httpx.get(cloud.auth_url + "/v3/auth/projects", headers={"X-Auth-Token": "garbage"})
    assert r.status_code == 401
    assert r.json()["error"]["code"] == 401
    assert r.headers["www-authenticate"].startswith("Keystone uri=")
    assert r.headers["x-openstack-request-id"].startswith("req-")
