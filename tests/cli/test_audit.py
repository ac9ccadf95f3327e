"""`pocketstack audit`: it finds each kind of broken invariant it promises, and
says nothing about a healthy server. (A whole clean cloud exiting 0 is pinned by the
restart test, which ends with the command.)"""
import os
import subprocess
import sys
import uuid

import sqlalchemy as sa

from pocketstack.cli.audit import run_checks
from pocketstack.common import db
from pocketstack.compute.models import ComputeNode
from pocketstack.placement import direct

EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")


def _mentioning(problems: dict, text: str) -> dict:
    return {check: [p for p in found if text in p] for check, found in problems.items()
            if any(text in p for p in found)}


def _audit_cli(cloud):
    return subprocess.run([EXE, "audit", "--data-dir", cloud.data_dir], capture_output=True,
                          text=True, timeout=120)


def test_audit_finds_broken_invariants_and_passes_healthy_servers(cloud):
    sdk = cloud.sdk()
    net = sdk.network.create_network(name="audit-net")
    subnet = sdk.network.create_subnet(network_id=net.id, cidr="10.77.0.0/24", ip_version=4)
    image = sdk.image.create_image(name="audit-img", data=b"x" * 64, disk_format="raw",
                                   container_format="bare", visibility="public")
    server = sdk.compute.create_server(name="audit-vm", image_id=image.id, flavor_id="42",
                                       networks=[{"uuid": net.id}])
    server = sdk.compute.wait_for_server(server, status="ACTIVE", wait=60)
    from pocketstack.network import dhcp

    dhcp.wait()
    healthy = run_checks(stuck_after=300)
    assert not _mentioning(healthy, server.id), healthy
    assert not _mentioning(healthy, net.id), healthy

    ghost = str(uuid.uuid4())
    orphan = sdk.network.create_port(network_id=net.id, device_owner="compute:nova",
                                     device_id=ghost)
    with db.reader() as s:
        node = s.scalars(sa.select(ComputeNode).order_by(ComputeNode.id)).first()
    # Placement's allocations behind compute's back: a ghost's, and the server's gone.
    assert direct.claim(ghost, node.uuid, {"VCPU": 1, "MEMORY_MB": 64, "DISK_GB": 1},
                        "p", "u")
    kept = direct.release(server.id)
    dhcp.wait()
    host_file = os.path.join(dhcp.network_dir(net.id), "host")
    os.remove(host_file)
    try:
        found = run_checks(stuck_after=300)
        assert _mentioning(found, orphan.id)["ports and IPs"]
        assert _mentioning(found, ghost)["claims"]
        assert _mentioning(found, server.id)["claims"][0].endswith("holds no claim")
        assert _mentioning(found, f"hypervisor {node.host}")["hypervisor usage"]
        assert _mentioning(found, host_file)["DHCP files"]

        proc = _audit_cli(cloud)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert orphan.id in proc.stdout and ghost in proc.stdout
        assert "problem(s) found" in proc.stdout
    finally:
        sdk.network.delete_port(orphan)
        direct.release(ghost)
        for rp_uuid, entry in kept.items():
            direct.claim(server.id, rp_uuid, entry["resources"], server.project_id, "u")
        sdk.compute.delete_server(server)
        sdk.compute.wait_for_delete(server, wait=60)
        sdk.network.delete_subnet(subnet)
        sdk.network.delete_network(net)
        sdk.image.delete_image(image)
    dhcp.wait()
    after = run_checks(stuck_after=300)
    for ident in (orphan.id, ghost, server.id, net.id):
        assert not _mentioning(after, ident), after


def test_audit_finds_volume_attachments_out_of_step(cloud):
    from pocketstack.volume.models import VolumeAttachment

    sdk = cloud.sdk()
    volume = sdk.block_storage.create_volume(size=1, name="audit-vol")
    sdk.block_storage.wait_for_status(volume, status="available", wait=60)
    assert not _mentioning(run_checks(stuck_after=300), volume.id)
    ghost, attachment_id = str(uuid.uuid4()), str(uuid.uuid4())
    with db.transaction() as s:
        s.add(VolumeAttachment(id=attachment_id, volume_id=volume.id, instance_uuid=ghost,
                               attach_status="attached"))
    try:
        found = _mentioning(run_checks(stuck_after=300), volume.id)["volumes"]
        assert any(ghost in p and "does not exist" in p for p in found), found
        assert any("is available but attached" in p for p in found), found
    finally:
        with db.transaction() as s:
            s.execute(sa.delete(VolumeAttachment).where(VolumeAttachment.id == attachment_id))
        sdk.block_storage.delete_volume(volume)
    assert not _mentioning(run_checks(stuck_after=300), volume.id)


def test_audit_finds_volumes_a_build_left_behind(cloud):
    """A volume made for a server that is gone (its created_for_server metadata), left in
    error or still being created, is reported; one in error the user made is theirs."""
    from pocketstack.compute.manager.volumes import CREATED_FOR
    from pocketstack.volume.models import Volume

    sdk = cloud.sdk()
    ghost = str(uuid.uuid4())
    made = sdk.block_storage.create_volume(size=1, name="", metadata={CREATED_FOR: ghost})
    own = sdk.block_storage.create_volume(size=1, name="audit-own")
    for volume in (made, own):
        sdk.block_storage.wait_for_status(volume, status="available", wait=60)
    try:
        assert not _mentioning(run_checks(stuck_after=300), made.id)
        for status in ("error", "downloading"):
            with db.transaction() as s:
                for volume in (made, own):
                    s.get(Volume, volume.id).status = status
            found = run_checks(stuck_after=300)
            assert _mentioning(found, made.id)["volumes"] == [
                f"volume {made.id}, made for server {ghost}, which does not exist (any "
                f"more), is left in {status}"]
            assert not _mentioning(found, own.id).get("volumes"), found
    finally:
        with db.transaction() as s:
            for volume in (made, own):
                s.get(Volume, volume.id).status = "available"
        for volume in (made, own):
            sdk.block_storage.delete_volume(volume)
