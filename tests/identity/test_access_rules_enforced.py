"""Application credential access rules limit what the credential's tokens reach, in every
service, as keystonemiddleware enforces them: service type, method and path template
(``*``, ``{name}``, ``**``), else 401. Another service acting for the user with its own
service token beside the user's (nova asking glance and neutron during a boot) is not
limited, as upstream. The credential is used through keystoneauth1's
application-credential plugin, as a client would."""
from __future__ import annotations

import time
import uuid

import pytest
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from pocketstack.common.image_formats import qcow2_header


@pytest.fixture(scope="module")
def member(cloud):
    return cloud.make_user(roles=("member",))


@pytest.fixture(scope="module")
def restricted(cloud, member):
    """Factory: a keystoneauth1 session of a new credential of ``member`` with ``rules``."""
    owner = cloud.user_session(member)

    def make(rules):
        r = owner.post(f"{cloud.auth_url}/v3/users/{member['id']}/application_credentials",
                       json={"application_credential": {"name": f"ac-{uuid.uuid4().hex[:8]}",
                                                        "access_rules": rules}})
        cred = r.json()["application_credential"]
        auth = v3.ApplicationCredential(auth_url=cloud.auth_url,
                                        application_credential_id=cred["id"],
                                        application_credential_secret=cred["secret"])
        return ks_session.Session(auth=auth)

    return make


def _status(sess, service_type, path, method="GET", **kw):
    return sess.request(path, method, endpoint_filter={"service_type": service_type,
                                                       "interface": "public"},
                        raise_exc=False, **kw).status_code


def test_a_rule_for_one_listing_allows_that_listing_only(cloud, restricted):
    sess = restricted([{"service": "compute", "method": "GET", "path": "/v2.1/servers"}])
    assert _status(sess, "compute", "/servers") == 200
    assert _status(sess, "compute", "/servers/") == 200  # the path the router sees
    assert _status(sess, "compute", "/servers/detail") == 401
    assert _status(sess, "compute", "/flavors") == 401
    assert _status(sess, "compute", "/servers", "POST", json={"server": {}}) == 401
    assert _status(sess, "network", "/v2.0/networks") == 401
    assert _status(sess, "block-storage", "/volumes") == 401
    assert _status(sess, "image", "/v2/images") == 401
    assert _status(sess, "placement", "/resource_providers") == 401
    assert sess.get(f"{cloud.auth_url}/v3/users/{sess.get_user_id()}",
                    raise_exc=False).status_code == 401
    # the 401 of a token the service does not take, in the service's own error body
    r = sess.get("/v2.0/networks", endpoint_filter={"service_type": "network"},
                 raise_exc=False)
    assert r.json()["NeutronError"]["type"] == "Unauthorized"
    # a token can always be validated (keystonemiddleware's exception)
    token = sess.get_token()
    r = sess.get(f"{cloud.auth_url}/v3/auth/tokens", headers={"X-Subject-Token": token},
                 raise_exc=False)
    assert r.status_code == 200
    assert r.json()["token"]["application_credential"]["access_rules"][0]["path"] == \
        "/v2.1/servers"


def test_path_templates_and_service_types(cloud, restricted):
    sess = restricted([
        {"service": "compute", "method": "GET", "path": "/v2.1/servers/*"},
        {"service": "image", "method": "GET", "path": "/v2/**"},
        {"service": "volumev3", "method": "GET", "path": "/v3/{project_id}/volumes"},
        {"service": "network", "method": "GET", "path": "/v2.0/networks/{network_id}"}])
    assert _status(sess, "compute", "/servers/detail") == 200
    assert _status(sess, "compute", f"/servers/{uuid.uuid4()}") == 404  # let through
    assert _status(sess, "compute", "/servers") == 401
    assert _status(sess, "compute", f"/servers/{uuid.uuid4()}/ips") == 401
    assert _status(sess, "compute", f"/servers/{uuid.uuid4()}", "DELETE") == 401
    assert _status(sess, "image", "/v2/images") == 200
    assert _status(sess, "image", "/v2/schemas/image") == 200
    assert _status(sess, "image", "/v2/images", "POST", json={}) == 401
    assert _status(sess, "block-storage", "/volumes") == 200
    assert _status(sess, "block-storage", "/volumes/detail") == 401
    assert _status(sess, "network", f"/v2.0/networks/{uuid.uuid4()}") == 404
    assert _status(sess, "network", "/v2.0/networks") == 401
    # a rule names a service by its catalog type: compute's rule is no good for network
    wrong = restricted([{"service": "compute", "method": "GET", "path": "/v2.0/networks"}])
    assert _status(wrong, "network", "/v2.0/networks") == 401


def test_a_credential_without_rules_is_not_limited(cloud, restricted):
    sess = restricted([])
    assert _status(sess, "compute", "/servers/detail") == 200
    assert _status(sess, "network", "/v2.0/networks") == 200


def _wait_status(sess, server_id, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        server = sess.get(f"/servers/{server_id}", endpoint_filter={
            "service_type": "compute"}).json()["server"]
        if server["status"] in ("ACTIVE", "ERROR"):
            return server
        assert time.monotonic() < deadline, server
        time.sleep(0.05)


def test_services_acting_for_the_user_are_not_limited(cloud, member, restricted):
    owner = cloud.user_session(member)
    image = owner.post(cloud.url + "/image/v2/images", json={
        "name": f"ar-{uuid.uuid4().hex[:6]}", "disk_format": "qcow2",
        "container_format": "bare"}).json()
    owner.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=qcow2_header(1 << 20),
              headers={"Content-Type": "application/octet-stream"})
    net = owner.post(cloud.url + "/network/v2.0/networks", json={
        "network": {"name": f"ar-{uuid.uuid4().hex[:6]}"}}).json()["network"]
    owner.post(cloud.url + "/network/v2.0/subnets", json={"subnet": {
        "network_id": net["id"], "cidr": "10.77.0.0/28", "ip_version": 4}})
    sess = restricted([{"service": "compute", "method": "POST", "path": "/v2.1/servers"},
                       {"service": "compute", "method": "GET", "path": "/v2.1/servers/*"},
                       {"service": "compute", "method": "DELETE",
                        "path": "/v2.1/servers/*"}])
    r = sess.post("/servers", endpoint_filter={"service_type": "compute"}, json={"server": {
        "name": "ar-vm", "imageRef": image["id"], "flavorRef": "42",
        "networks": [{"uuid": net["id"]}]}})
    server = _wait_status(sess, r.json()["server"]["id"])
    # nova read the image from glance and made the port in neutron for the user
    assert server["status"] == "ACTIVE", server.get("fault")
    assert server["addresses"][net["name"]][0]["addr"].startswith("10.77.0.")
    # the user's own token still reaches neither
    assert _status(sess, "network", "/v2.0/ports") == 401
    assert _status(sess, "image", f"/v2/images/{image['id']}") == 401
    assert sess.delete(f"/servers/{server['id']}", endpoint_filter={
        "service_type": "compute"}).status_code == 204
    deadline = time.monotonic() + 30
    while owner.get(cloud.url + f"/network/v2.0/ports?network_id={net['id']}"
                    "&device_owner=compute:nova").json()["ports"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    owner.delete(cloud.url + f"/network/v2.0/networks/{net['id']}")
    owner.delete(cloud.url + f"/image/v2/images/{image['id']}")
