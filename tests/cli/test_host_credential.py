"""`pocketstack host-credential HOST` on the API host, as an operator runs it: it makes the
compute host's own user (the service role on the service project only), prints the
password for the host's config and keeps it in the password file; run again, it resets
the password (the old one no longer logs in). Without a cloud in the data dir it says so."""
from __future__ import annotations

import json
import os
import re
import subprocess

from helpers.up_process import EXE
from keystoneauth1 import exceptions as ks_exceptions


def _run(*args):
    env = {k: v for k, v in os.environ.items() if k != "POCKETSTACK_HOME"}
    return subprocess.run([EXE, "host-credential", *args], capture_output=True, text=True,
                          timeout=120, env=env)


def _login(cloud, password):
    return cloud.session(username="nova-compute-cli-host", password=password,
                         project_name="service").get_token()


def test_host_credential_makes_and_resets_a_hosts_own_user(cloud):
    printed = []
    for _ in range(2):
        result = _run("cli-host", "--data-dir", cloud.data_dir)
        assert result.returncode == 0, result.stderr
        found = re.search(r"^\[service_user\]\nhost_password = (\S+)$", result.stdout, re.M)
        assert found, result.stdout
        printed.append(found.group(1))
        with open(os.path.join(cloud.data_dir, "service-passwords")) as f:
            assert json.load(f)["nova-compute-cli-host"] == printed[-1]
    assert printed[0] != printed[1]
    assert _login(cloud, printed[1])
    try:
        _login(cloud, printed[0])
        raise AssertionError("the reset password still logs in")
    except ks_exceptions.Unauthorized:
        pass
    s, identity = cloud.session(), cloud.url + "/identity/v3"
    user = s.get(identity + "/users", params={"name": "nova-compute-cli-host"}).json()["users"]
    grants = s.get(identity + "/role_assignments", params={
        "user.id": user[0]["id"], "include_names": 1}).json()["role_assignments"]
    assert [(g["role"]["name"], g["scope"]["project"]["name"]) for g in grants] == [
        ("service", "service")]
    # An operator cuts a host off by disabling its user: not guarded like nova's.
    assert s.patch(identity + f"/users/{user[0]['id']}", json={"user": {"enabled": False}},
                   raise_exc=False).status_code == 200


def test_host_credential_without_a_cloud_says_so(tmp_path):
    result = _run("cli-host", "--data-dir", str(tmp_path))
    assert result.returncode == 1
    assert "clouds.yaml" in result.stderr and "Traceback" not in result.stderr
