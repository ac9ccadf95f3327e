"""Key manager benchmark: a secret's store + retrieve round trip (POST /v1/secrets with a
payload, then GET its /payload), target p50 <= 10 ms, next to a token validation round
trip (GET /v3/auth/tokens) measured in the same run as the reference.

    .venv/bin/python bench/keymanager.py [--rounds 300]

Runs `pocketstack up` on a temporary data dir in a child process and talks to it over
HTTP with one keep-alive client, sequentially; both loops alternate so that the machine's
load weighs on them alike. Bounded in count and in time (60 s). Prints p50/p95 and the
load average.
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
import uuid

import httpx

sys.path.insert(0, os.path.dirname(__file__))
from network_bench import start_cloud, token_for  # noqa: E402

TIME_BUDGET = 60.0


def summary(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return (f"{name:<44} n={len(ordered):<5} p50 {statistics.median(ordered):7.2f} ms"
            f"   p95 {p95:7.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="ps-bench-km-")
    proc, url = start_cloud(os.path.join(tmp, "data"))
    try:
        token, _ = token_for(url)
        headers = {"X-Auth-Token": token}
        km = httpx.Client(base_url=url + "/key-manager", headers=headers, timeout=30)
        identity = httpx.Client(base_url=url + "/identity", timeout=30,
                                headers={**headers, "X-Subject-Token": token})
        for _ in range(10):  # warm-up: the project's key, imports, connections
            ref = km.post("/v1/secrets", json={"payload": "warm",
                                               "payload_content_type": "text/plain"})
            km.get(ref.json()["secret_ref"] + "/payload", headers={"Accept": "text/plain"})
            identity.get("/v3/auth/tokens").raise_for_status()
        secrets, stores, retrieves, validations = [], [], [], []
        deadline = time.monotonic() + TIME_BUDGET
        for _ in range(args.rounds):
            payload = uuid.uuid4().hex
            start = time.perf_counter()
            r = km.post("/v1/secrets", json={"payload": payload,
                                             "payload_content_type": "text/plain"})
            r.raise_for_status()
            stored = time.perf_counter()
            got = km.get(r.json()["secret_ref"] + "/payload", headers={"Accept": "text/plain"})
            end = time.perf_counter()
            secrets.append((end - start) * 1000)
            stores.append((stored - start) * 1000)
            retrieves.append((end - stored) * 1000)
            assert got.text == payload, got.text
            start = time.perf_counter()
            identity.get("/v3/auth/tokens").raise_for_status()
            validations.append((time.perf_counter() - start) * 1000)
            if time.monotonic() > deadline:
                break
        print("one client, sequential, SQLite; secrets encrypted with the project's key")
        print(summary("secret store + payload retrieve (2 requests)", secrets))
        print(summary("  of which POST /v1/secrets", stores))
        print(summary("  of which GET /v1/secrets/{id}/payload", retrieves))
        print(summary("reference: GET /v3/auth/tokens (validate)", validations))
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
