"""The key manager's user flow with the real `openstack` CLI (python-barbicanclient's
`openstack secret ...` commands): store, get (with the payload), list, container create,
order create, delete."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.cli


def test_openstack_secret_cli_flow(cloud):
    user = cloud.make_user(roles=("member",))

    def cli(*args):
        return cloud.cli(*args, user=user)

    stored = cli("secret", "store", "--name", "api-token", "--payload", "t0k3n",
                 "-f", "json")
    ref = stored["Secret href"]
    assert ref.startswith(cloud.url + "/key-manager/v1/secrets/")
    got = cli("secret", "get", ref, "--payload", "-f", "json")
    assert got["Payload"] == "t0k3n"
    listed = cli("secret", "list", "-f", "json")
    assert [s["Name"] for s in listed] == ["api-token"]

    container = cli("secret", "container", "create", "--name", "bundle", "--type", "generic",
                    "--secret", f"token={ref}", "-f", "json")
    container_ref = container["Container href"]
    shown = cli("secret", "container", "get", container_ref, "-f", "json")
    assert shown["Type"] == "generic" and ref in shown["Secrets"]

    order = cli("secret", "order", "create", "--name", "generated", "--algorithm", "aes",
                "--bit-length", "256", "--mode", "cbc", "key", "-f", "json")
    shown = cli("secret", "order", "get", order["Order href"], "-f", "json")
    assert shown["Status"] == "ACTIVE" and shown["Secret href"]
    assert sorted(s["Name"] for s in cli("secret", "list", "-f", "json")) == \
        ["api-token", "generated"]

    cli("secret", "container", "delete", container_ref)
    cli("secret", "delete", ref)
    assert [s["Name"] for s in cli("secret", "list", "-f", "json")] == ["generated"]
    failed = cloud.cli("secret", "get", ref, user=user, check=False)
    assert failed.returncode != 0 and "Secret not found" in failed.stderr + failed.stdout
