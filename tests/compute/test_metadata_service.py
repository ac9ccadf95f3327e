"""The metadata a guest gets (nova's metadata API, neutron's isolated metadata
lookup by network and source address) and its config drive, read back with pycdlib.
Unprivileged: servers on the simulated hosts, the network agent's metadata proxy on
127.0.0.1 forwarding to compute's metadata API, which is also asked directly
at <cloud>/metadata to see that it trusts signed requests only."""
from __future__ import annotations

import base64
import io
import json
import urllib.error
import urllib.request

import pytest

from helpers.guestnet import PUBLIC_KEY, Project


@pytest.fixture(scope="module")
def project(cloud):
    p = Project(cloud)
    try:
        yield p
    finally:
        p.cleanup()


@pytest.fixture(scope="module")
def booted(project):
    net, sub = project.network("10.31.0.0/24", dns_nameservers=["10.31.0.53"])
    server = project.boot(net.id, user_data=b"#!/bin/sh\necho hello from user data\n",
                          metadata={"role": "web"})
    return net, sub, server, project.port_of(server.id)


@pytest.fixture
def metadata_server(booted):
    from pocketstack.network.agent.metadata_proxy import MetadataProxy

    server = MetadataProxy(booted[0].id, trust_forwarded=True)
    try:
        yield server
    finally:
        server.stop()


def fetch(server, path, source_ip, method="GET", data=None):
    request = urllib.request.Request(f"http://127.0.0.1:{server.port}{path}", method=method,
                                     data=data, headers={"X-Forwarded-For": source_ip})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


def test_meta_data_json_is_novas(booted, metadata_server, project):
    net, _, server, port = booted
    ip = port.fixed_ips[0]["ip_address"]
    status, ctype, body = fetch(metadata_server, "/openstack/latest/meta_data.json", ip)
    assert status == 200 and ctype == "application/json"
    md = json.loads(body)
    assert md["uuid"] == server.id
    assert md["name"] == server.name
    assert md["hostname"] == f"{server.name}.openstacklocal"
    assert md["project_id"] == project.user["project_id"]
    assert md["availability_zone"] == "nova"
    assert md["launch_index"] == 0
    assert md["meta"] == {"role": "web"}
    assert md["public_keys"] == {project.key.name: PUBLIC_KEY}
    assert md["keys"] == [{"name": project.key.name, "type": "ssh", "data": PUBLIC_KEY}]
    assert md["devices"] == [] and len(base64.b64decode(md["random_seed"])) == 512
    # an older version shows what it had then
    old = json.loads(fetch(metadata_server, "/openstack/2012-08-10/meta_data.json", ip)[2])
    assert "project_id" not in old and "random_seed" not in old and old["uuid"] == server.id


def test_listings_user_data_and_vendor_data(booted, metadata_server):
    ip = booted[3].fixed_ips[0]["ip_address"]
    versions = fetch(metadata_server, "/openstack", ip)[2].decode().split("\n")
    assert versions[0] == "2012-08-10" and versions[-1] == "latest"
    files = fetch(metadata_server, "/openstack/latest/", ip)[2].decode().split("\n")
    assert files == ["meta_data.json", "user_data", "password", "vendor_data.json",
                     "network_data.json", "vendor_data2.json"]
    assert fetch(metadata_server, "/openstack/latest/user_data", ip)[2] == \
        b"#!/bin/sh\necho hello from user data\n"
    assert json.loads(fetch(metadata_server, "/openstack/latest/vendor_data2.json", ip)[2]) == {}
    assert fetch(metadata_server, "/openstack/latest/nothing", ip)[0] == 404
    assert fetch(metadata_server, "/openstack/1999-01-01/meta_data.json", ip)[0] == 404


def test_network_data_json(booted, metadata_server):
    net, sub, _, port = booted
    ip = port.fixed_ips[0]["ip_address"]
    data = json.loads(fetch(metadata_server, "/openstack/latest/network_data.json", ip)[2])
    assert data["links"] == [{"id": "tap" + port.id[:11], "vif_id": port.id,
                              "type": port.binding_vif_type, "mtu": net.mtu,
                              "ethernet_mac_address": port.mac_address}]
    assert data["networks"] == [{"id": "network0", "type": "ipv4_dhcp",
                                 "link": "tap" + port.id[:11], "network_id": net.id,
                                 "services": [{"type": "dns", "address": "10.31.0.53"}]}]
    assert data["services"] == [{"type": "dns", "address": "10.31.0.53"}]


def test_ec2_tree(booted, metadata_server, project):
    _, _, server, port = booted
    ip = port.fixed_ips[0]["ip_address"]
    listing = fetch(metadata_server, "/latest/meta-data/", ip)[2].decode().split("\n")
    for key in ("ami-id", "hostname", "instance-id", "local-ipv4", "public-keys/",
                "placement/", "instance-type"):
        assert key in listing
    assert fetch(metadata_server, "/latest/meta-data/local-ipv4", ip)[2].decode() == ip
    assert fetch(metadata_server, "/2009-04-04/meta-data/hostname", ip)[2].decode() == \
        f"{server.name}.openstacklocal"
    assert fetch(metadata_server, "/latest/meta-data/instance-id", ip)[2].decode() == \
        "i-" + server.id.replace("-", "")[:8]
    assert fetch(metadata_server, "/latest/meta-data/public-keys/", ip)[2].decode() == \
        f"0={project.key.name}"
    assert fetch(metadata_server, "/latest/meta-data/public-keys/0/openssh-key",
                 ip)[2].decode() == PUBLIC_KEY
    assert fetch(metadata_server, "/latest/meta-data/instance-type", ip)[2] == b"m1.nano"
    assert fetch(metadata_server, "/latest/user-data", ip)[2].startswith(b"#!/bin/sh")
    assert fetch(metadata_server, "/latest/meta-data/nothing", ip)[0] == 404


def test_unknown_source_address_gets_nothing(booted, metadata_server):
    status, _, body = fetch(metadata_server, "/openstack/latest/meta_data.json", "10.31.0.250")
    assert status == 404 and b"uuid" not in body


def test_same_address_on_another_network_is_not_this_server(booted, project):
    """The network is part of the lookup: the same fixed IP elsewhere is another guest."""
    from pocketstack.network.agent.metadata_proxy import MetadataProxy

    other, _ = project.network("10.31.0.0/24")
    server = MetadataProxy(other.id, trust_forwarded=True)
    try:
        ip = booted[3].fixed_ips[0]["ip_address"]
        assert fetch(server, "/openstack/latest/meta_data.json", ip)[0] == 404
    finally:
        server.stop()


def test_password_is_posted_once(booted, metadata_server):
    ip = booted[3].fixed_ips[0]["ip_address"]
    assert fetch(metadata_server, "/openstack/latest/password", ip)[2] == b""
    assert fetch(metadata_server, "/openstack/latest/password", ip, "POST", b"x" * 300)[0] == 400
    assert fetch(metadata_server, "/openstack/latest/password", ip, "POST", b"s3cret")[0] == 200
    assert fetch(metadata_server, "/openstack/latest/password", ip, "POST", b"again")[0] == 409
    assert fetch(metadata_server, "/openstack/latest/password", ip)[2] == b"s3cret"
    assert fetch(metadata_server, "/openstack/latest/meta_data.json", ip, "DELETE")[0] == 405


# --- compute's metadata API, asked directly -------------------------------------------

def ask_api(cloud, path, headers=None, method="GET"):
    import httpx

    r = httpx.request(method, cloud.url + "/metadata" + path, headers=headers or {},
                      timeout=30)
    return r.status_code, r.headers.get("content-type"), r.content


def signed(instance_id, tenant_id, signature=None):
    from pocketstack.clients.metadata import sign

    return {"X-Instance-ID": instance_id, "X-Tenant-ID": tenant_id,
            "X-Instance-ID-Signature": sign(instance_id) if signature is None else signature,
            "X-Forwarded-For": "10.31.0.9"}


def test_metadata_api_answers_a_signed_request(cloud, booted, project):
    server = booted[2]
    status, ctype, body = ask_api(cloud, "/openstack/latest/meta_data.json",
                                  signed(server.id, project.user["project_id"]))
    assert status == 200 and ctype == "application/json"
    assert json.loads(body)["uuid"] == server.id
    # a trailing slash is the guest's: the listing either way
    assert ask_api(cloud, "/openstack/latest/", signed(server.id, project.user["project_id"])
                   )[2].decode().split("\n")[0] == "meta_data.json"
    # the versions, as nova answers them to anyone
    assert ask_api(cloud, "/")[2].decode().split("\n")[-1] == "latest"


def test_metadata_api_refuses_unsigned_and_badly_signed_requests(cloud, booted, project):
    server, tenant = booted[2], project.user["project_id"]
    path = "/openstack/latest/meta_data.json"
    assert ask_api(cloud, path)[0] == 403  # no headers at all
    assert ask_api(cloud, path, {"X-Instance-ID": server.id, "X-Tenant-ID": tenant})[0] == 403
    status, _, body = ask_api(cloud, path, signed(server.id, tenant, signature="0" * 64))
    assert status == 403 and b"uuid" not in body
    # a signature of another instance does not do for this one
    other = signed("00000000-0000-0000-0000-000000000000", tenant)["X-Instance-ID-Signature"]
    assert ask_api(cloud, path, signed(server.id, tenant, signature=other))[0] == 403
    assert ask_api(cloud, "/openstack/latest/password",
                   signed(server.id, tenant, signature="0" * 64), method="POST")[0] == 403


def test_metadata_api_hides_an_instance_from_another_tenant(cloud, booted, project):
    server = booted[2]
    path = "/openstack/latest/meta_data.json"
    status, _, body = ask_api(cloud, path, signed(server.id, "another-project"))
    assert status == 404 and server.id.encode() not in body
    missing = "11111111-2222-3333-4444-555555555555"
    assert ask_api(cloud, path, signed(missing, project.user["project_id"]))[0] == 404


def test_proxy_without_compute_says_so(booted, monkeypatch):
    """Compute's metadata API unreachable: the guest gets a 503, not a hang or a 500."""
    from pocketstack.common import config
    from pocketstack.network.agent.metadata_proxy import MetadataProxy

    sock = __import__("socket").socket()
    sock.bind(("127.0.0.1", 0))  # a port nobody listens on
    dead = f"http://127.0.0.1:{sock.getsockname()[1]}/metadata"
    config.CONF.set_override("metadata_url", dead, group="network")
    server = MetadataProxy(booted[0].id, trust_forwarded=True)
    try:
        ip = booted[3].fixed_ips[0]["ip_address"]
        assert fetch(server, "/openstack/latest/meta_data.json", ip)[0] == 503
        assert fetch(server, "/openstack/latest/meta_data.json", "10.31.0.250")[0] == 404
    finally:
        server.stop()
        sock.close()
        config.CONF.clear_override("metadata_url", group="network")


# --- config drive ----------------------------------------------------------------------

def _read_iso(path):
    import pycdlib

    iso = pycdlib.PyCdlib()
    iso.open(path)
    try:
        label = iso.pvd.volume_identifier.decode().strip()
        files = {}
        for root, _, names in iso.walk(rr_path="/"):
            for name in names:
                out = io.BytesIO()
                rr = f"{root.rstrip('/')}/{name}"
                iso.get_file_from_iso_fp(out, rr_path=rr)
                files[rr.lstrip("/")] = out.getvalue()
        joliet = set()
        for root, _, names in iso.walk(joliet_path="/"):
            joliet.update(f"{root.rstrip('/')}/{n}".lstrip("/") for n in names)
    finally:
        iso.close()
    return label, files, joliet


def test_config_drive_contents(booted, tmp_path):
    from pocketstack.compute.metadata.configdrive import build_config_drive

    net, _, server, port = booted
    network_info = [{"port_id": port.id, "network_id": net.id,
                     "fixed_ips": [{"ip_address": port.fixed_ips[0]["ip_address"],
                                    "version": 4}]}]
    path = build_config_drive({"uuid": server.id}, network_info, str(tmp_path / "disk.config"))
    label, files, joliet = _read_iso(path)
    assert label == "config-2"
    md = json.loads(files["openstack/latest/meta_data.json"])
    assert md["uuid"] == server.id and md["hostname"] == f"{server.name}.openstacklocal"
    assert files["openstack/latest/user_data"] == b"#!/bin/sh\necho hello from user data\n"
    assert json.loads(files["openstack/latest/network_data.json"])["links"][0]["vif_id"] == \
        port.id
    assert json.loads(files["openstack/latest/vendor_data2.json"]) == {}
    assert "openstack/2012-08-10/meta_data.json" in files
    assert "openstack/2015-10-15/network_data.json" in files
    assert "openstack/latest/password" not in files
    assert json.loads(files["ec2/latest/meta-data.json"])["local-ipv4"] == \
        port.fixed_ips[0]["ip_address"]
    assert "openstack/latest/meta_data.json" in joliet


def test_config_drive_requested_and_forced(project, booted):
    from pocketstack.common import config
    from pocketstack.compute.metadata.configdrive import required

    net = booted[0]
    asked = project.boot(net.id, config_drive=True)
    assert project.conn.compute.get_server(asked.id).has_config_drive in (True, "True")
    plain = project.boot(net.id)
    assert project.conn.compute.get_server(plain.id).has_config_drive in ("", False)
    config.CONF.set_override("force_config_drive", True)
    try:
        forced = project.boot(net.id)
        assert project.conn.compute.get_server(forced.id).has_config_drive in (True, "True")
        assert required({"config_drive": ""})
    finally:
        config.CONF.clear_override("force_config_drive")
    assert not required({"config_drive": ""}) and required({"config_drive": "True"})


def test_bad_requests_get_clear_4xx(booted, metadata_server):
    import http.client

    ip = booted[3].fixed_ips[0]["ip_address"]
    for path in ("/openstack/latest/../../../etc/passwd", "/openstack/latest/meta_data.json/x",
                 "/latest/meta-data/public-keys/0/nothing", "/2001-01-01/meta-data/",
                 "/openstack/latest/password/extra"):
        assert fetch(metadata_server, path, ip)[0] == 404, path
    assert fetch(metadata_server, "/latest/meta-data/hostname?x=1", ip)[0] == 200
    assert fetch(metadata_server, "/latest/meta-data/hostname", ip, "POST", b"x")[0] == 405
    conn = http.client.HTTPConnection("127.0.0.1", metadata_server.port, timeout=10)
    conn.putrequest("POST", "/openstack/latest/password")
    conn.putheader("X-Forwarded-For", ip)
    conn.putheader("Content-Length", "not-a-number")
    conn.endheaders()
    assert conn.getresponse().status == 400
    conn.close()
    conn = http.client.HTTPConnection("127.0.0.1", metadata_server.port, timeout=10)
    conn.request("PATCH", "/openstack/latest/meta_data.json", headers={"X-Forwarded-For": ip})
    assert conn.getresponse().status == 501  # http.server's answer to unknown methods
    conn.close()
