"""Boot benchmark against any OpenStack compute endpoint.

    python bench/boot.py --compute-url URL --token TOKEN --image ID [--flavor 42]
    python bench/boot.py --inprocess          # starts an all-in-one cloud in this process

Measures (issue 5 targets in brackets): POST→ACTIVE latency p50/p95 over N sequential boots
[p50 ≤ 100 ms], a burst of B servers from C clients until all ACTIVE [500 from 10 ≤ 10 s],
GET /servers/detail with everything booted [1,000 servers p50 ≤ 200 ms], and deleting the
burst until gone [500 ≤ 10 s]. Servers boot with networks=none (2.37+).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import statistics
import time

import requests

HEADERS = {"OpenStack-API-Version": "compute 2.79", "Content-Type": "application/json"}


class Client:
    def __init__(self, url, token):
        self.url, self.s = url.rstrip("/"), requests.Session()
        self.s.headers.update(HEADERS)
        self.s.headers["X-Auth-Token"] = token

    def boot(self, image, flavor, name):
        r = self.s.post(self.url + "/servers", json={"server": {
            "name": name, "imageRef": image, "flavorRef": flavor, "networks": "none"}})
        r.raise_for_status()
        return r.json()["server"]["id"]

    def status(self, sid):
        r = self.s.get(self.url + f"/servers/{sid}")
        return r.json()["server"]["status"] if r.status_code == 200 else "GONE"


def wait_all(client, ids, want, timeout):
    pending, deadline = set(ids), time.monotonic() + timeout
    bad = []
    while pending and time.monotonic() < deadline:
        r = client.s.get(client.url + "/servers/detail", params={"limit": 1000,
                                                                  "name": "^bench-"})
        seen = {s["id"]: s["status"] for s in r.json()["servers"]}
        for sid in list(pending):
            st = seen.get(sid, "GONE")
            if st == want or (want != "GONE" and st == "ERROR"):
                pending.discard(sid)
                if st == "ERROR":
                    bad.append(sid)
        if pending:
            time.sleep(0.5)  # polling a 1,000-server list must not eat the cloud's CPU
    return pending, bad


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compute-url")
    p.add_argument("--token")
    p.add_argument("--image")
    p.add_argument("--flavor", default="42")
    p.add_argument("--latency-boots", type=int, default=50)
    p.add_argument("--burst", type=int, default=500)
    p.add_argument("--clients", type=int, default=10)
    p.add_argument("--detail-target", type=int, default=1000)
    p.add_argument("--inprocess", action="store_true")
    a = p.parse_args()
    cloud = None
    if a.inprocess:
        cloud, a.compute_url, a.token, a.image = start_cloud()
    c = Client(a.compute_url, a.token)
    try:
        run(c, a)
    finally:
        if cloud is not None:
            cloud.stop()


def run(c, a):
    # 1. latency
    lat, ids = [], []
    for i in range(a.latency_boots):
        t0 = time.perf_counter()
        sid = c.boot(a.image, a.flavor, f"bench-lat-{i}")
        while c.status(sid) not in ("ACTIVE", "ERROR"):
            time.sleep(0.002)
        lat.append((time.perf_counter() - t0) * 1000)
        ids.append(sid)
    lat.sort()
    print(f"boot POST→ACTIVE over {len(lat)}: p50 {statistics.median(lat):.1f} ms, "
          f"p95 {lat[int(len(lat) * 0.95) - 1]:.1f} ms   [target p50 ≤ 100 ms]")
    # 2. burst
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(a.clients) as pool:
        clients = [Client(a.compute_url, a.token) for _ in range(a.clients)]
        burst = list(pool.map(lambda i: clients[i % a.clients].boot(a.image, a.flavor,
                                                                    f"bench-burst-{i}"),
                              range(a.burst)))
    pending, bad = wait_all(c, burst, "ACTIVE", 300)
    took = time.perf_counter() - t0
    print(f"burst {a.burst} servers from {a.clients} clients all ACTIVE in {took:.2f} s "
          f"(ERROR {len(bad)}, unfinished {len(pending)})   [target 500 ≤ 10 s, zero ERROR]")
    # 3. fill up to the detail target and time GET /servers/detail
    extra = []
    total = len(ids) + len(burst)
    with concurrent.futures.ThreadPoolExecutor(a.clients) as pool:
        extra = list(pool.map(lambda i: clients[i % a.clients].boot(a.image, a.flavor,
                                                                    f"bench-fill-{i}"),
                              range(max(0, a.detail_target - total))))
    wait_all(c, extra, "ACTIVE", 300)
    times = []
    for _ in range(11):
        t0 = time.perf_counter()
        r = c.s.get(c.url + "/servers/detail", params={"limit": 1000})
        times.append((time.perf_counter() - t0) * 1000)
        n = len(r.json()["servers"])
    print(f"GET /servers/detail with {n} servers: p50 {statistics.median(times):.1f} ms   "
          f"[target 1,000 servers p50 ≤ 200 ms]")
    # 4. delete the burst
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(a.clients) as pool:
        list(pool.map(lambda i: clients[i % a.clients].s.delete(
            c.url + f"/servers/{burst[i]}"), range(len(burst))))
    pending, _ = wait_all(c, burst, "GONE", 300)
    print(f"delete {len(burst)} until gone: {time.perf_counter() - t0:.2f} s "
          f"(left {len(pending)})   [target 500 ≤ 10 s]")
    try:
        import resource

        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"max RSS of this process (in-process cloud + bench client): {rss:.0f} MB "
              "[target ≤ 300 MB with 1,000 servers]")
    except ImportError:
        pass
    for sid in ids + extra:
        c.s.delete(c.url + f"/servers/{sid}")


def start_cloud():
    import logging
    import tempfile

    logging.basicConfig(level=logging.WARNING)
    from keystoneauth1 import session
    from keystoneauth1.identity import v3

    from pocketstack.cloud import Cloud

    cloud = Cloud(tempfile.mkdtemp(prefix="bench-"), admin_password="bench",
                  overrides={"identity.password_hash_rounds": 4}).start(port=0)
    s = session.Session(auth=v3.Password(auth_url=cloud.auth_url, username="admin",
                                         password="bench", project_name="admin",
                                         user_domain_id="default", project_domain_id="default"))
    token = s.get_token()
    project = s.get_project_id()
    img = s.post(cloud.url + "/image/v2/images", json={
        "name": "cirros-bench", "disk_format": "qcow2", "container_format": "bare"}).json()
    s.put(cloud.url + f"/image/v2/images/{img['id']}/file", data=b"\0" * 4096,
          headers={"Content-Type": "application/octet-stream"})
    s.put(cloud.url + f"/compute/v2.1/os-quota-sets/{project}",
          json={"quota_set": {"instances": -1, "cores": -1, "ram": -1}})
    return cloud, cloud.url + "/compute/v2.1", token, img["id"]


if __name__ == "__main__":
    main()
