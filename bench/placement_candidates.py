"""Issue 25's performance figure: GET /allocation_candidates?resources=VCPU:1,
MEMORY_MB:512,DISK_GB:1&limit=10 over N resource providers (default 1,000), p50/p95 in ms
over HTTP (keystoneauth session, keep-alive), with the load average before and after.

    .venv/bin/python bench/placement_candidates.py [--providers 1000] [--requests 200]
        [--upstream URL]  # also time an upstream placement at URL (noauth2, same data)

The providers are made through the REST API (each: POST, PUT inventories with VCPU 16,
MEMORY_MB 32768, DISK_GB 1000; every third gets an allocation), so the data is what a
client would write (4 loading threads; 1 for upstream, whose SQLite writes fail with
"database is locked" when concurrent). ``--upstream http://127.0.0.1:PORT`` loads the same providers
into an
upstream placement (run with ``[api] auth_strategy = noauth2``) and times it too.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid

import requests
import threading

QUERY = "/allocation_candidates?resources=VCPU:1,MEMORY_MB:512,DISK_GB:1&limit=10"
HEADERS = {"OpenStack-API-Version": "placement 1.39", "Content-Type": "application/json"}


class Client:
    """requests with a token (pocketstack) or noauth2's admin token (upstream)."""

    def __init__(self, base: str, token: str):
        self.base = base.rstrip("/")
        self.headers = dict(HEADERS, **{"X-Auth-Token": token})
        self.local = threading.local()  # a keep-alive session per loading thread

    def call(self, method: str, path: str, json=None):
        if not hasattr(self.local, "http"):
            self.local.http = requests.Session()
            self.local.http.headers.update(self.headers)
        r = self.local.http.request(method, self.base + path, json=json, timeout=60)
        if r.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {r.status_code} {r.text[:300]}")
        return r


def load(client: Client, count: int, workers: int = 4) -> None:
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda i: _provider(client, i), range(count)))


def _provider(client: Client, i: int) -> None:
    rp = client.call("POST", "/resource_providers", {"name": f"bench-{i}"}).json()["uuid"]
    client.call("PUT", f"/resource_providers/{rp}/inventories", {
        "resource_provider_generation": 0, "inventories": {
            "VCPU": {"total": 16}, "MEMORY_MB": {"total": 32768},
            "DISK_GB": {"total": 1000}}})
    if i % 3 == 0:
        client.call("PUT", f"/allocations/{uuid.uuid4()}", {
            "allocations": {rp: {"resources": {"VCPU": 2, "MEMORY_MB": 2048}}},
            "project_id": "bench", "user_id": "bench", "consumer_generation": None,
            "consumer_type": "INSTANCE"})


def measure(client: Client, n: int) -> dict:
    for _ in range(10):  # warm-up
        client.call("GET", QUERY)
    times = []
    deadline = time.monotonic() + 300
    for _ in range(n):
        t0 = time.perf_counter()
        body = client.call("GET", QUERY).json()
        times.append((time.perf_counter() - t0) * 1000)
        assert len(body["allocation_requests"]) == 10
        if time.monotonic() > deadline:
            break
    times.sort()
    return {"p50": statistics.median(times), "p95": times[int(len(times) * 0.95) - 1],
            "n": len(times)}


def pocketstack_client(data_dir: str):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    from pocketstack.cloud import Cloud

    cloud = Cloud(data_dir, admin_password="bench-pw",
                  overrides={"identity.password_hash_rounds": 4})
    cloud.start(port=0)
    token = cloud.session().get_token()
    return cloud, Client(cloud.url + "/placement", token)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--providers", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--upstream", help="URL of an upstream placement (noauth2)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as data_dir:
        cloud, client = pocketstack_client(data_dir)
        try:
            t0 = time.monotonic()
            load(client, args.providers)
            print(f"pocketstack: loaded {args.providers} providers in "
                  f"{time.monotonic() - t0:.1f} s")
            result = measure(client, args.requests)
            print(f"pocketstack: p50 {result['p50']:.2f} ms, p95 {result['p95']:.2f} ms "
                  f"({result['n']} requests), load average {os.getloadavg()}")
        finally:
            cloud.stop()
    if args.upstream:
        upstream = Client(args.upstream, "admin")
        t0 = time.monotonic()
        load(upstream, args.providers, workers=1)  # its SQLite: "database is locked"
        print(f"upstream: loaded {args.providers} providers in {time.monotonic() - t0:.1f} s")
        result = measure(upstream, args.requests)
        print(f"upstream: p50 {result['p50']:.2f} ms, p95 {result['p95']:.2f} ms "
              f"({result['n']} requests), load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
