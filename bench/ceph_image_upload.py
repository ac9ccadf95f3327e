"""Image upload into the rbd store through the Glance API vs `rbd import` (issue 23).

    POCKETSTACK_TEST_CEPH_DIR=/tmp/ceph-shared .venv/bin/python bench/ceph_image_upload.py \
        [--size-mib 256] [--rounds 3]

Uses the running cluster of $POCKETSTACK_TEST_CEPH_DIR (pools and users of its own, with a
random prefix, dropped at the end). Starts a cloud in this process with
``[image] default_store = rbd``, then alternates, on the same random file: curl -T through
PUT /v2/images/{id}/file (md5 + sha512 while writing to RBD, then snapshot + protect) and
`rbd import` of the file into the same pool (the yardstick; no hashing, no snapshot).
Target: upload >= 70 % of `rbd import`. Prints the load average before and after.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import httpx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
MiB = 1 << 20


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    # glance's [DEFAULT] hashing_algorithm (sha512 by default): md5 and this hash are
    # computed over every byte uploaded, the bulk of the upload's CPU on a small machine
    parser.add_argument("--hashing-algorithm", default="sha512")
    args = parser.parse_args()
    from pocketstack.cloud import Cloud
    from pocketstack.common import ceph_cluster

    directory = os.environ.get("POCKETSTACK_TEST_CEPH_DIR")
    if not directory or not ceph_cluster.running(directory):
        sys.exit("Set POCKETSTACK_TEST_CEPH_DIR to a running cluster (pocketstack ceph start).")
    conf = ceph_cluster.conf_path(directory)
    prefix = f"b{uuid.uuid4().hex[:6]}-"
    names = ceph_cluster.ensure_pools_and_users(directory, prefix=prefix)
    pool = names["image_pool"]
    work = tempfile.mkdtemp(prefix="pocketstack-bench-ceph-")
    path = os.path.join(work, "image.raw")
    with open(path, "wb") as f:
        for _ in range(args.size_mib):
            f.write(os.urandom(MiB))
    size = args.size_mib * MiB
    overrides = {"identity.password_hash_rounds": 4, "ceph.conf": conf,
                 **{f"ceph.{k}": v for k, v in names.items()},
                 "image.default_store": "rbd",
                 "image.hashing_algorithm": args.hashing_algorithm}
    cloud = Cloud(os.path.join(work, "data"), admin_password="bench-secret",
                  overrides=overrides)
    cloud.start(port=0)
    results: dict[str, list[float]] = {"upload": [], "rbd import": [], "file upload": []}
    print(f"{args.size_mib} MiB, {args.rounds} rounds; load average before: {loadavg()}")
    try:
        token = _token(cloud)
        api = httpx.Client(base_url=cloud.url + "/image", timeout=600,
                           headers={"X-Auth-Token": token})
        for round_no in range(args.rounds):
            image = api.post("/v2/images", json={"name": "bench", "disk_format": "raw",
                                                 "container_format": "bare"}).json()
            start = time.perf_counter()
            subprocess.run(["curl", "-sSf", "-T", path, "-X", "PUT",
                            "-H", f"X-Auth-Token: {token}",
                            "-H", "Content-Type: application/octet-stream",
                            f"{cloud.url}/image/v2/images/{image['id']}/file"], check=True)
            results["upload"].append(time.perf_counter() - start)
            assert api.get(f"/v2/images/{image['id']}").json()["status"] == "active"
            api.delete(f"/v2/images/{image['id']}")
            # Diagnostic: the same upload into the file store (hashing without RBD).
            image = api.post("/v2/images", json={"name": "bench", "disk_format": "raw",
                                                 "container_format": "bare"}).json()
            start = time.perf_counter()
            subprocess.run(["curl", "-sSf", "-T", path, "-X", "PUT",
                            "-H", f"X-Auth-Token: {token}", "-H", "X-Image-Meta-Store: file",
                            "-H", "Content-Type: application/octet-stream",
                            f"{cloud.url}/image/v2/images/{image['id']}/file"], check=True)
            results["file upload"].append(time.perf_counter() - start)
            api.delete(f"/v2/images/{image['id']}")
            name = f"import-{round_no}"
            start = time.perf_counter()
            subprocess.run(["rbd", "-c", conf, "import", "--no-progress", "--object-size", "8M",
                            path, f"{pool}/{name}"], check=True)
            results["rbd import"].append(time.perf_counter() - start)
            subprocess.run(["rbd", "-c", conf, "rm", "--no-progress", f"{pool}/{name}"],
                           check=True, capture_output=True)
            print(f"round {round_no + 1}: upload {size / MiB / results['upload'][-1]:.0f} "
                  f"MiB/s, rbd import {size / MiB / results['rbd import'][-1]:.0f} MiB/s, "
                  f"(file store upload {size / MiB / results['file upload'][-1]:.0f} MiB/s), "
                  f"load {loadavg()}")
    finally:
        cloud.stop()
        shutil.rmtree(work, ignore_errors=True)
        ceph_cluster.remove_pools_and_users(directory, prefix)
    up = size / MiB / statistics.median(results["upload"])
    ref = size / MiB / statistics.median(results["rbd import"])
    print(f"median: upload {up:.0f} MiB/s, rbd import {ref:.0f} MiB/s "
          f"-> {100 * up / ref:.0f} % (target >= 70 %); load average after: {loadavg()}")


def _token(cloud) -> str:
    r = httpx.post(cloud.url + "/identity/v3/auth/tokens", json={"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"id": "default"}, "password": "bench-secret"}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}})
    r.raise_for_status()
    return r.headers["X-Subject-Token"]


if __name__ == "__main__":
    main()
