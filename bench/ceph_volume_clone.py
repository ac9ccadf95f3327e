"""Volume from an image on rbd (issue 23): POST /volumes with imageRef → available, for a
1 GiB and a 64 MiB raw image in the image service's rbd store, next to `rbd import` of the
same file in the same run. The volume is a copy-on-write clone of the image's snapshot, so
its time should be flat in the image size (target: <= 100 ms per clone). References from the
same run: `rbd clone` of the same snapshot through the Python `rbd` bindings (the floor any
clone pays), and a blank volume (POST /volumes without an image: the API, scheduler and
polling without the clone).

    .venv/bin/python bench/ceph_volume_clone.py [--ceph-dir /tmp/ceph-shared] [--clones 10]
        [--results bench/results/issue23_ceph.md]

Uses the running cluster of --ceph-dir (`pocketstack ceph start DIR`, default
$POCKETSTACK_TEST_CEPH_DIR) with pools and users of its own (a random prefix, removed at
the end), runs `pocketstack up` in a child process with the rbd image store and the rbd
volume backend, and talks to it over HTTP with one keep-alive client polling every 2 ms.
Needs the image service's rbd store (pocketstack.image.rbd_store). Prints the load average
before and after, and appends the figures to --results.
"""
from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import httpx

sys.path.insert(0, os.path.dirname(__file__))
from network_bench import free_port, token_for  # noqa: E402

EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")
MiB, GiB = 1 << 20, 1 << 30
BUDGET = 900.0


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def start(data_dir: str, conf: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    path = os.path.join(os.path.dirname(data_dir), "bench.conf")
    with open(path, "w") as f:
        f.write(conf)
    log = open(os.path.join(os.path.dirname(data_dir), "up.log"), "wb")
    proc = subprocess.Popen([EXE, "up", "--data-dir", data_dir, "--port", str(port),
                             "--admin-password", "bench", "--config-file", path],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/identity/v3", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("pocketstack up did not start; see " + log.name)


def make_file(path: str, size: int) -> None:
    """Data in every byte (a repeated random block: cheap to make, nothing sparse)."""
    block = os.urandom(4 * MiB)
    with open(path, "wb") as f:
        for _ in range(size // len(block)):
            f.write(block)


def wait(client, path, done, end):
    while time.monotonic() < end:
        resp = client.get(path)
        if done(resp):
            return resp
        time.sleep(0.002)
    raise SystemExit(f"timed out waiting on {path}")


def time_volume(volumes, body: dict, end: float) -> tuple[float, float]:
    """(ms until the POST answered, ms until the client saw 'available'); then deletes it."""
    t0 = time.perf_counter()
    volume = volumes.post("/volumes", json={"volume": body}).json()["volume"]
    posted = (time.perf_counter() - t0) * 1000
    got = wait(volumes, f"/volumes/{volume['id']}", lambda r: r.json()[
        "volume"]["status"] in ("available", "error"), end).json()["volume"]
    total = (time.perf_counter() - t0) * 1000
    if got["status"] != "available":
        raise SystemExit(f"volume went to error: {got}")
    volumes.delete(f"/volumes/{volume['id']}").raise_for_status()
    wait(volumes, f"/volumes/{volume['id']}", lambda r: r.status_code == 404, end)
    return posted, total


def rbd_clone_ms(conf_path: str, direct_url: str, pool: str, rounds: int) -> list[float]:
    """`rbd clone` of the image's snapshot into ``pool`` through the bindings (the admin
    user, one connection kept open as the cloud keeps its own), removed after each."""
    import rados
    import rbd

    _, src_pool, src_image, src_snap = direct_url[len("rbd://"):].split("/")
    times = []
    with rados.Rados(conffile=conf_path) as cluster:
        with cluster.open_ioctx(src_pool) as src, cluster.open_ioctx(pool) as dst:
            for i in range(rounds):
                name = f"bench-clone-{i}"
                t0 = time.perf_counter()
                rbd.RBD().clone(src, src_image, src_snap, dst, name)
                times.append((time.perf_counter() - t0) * 1000)
                rbd.RBD().remove(dst, name)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ceph-dir", default=os.environ.get("POCKETSTACK_TEST_CEPH_DIR"))
    parser.add_argument("--clones", type=int, default=10)
    parser.add_argument("--results", default=os.path.join(os.path.dirname(__file__),
                                                          "results", "issue23_ceph.md"))
    args = parser.parse_args()
    if not args.ceph_dir:
        raise SystemExit("--ceph-dir (or $POCKETSTACK_TEST_CEPH_DIR): a running cluster")
    try:
        import pocketstack.image.rbd_store  # noqa: F401
    except ImportError:
        raise SystemExit("the image service's rbd store is not in this tree") from None
    from pocketstack.common import ceph_cluster

    conf_path = ceph_cluster.conf_path(args.ceph_dir)
    prefix = f"b{uuid.uuid4().hex[:6]}-"
    names = ceph_cluster.ensure_pools_and_users(args.ceph_dir, prefix=prefix)
    tmp = tempfile.mkdtemp(prefix="pocketstack-cephbench-")
    conf = ("[identity]\npassword_hash_rounds = 4\n[volume]\nenabled_backends = rbd\n"
            "[image]\ndefault_store = rbd\nshow_image_direct_url = true\n[ceph]\n"
            f"conf = {conf_path}\n" + "".join(f"{k} = {v}\n" for k, v in names.items()))
    load_before = loadavg()
    proc, url = start(os.path.join(tmp, "data"), conf)
    end = time.monotonic() + BUDGET
    rows = []
    try:
        token, project = token_for(url)
        headers = {"X-Auth-Token": token, "OpenStack-API-Version": "volume 3.60"}
        volumes = httpx.Client(base_url=f"{url}/volume/v3/{project}", headers=headers,
                               timeout=60)
        images = httpx.Client(base_url=f"{url}/image/v2", headers=headers, timeout=600)
        for size in (GiB, 64 * MiB):
            path = os.path.join(tmp, f"image-{size}.raw")
            make_file(path, size)
            start_import = time.perf_counter()
            subprocess.run(["rbd", "-c", conf_path, "import", path,
                            f"{names['image_pool']}/bench-import"], check=True,
                           capture_output=True)
            import_s = time.perf_counter() - start_import
            subprocess.run(["rbd", "-c", conf_path, "rm", f"{names['image_pool']}/"
                            "bench-import"], check=True, capture_output=True)
            image = images.post("/images", json={"name": f"bench-{size}", "disk_format":
                                                 "raw", "container_format": "bare"}).json()
            start_upload = time.perf_counter()
            with open(path, "rb") as f:
                images.put(f"/images/{image['id']}/file", content=f, headers={
                    "Content-Type": "application/octet-stream"}).raise_for_status()
            upload_s = time.perf_counter() - start_upload
            assert images.get(f"/images/{image['id']}").json()["direct_url"].startswith(
                "rbd://")
            direct_url = images.get(f"/images/{image['id']}").json()["direct_url"]
            # Alternate the three so load changes hit each alike.
            times, posts, blanks, clones = [], [], [], []
            for _ in range(args.clones):
                posted, total = time_volume(volumes, {"size": 1, "imageRef": image["id"]},
                                            end)
                times.append(total)
                posts.append(posted)
                blanks.append(time_volume(volumes, {"size": 1}, end)[1])
                clones += rbd_clone_ms(conf_path, direct_url, names["volume_pool"], 1)
            images.delete(f"/images/{image['id']}")
            os.unlink(path)
            label = "1 GiB" if size == GiB else "64 MiB"
            row = (label, statistics.median(times), max(times), import_s * 1000,
                   upload_s * 1000, statistics.median(posts), statistics.median(blanks),
                   statistics.median(clones))
            rows.append(row)
            print(f"{label}: volume from image (clone) median {row[1]:.1f} ms (POST "
                  f"answered {row[5]:.1f} ms), max {row[2]:.1f} ms over {len(times)}; "
                  f"blank volume {row[6]:.1f} ms; rbd clone (bindings) {row[7]:.1f} ms; "
                  f"rbd import {row[3]:.0f} ms; image upload {row[4]:.0f} ms; "
                  f"all clone times {[round(t) for t in times]}", flush=True)
    finally:
        proc.terminate()
        proc.wait(30)
        ceph_cluster.remove_pools_and_users(args.ceph_dir, prefix)
    load_after = loadavg()
    print(f"load average before {load_before}, after {load_after} ({os.cpu_count()} CPUs)")
    with open(args.results, "a") as f:
        f.write(f"\n## Volume from an rbd image: `bench/ceph_volume_clone.py` "
                f"({datetime.date.today()})\n\n"
                f"Load average before {load_before}, after {load_after} "
                f"({os.cpu_count()} CPUs, shared with other jobs).\n\n"
                "| image | volume from image, median | max | POST answered | blank volume "
                "| `rbd clone` (bindings) | `rbd import` of the file | image upload to rbd |"
                "\n|---|---|---|---|---|---|---|---|\n")
        for label, median, worst, imp, up, posted, blank, clone in rows:
            f.write(f"| {label} | {median:.1f} ms | {worst:.1f} ms | {posted:.1f} ms | "
                    f"{blank:.1f} ms | {clone:.1f} ms | {imp:.0f} ms | {up:.0f} ms |\n")


if __name__ == "__main__":
    main()
