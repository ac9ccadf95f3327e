"""Volume benchmarks (issue 8): create + delete of a 1 GiB volume on the file backend
(target: median <= 30 ms from POST to available plus DELETE to gone), and a volume from a
raw image next to `cp` of the same bytes in the same run (target: >= 50 % of cp's MB/s).

    .venv/bin/python bench/volume_bench.py [--cycles 30] [--image-mib 256]

Runs `pocketstack up` on a temporary data dir in a child process and talks to it over
HTTP with one keep-alive client; creation and deletion are asynchronous (as cinder's), so
the client polls the volume every 2 ms. Bounded in count and time (120 s).
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import httpx

sys.path.insert(0, os.path.dirname(__file__))
from network_bench import start_cloud, token_for  # noqa: E402

TIME_BUDGET = 120.0


def wait(client, path, done, budget_end):
    while time.monotonic() < budget_end:
        resp = client.get(path)
        if done(resp):
            return resp
        time.sleep(0.002)
    raise SystemExit(f"timed out waiting on {path}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cycles", type=int, default=30)
    parser.add_argument("--image-mib", type=int, default=256)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="pocketstack-volbench-")
    proc, url = start_cloud(os.path.join(tmp, "data"))
    end = time.monotonic() + TIME_BUDGET
    try:
        token, project = token_for(url)
        headers = {"X-Auth-Token": token, "OpenStack-API-Version": "volume 3.60"}
        client = httpx.Client(base_url=f"{url}/volume/v3/{project}", headers=headers,
                              timeout=30)
        cycles = []
        for _ in range(args.cycles):
            start = time.perf_counter()
            volume = client.post("/volumes", json={"volume": {"size": 1}}).json()["volume"]
            wait(client, f"/volumes/{volume['id']}",
                 lambda r: r.json()["volume"]["status"] == "available", end)
            client.delete(f"/volumes/{volume['id']}").raise_for_status()
            wait(client, f"/volumes/{volume['id']}", lambda r: r.status_code == 404, end)
            cycles.append((time.perf_counter() - start) * 1000)
        print(f"create+delete 1 GiB (file): median {statistics.median(cycles):.1f} ms, "
              f"p90 {sorted(cycles)[int(len(cycles) * 0.9) - 1]:.1f} ms over {len(cycles)}")

        data = os.path.join(tmp, "image.raw")
        with open(data, "wb") as f:
            for _ in range(args.image_mib):
                f.write(os.urandom(1 << 20))
        image_url = f"{url}/image/v2/images"
        image = httpx.post(image_url, headers=headers, json={
            "name": "bench", "disk_format": "raw", "container_format": "bare"}).json()
        with open(data, "rb") as f:
            httpx.put(f"{image_url}/{image['id']}/file", content=f, timeout=300, headers={
                **headers, "Content-Type": "application/octet-stream"}).raise_for_status()
        start = time.perf_counter()
        shutil.copyfile(data, data + ".copy")
        os.sync()
        cp_seconds = time.perf_counter() - start
        start = time.perf_counter()
        volume = client.post("/volumes", json={"volume": {"size": 1, "imageRef":
                                                          image["id"]}}).json()["volume"]
        wait(client, f"/volumes/{volume['id']}",
             lambda r: r.json()["volume"]["status"] in ("available", "error"), end)
        vol_seconds = time.perf_counter() - start
        mib = args.image_mib
        print(f"volume from a {mib} MiB raw image: {mib / vol_seconds:.0f} MB/s; cp of the "
              f"same bytes: {mib / cp_seconds:.0f} MB/s ({cp_seconds / vol_seconds:.0%} of cp)")
        print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
