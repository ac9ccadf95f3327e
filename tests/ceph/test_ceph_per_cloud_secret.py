"""Two Ceph clouds on one machine share its libvirtd: each defines the libvirt secret its
guests' QEMU authenticates to Ceph with under a uuid of its own (derived from its cloud
id, [ceph] secret_uuid unset as an operator leaves it), so one cloud's guests never
rewrite the key the other's use. Needs the real libvirtd (`make libvirt`) and Ceph."""
from __future__ import annotations

import base64
import os
import shutil
import subprocess

import pytest
from ceph_helpers import ceph_overrides

from helpers.cloud import own_cloud

pytestmark = pytest.mark.skipif(shutil.which("virsh") is None or not os.path.exists(
    "/var/run/libvirt/libvirt-sock"), reason="needs a running libvirtd (make libvirt)")


def _user_of_its_own(ceph, name: str) -> str:
    """A cephx user with its own key, in the keyring beside ceph.conf (a second cloud's
    cluster would hold another key for its volume user: this stands in for it)."""
    keyring = os.path.join(ceph.directory, f"ceph.client.{name}.keyring")
    subprocess.run(["ceph", "-c", ceph.conf, "auth", "get-or-create", f"client.{name}",
                    "mon", "profile rbd", "-o", keyring], check=True, capture_output=True)
    return name


def _define_secret(cloud, user: str) -> tuple[str, bytes]:
    """What a guest's boot does on the host: the compute user's secret defined, holding
    its key. Returns (secret uuid, key)."""
    from pocketstack.common import ceph
    from pocketstack.compute.virt.libvirt.host import Host
    from pocketstack.compute.virt.libvirt.rbd import Secrets, secret_uuid_for

    with cloud.cloud.runtime.activated():
        secrets = Secrets(Host("qemu:///system"))
        secret_uuid = secret_uuid_for(user)
        secrets.ensure(secret_uuid, user)
        return secret_uuid, base64.b64decode(ceph.key_of(user))


def _value(secret_uuid: str) -> bytes:
    out = subprocess.run(["virsh", "-c", "qemu:///system", "secret-get-value", secret_uuid],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    return base64.b64decode(out.strip())


def test_each_cloud_keeps_its_own_libvirt_secret(ceph):
    names = ceph.names
    user_b = _user_of_its_own(ceph, f"{names['volume_user']}-b")
    overrides_a = {k: v for k, v in ceph_overrides(ceph).items() if k != "ceph.secret_uuid"}
    overrides_b = {**overrides_a, "ceph.volume_user": user_b, "ceph.compute_user": user_b}
    made = []
    try:
        with own_cloud("secret-a", **overrides_a) as a, \
                own_cloud("secret-b", **overrides_b) as b:
            uuid_a, key_a = _define_secret(a, names["volume_user"])
            made.append(uuid_a)
            uuid_b, key_b = _define_secret(b, user_b)
            made.append(uuid_b)
            assert key_a != key_b
            assert uuid_a != uuid_b
            # B's guest defined its secret: A's still holds A's key
            assert _value(uuid_a) == key_a
            assert _value(uuid_b) == key_b
    finally:
        for secret_uuid in made:
            subprocess.run(["virsh", "-c", "qemu:///system", "secret-undefine", secret_uuid],
                           capture_output=True, timeout=30)
        subprocess.run(["ceph", "-c", ceph.conf, "auth", "rm", f"client.{user_b}"],
                       capture_output=True)
        keyring = os.path.join(ceph.directory, f"ceph.client.{user_b}.keyring")
        if os.path.exists(keyring):
            os.unlink(keyring)

