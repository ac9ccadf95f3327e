"""Issue 23, compute: POST /servers -> ACTIVE of a real tiny guest whose root disk is an
RBD clone of the image (``[libvirt] images_type = rbd``) next to the same boot with a
qcow2 overlay on the host's cached image (``images_type = qcow2``) and a boot from a volume
of the rbd backend (``--boot-from-volume``: the volume a clone too), in the same run.

    sudo .venv/bin/python bench/ceph_boot.py [--runs 5] [--ceph-dir /tmp/ceph-shared] [--record]

Starts an in-process cloud with compute_driver = libvirt on a temporary data dir, pools
and cephx users of its own (random prefix) in the cluster of ``--ceph-dir`` (started if
needed, as `pocketstack ceph start` does), the image service's rbd store with
show_image_direct_url, and registers the tiny guest's kernel and ramdisk plus a 64 MiB
raw root image (in the rbd store: the clone source). One warm-up boot of each kind
(the qcow2 side then has the image in its cache, as a busy host does), then ``--runs``
alternated pairs, each server deleted before the next; no network (the guest's own boot
is not part of ACTIVE). Prints p50/min/max with the load average; ``--record`` appends
them to bench/results/issue23_ceph.md. Needs root, libvirtd/QEMU and Ceph.
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
TIMEOUT = 180.0


def boot(conn, image, kind: str) -> float:
    from pocketstack.common import config

    # read per spawn; a boot from volume has no image disk of its own
    config.CONF.set_override("images_type", "rbd" if kind == "bfv" else kind,
                             group="libvirt")
    t0 = time.monotonic()
    if kind == "bfv":  # `openstack server create --boot-from-volume 1`: an rbd clone
        server = conn.compute.create_server(
            name="bench-bfv", image_id="", flavor_id="42", networks="none",
            block_device_mapping_v2=[{"boot_index": 0, "uuid": image.id,
                                      "source_type": "image", "destination_type": "volume",
                                      "volume_size": 1, "delete_on_termination": True}])
    else:
        server = conn.compute.create_server(name=f"bench-{kind}", image_id=image.id,
                                            flavor_id="42", networks="none")
    deadline = t0 + TIMEOUT
    while True:
        current = conn.compute.get_server(server.id)
        if current.status == "ACTIVE":
            took = time.monotonic() - t0
            break
        if current.status == "ERROR" or time.monotonic() > deadline:
            raise SystemExit(f"{kind} boot: {current.status} {current.fault}")
        time.sleep(0.05)
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, interval=0.1, wait=120)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ceph-dir", default=os.environ.get("POCKETSTACK_TEST_CEPH_DIR")
                        or "/tmp/ceph-shared")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    if not 1 <= args.runs <= 20:
        parser.error("--runs 1-20")
    from pocketstack.cli import tiny_image
    from pocketstack.cloud import Cloud
    from pocketstack.common import ceph_cluster

    conf = ceph_cluster.start(args.ceph_dir)
    prefix = f"b{uuid.uuid4().hex[:6]}-"
    names = ceph_cluster.ensure_pools_and_users(args.ceph_dir, prefix=prefix)
    data_dir = tempfile.mkdtemp(prefix="ceph-bench-")
    overrides = {"compute_driver": "libvirt", "identity.password_hash_rounds": 4,
                 "libvirt.host_name": f"lrb-bench-{uuid.uuid4().hex[:4]}",
                 "ceph.conf": conf, **{f"ceph.{k}": v for k, v in names.items()},
                 "ceph.secret_uuid": str(uuid.uuid4()), "image.default_store": "rbd",
                 "image.show_image_direct_url": True, "volume.enabled_backends": ["rbd"]}
    cloud = Cloud(data_dir, admin_password="bench-secret", overrides=overrides)
    cloud.start(port=0)
    loads = [os.getloadavg()[0]]
    times: dict[str, list[float]] = {"rbd": [], "qcow2": [], "bfv": []}
    try:
        import openstack
        from keystoneauth1 import session
        from keystoneauth1.identity import v3

        auth = v3.Password(auth_url=cloud.auth_url, username="admin",
                           password="bench-secret", project_name="admin",
                           user_domain_id="default", project_domain_id="default")
        conn = openstack.connection.Connection(session=session.Session(auth=auth),
                                               region_name="RegionOne")
        paths = tiny_image.build(data_dir)
        kernel = conn.image.create_image(name="bench-kernel", disk_format="aki",
                                         container_format="aki", filename=paths["kernel"])
        ramdisk = conn.image.create_image(name="bench-ramdisk", disk_format="ari",
                                          container_format="ari", filename=paths["ramdisk"])
        image = conn.image.create_image(
            name="bench-raw", disk_format="raw", container_format="bare",
            data=b"\0" * (64 << 20), kernel_id=kernel.id, ramdisk_id=ramdisk.id,
            os_command_line=tiny_image.COMMAND_LINE, hypervisor_type="qemu")
        for kind in times:  # warm-up: the qcow2 side's cache, libvirt's secret
            boot(conn, image, kind)
        for _ in range(args.runs):
            for kind in times:
                times[kind].append(boot(conn, image, kind))
            loads.append(os.getloadavg()[0])
            print(f"[load {loads[-1]:.1f}] " + ", ".join(
                f"{k} {v[-1]:.2f} s" for k, v in times.items()), file=sys.stderr, flush=True)
        for each in (image, kernel, ramdisk):
            conn.image.delete_image(each, ignore_missing=True)
    finally:
        for service in cloud.workers:  # the compute hosts among them
            driver = getattr(getattr(service, "manager", None), "driver", None)
            if hasattr(driver, "_secrets"):
                driver._secrets().undefine_all()  # libvirtd outlives the cloud
        cloud.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
        ceph_cluster.remove_pools_and_users(args.ceph_dir, prefix)
    load = os.getloadavg()

    def line(kind, what):
        v = times[kind]
        return (f"- {what}: p50 {statistics.median(v):.2f} s (min {min(v):.2f}, max "
                f"{max(v):.2f}; {', '.join(f'{t:.2f}' for t in v)})")
    lines = [
        f"## compute: boot from image (rbd clone, qcow2 overlay) and from an rbd volume — "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {platform.node()} "
        f"({os.cpu_count()} cores), load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        f"(1-min load during the runs: {', '.join(f'{x:.1f}' for x in loads)})",
        "",
        f"Real libvirt/QEMU host (TCG), tiny guest, 64 MiB raw image in the rbd store, "
        f"flavor m1.nano (1 GiB root), no network; POST /servers -> ACTIVE, "
        f"{args.runs} alternated rounds after one warm-up boot each (`bench/ceph_boot.py`).",
        "",
        line("rbd", "images_type = rbd (root disk a clone of the image's snapshot, grown "
                    "to 1 GiB)"),
        line("qcow2", "images_type = qcow2 (overlay on the cached image)"),
        line("bfv", "boot from volume on the rbd backend (the volume a clone of the "
                    "image's snapshot, attached as the root disk)"),
        f"- ratio of p50s rbd/qcow2: "
        f"{statistics.median(times['rbd']) / statistics.median(times['qcow2']):.2f}; "
        f"boot from volume / boot from image (rbd): "
        f"{statistics.median(times['bfv']) / statistics.median(times['rbd']):.2f}",
        "",
    ]
    print("\n".join(lines))
    if args.record:
        with open(os.path.join(HERE, "results", "issue23_ceph.md"), "a") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
