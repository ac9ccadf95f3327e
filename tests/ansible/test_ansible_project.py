"""Ansible's openstack.cloud collection against pocketstack — a realistic project
with a volume attached to its server, created by one playbook
(tests/ansible/project-present.yml), a second run that reports
changed=0, then torn down (project-absent.yml).

Ansible runs from its own virtualenv (``.venv-ansible`` at the repository root, created on
first use and reused): the ``ansible`` package bundles the openstack.cloud collection
(2.5 in ansible 12.3), which needs openstacksdk >= 1.0 and still reads
``openstack.version``, removed in openstacksdk 4.15: hence the pin to 4.14. Set
POCKETSTACK_ANSIBLE_VENV to use another place.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAYBOOKS = os.path.join(ROOT, "tests", "ansible")
ANSIBLE = "ansible==12.3.0"
OPENSTACKSDK = "openstacksdk==4.14.0"


def _ansible_venv() -> str:
    venv = os.environ.get("POCKETSTACK_ANSIBLE_VENV") or os.path.join(ROOT, ".venv-ansible")
    marker = os.path.join(venv, f".installed-{ANSIBLE}-{OPENSTACKSDK}")
    if not os.path.exists(marker):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=300)
        proc = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", ANSIBLE,
                               OPENSTACKSDK], capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            pytest.fail(f"installing {ANSIBLE} and {OPENSTACKSDK} failed:\n{proc.stderr}")
        open(marker, "w").close()
    return venv


def _public_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH,
                            serialization.PublicFormat.OpenSSH).decode()


def _clouds_yaml(path: str, cloud, prefix: str, password: str) -> None:
    def entry(name, user, secret, project):
        return (f"  {name}:\n    auth:\n      auth_url: {cloud.auth_url}\n"
                f"      username: {user}\n      password: {secret}\n"
                f"      project_name: {project}\n      user_domain_id: default\n"
                f"      project_domain_id: default\n    region_name: RegionOne\n"
                f"    interface: public\n    identity_api_version: 3\n")
    with open(path, "w") as f:
        f.write("clouds:\n" + entry("admin", "admin", cloud.admin_password, "admin")
                + entry("member", f"{prefix}-user", password, f"{prefix}-project"))


def _play(venv: str, playbook: str, env: dict, extra: dict) -> dict:
    """Run a playbook; return the PLAY RECAP counters of localhost."""
    args = [os.path.join(venv, "bin", "ansible-playbook"), "-i", "localhost,", "-c", "local",
            os.path.join(PLAYBOOKS, playbook)]
    for key, value in extra.items():
        args += ["-e", f"{key}={value}"]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    recap = re.search(r"localhost\s*:\s*(.*)", proc.stdout.split("PLAY RECAP")[-1])
    if proc.returncode != 0 or recap is None:
        raise AssertionError(f"{playbook} failed ({proc.returncode}):\n{proc.stdout[-6000:]}"
                             f"\n{proc.stderr[-3000:]}")
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", recap.group(1))}


def test_ansible_project_playbook_idempotent(cloud, tmp_path):
    venv = _ansible_venv()
    prefix = f"ccans-{uuid.uuid4().hex[:6]}"
    password = "ansible-secret"
    clouds = tmp_path / "clouds.yaml"
    _clouds_yaml(str(clouds), cloud, prefix, password)
    image = tmp_path / "image.raw"
    image.write_bytes(b"\0" * 65536)
    env = {"PATH": os.path.join(venv, "bin") + ":/usr/bin:/bin",
           "HOME": str(tmp_path), "OS_CLIENT_CONFIG_FILE": str(clouds),
           "ANSIBLE_PYTHON_INTERPRETER": os.path.join(venv, "bin", "python"),
           "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp"),
           "ANSIBLE_HOST_KEY_CHECKING": "false", "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_DEPRECATION_WARNINGS": "false"}
    extra = {"prefix": prefix, "user_password": password, "image_file": str(image),
             "public_key": f"'{_public_key()}'"}
    # Another external network, not reachable from the project's router, as a real cloud
    # (and this session's cloud, after earlier tests) may have: every project sees it.
    # The SDK's auto_ip takes the first external network by id, so a playbook that does
    # not name its floating IP network failed whenever this one sorted first.
    admin = cloud.sdk()
    other = admin.network.create_network(name=f"{prefix}-other-public",
                                         is_router_external=True)
    admin.network.create_subnet(network_id=other.id, cidr="172.24.63.0/24", ip_version=4)
    try:
        first = _play(venv, "project-present.yml", env, extra)
        assert first["changed"] > 10 and first["failed"] == 0, first
        again = _play(venv, "project-present.yml", env, extra)
        assert again["changed"] == 0 and again["failed"] == 0, again
    finally:
        gone = _play(venv, "project-absent.yml", env, extra)
        admin.network.delete_network(other.id)
    assert gone["failed"] == 0
    assert admin.identity.find_project(f"{prefix}-project") is None
    assert admin.network.find_network(f"{prefix}-public") is None
    assert admin.compute.find_flavor(f"{prefix}-flavor") is None
    assert not [s for s in admin.compute.servers(all_projects=True)
                if s.name == f"{prefix}-vm"]
    assert not [f for f in admin.network.ips() if f.description == prefix]
    assert not [v for v in admin.block_storage.volumes(all_projects=True)
                if v.name == f"{prefix}-vol"]


if __name__ == "__main__":  # .ci/run prepares the venv before the tests: `python <this file>`
    print(_ansible_venv())
