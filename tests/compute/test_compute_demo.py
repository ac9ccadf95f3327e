"""`pocketstack demo`: seed 000's setup and boot against a running cloud over
HTTP, idempotent (a second run creates nothing), with the server list in seed 000's shape
and the trace waterfall.

The demo runs in a data dir of its own whose clouds.yaml names an admin of a fresh
project, so its `private` network does not change what other tests' projects see."""
import os
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from pocketstack.cli.demo import (IMAGE, IMAGE_VIRTUAL_SIZE, SERVER, demo, networks_column,
                                  save_image)
from pocketstack.common import image_formats


def _clouds_yaml(cloud, user, path):
    with open(os.path.join(path, "clouds.yaml"), "w") as f:
        f.write("clouds:\n  pocketstack:\n    auth:\n"
                f"      auth_url: {cloud.auth_url}\n      username: {user['name']}\n"
                f"      password: {user['password']}\n      project_id: {user['project_id']}\n"
                "      user_domain_id: default\n    region_name: RegionOne\n"
                "    interface: public\n    identity_api_version: 3\n")


@pytest.fixture(scope="module")
def demo_dir(cloud, tmp_path_factory):
    path = tmp_path_factory.mktemp("demo")
    user = cloud.make_user(roles=("admin", "member"))
    _clouds_yaml(cloud, user, str(path))
    yield str(path), user
    # The demo's server holds room on a shared host: other tests (the capacity one) need
    # the hosts empty again.
    conn = cloud.user_sdk(user)
    for server in conn.compute.servers():
        conn.compute.delete_server(server)
        conn.compute.wait_for_delete(server, wait=60, interval=0.05)


def _run(data_dir, *extra):
    result = CliRunner().invoke(demo, ["--data-dir", data_dir, *extra],
                                env={"COLUMNS": "250"})
    return result


def test_demo_creates_everything_then_nothing(cloud, demo_dir):
    path, user = demo_dir
    first = _run(path)
    assert first.exit_code == 0, first.output + repr(first.exception)
    out = first.output
    for what in ("network private", "subnet private-subnet 10.0.0.0/26",
                 "subnet ipv6-private-subnet fd3c:90a1:3f1f::/64", "keypair demo-key",
                 f"server {SERVER}"):
        assert re.search(rf"created\s+{re.escape(what)}", out), out
    # seed 000's list: private=fd3c:90a1:3f1f:0:f816:3eff:feXX:XXXX, 10.0.0.X
    assert re.search(r"private=fd3c:90a1:3f1f:0:f816:3eff:fe[0-9a-f]{2}:[0-9a-f]{1,4}, "
                     r"10\.0\.0\.\d+", out), out
    assert "ACTIVE" in out and "m1.nano" in out and IMAGE in out
    assert "define and start the guest" in out and "pick a host" in out
    assert os.stat(os.path.join(path, "demo-key.pem")).st_mode & 0o777 == 0o600
    assert os.stat(os.path.join(path, "cirros.img")).st_mode & 0o777 == 0o600

    s = cloud.user_session(user)
    ports = s.get(cloud.url + "/network/v2.0/ports",
                  params={"device_owner": "compute:nova"}).json()["ports"]
    servers = s.get(cloud.url + "/compute/v2.1/servers").json()["servers"]

    second = _run(path, "--no-trace")
    assert second.exit_code == 0, second.output + repr(second.exception)
    assert "Nothing to create" in second.output
    assert "created" not in second.output.replace("0 created", "")
    assert s.get(cloud.url + "/compute/v2.1/servers").json()["servers"] == servers
    assert len(s.get(cloud.url + "/network/v2.0/ports",
                     params={"device_owner": "compute:nova"}).json()["ports"]) == len(ports)
    nets = s.get(cloud.url + "/network/v2.0/networks",
                 params={"name": "private", "project_id": user["project_id"]}).json()
    assert len(nets["networks"]) == 1
    subnets = s.get(cloud.url + "/network/v2.0/subnets",
                    params={"network_id": nets["networks"][0]["id"]}).json()["subnets"]
    assert sorted(x["cidr"] for x in subnets) == ["10.0.0.0/26", "fd3c:90a1:3f1f::/64"]
    images = s.get(cloud.url + "/image/v2/images", params={"name": IMAGE}).json()["images"]
    assert len(images) == 1 and images[0]["status"] == "active"


def test_demo_without_a_cloud_says_what_to_do(tmp_path):
    result = _run(str(tmp_path))
    assert result.exit_code == 1
    assert "no clouds.yaml" in result.output and "pocketstack up" in result.output
    with open(tmp_path / "clouds.yaml", "w") as f:
        f.write("clouds:\n  pocketstack:\n    auth:\n      auth_url: http://127.0.0.1:9/identity\n"
                "      username: a\n      password: b\n      project_name: c\n"
                "      user_domain_id: default\n      project_domain_id: default\n")
    result = _run(str(tmp_path))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "pocketstack up" in result.output


def test_demo_is_a_pocketstack_command():
    from pocketstack.cli.main import main

    result = CliRunner().invoke(main, ["demo", "--help"])
    assert result.exit_code == 0 and "instance_hrp2" in result.output


def test_networks_column():
    addrs = {"private": [{"addr": "fd3c::1"}, {"addr": "10.0.0.3"}], "b": [{"addr": "1.1.1.1"}]}
    assert networks_column(addrs) == "b=1.1.1.1; private=fd3c::1, 10.0.0.3"


def _qemu_img(*args):
    if shutil.which("qemu-img") is None:
        pytest.skip("qemu-img is not installed (apt-get install qemu-utils)")
    return subprocess.run(["qemu-img", *args], capture_output=True, text=True, timeout=60)


def test_demo_image_is_a_valid_qcow2_and_owner_only(tmp_path):
    """The demo's cirros.img was a bare header ("Image does not contain a
    reference count table") and 0644; an old one is replaced."""
    path = str(tmp_path / "cirros.img")
    with open(path, "wb") as f:  # what older demos left
        f.write(image_formats.qcow2_header(IMAGE_VIRTUAL_SIZE).ljust(65536, b"\0"))
    os.chmod(path, 0o644)
    save_image(path)
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert image_formats.problem("qcow2", path) is None  # glance takes it as qcow2
    check = _qemu_img("check", path)
    assert check.returncode == 0, check.stdout + check.stderr
    info = _qemu_img("info", "--output=json", path)
    assert f'"virtual-size": {IMAGE_VIRTUAL_SIZE}' in info.stdout, info.stdout
    raw = tmp_path / "disk.raw"  # what the volume service does for a volume from it
    convert = _qemu_img("convert", "-f", "qcow2", "-O", "raw", path, str(raw))
    assert convert.returncode == 0, convert.stderr
    assert raw.stat().st_size == IMAGE_VIRTUAL_SIZE


@pytest.mark.parametrize("size", [0, 512, 64 << 20, 1 << 30, 1 << 40])
def test_qcow2_image_passes_qemu_img_check(tmp_path, size):
    path = tmp_path / "disk.qcow2"
    path.write_bytes(image_formats.qcow2_image(size))
    check = _qemu_img("check", str(path))
    assert check.returncode == 0, check.stdout + check.stderr
