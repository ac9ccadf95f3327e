"""Load balancer create→ACTIVE: a load balancer, an HTTP listener, a pool and two members,
each step waited on (provisioning_status ACTIVE) before the next, as a client or an
orchestrator does. Target: the whole tree ACTIVE within 1 s.

    .venv/bin/python bench/loadbalancer_bench.py [--rounds 10] [--poll 0.01]

Runs `pocketstack up` on a temporary data dir (SQLite) in a child process and drives it
over HTTP from this one. The reference measured in the same run: the same number of
plain neutron port creations (the VIP port is one of them), so a loaded machine shows in
both figures. Prints the median and worst round, the load average before and after, and
appends them to bench/results/loadbalancer_bench.json. Bounded: every wait has a
deadline (10 s), the run --rounds rounds.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from network_bench import start_cloud, token_for  # noqa: E402

WAIT = 10.0


def wait_active(client: httpx.Client, lb_id: str, poll: float) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        status = client.get(f"/load-balancer/v2/lbaas/loadbalancers/{lb_id}").json()[
            "loadbalancer"]["provisioning_status"]
        if status == "ACTIVE":
            return
        if status == "ERROR":
            raise SystemExit(f"load balancer {lb_id} went to ERROR")
        time.sleep(poll)
    raise SystemExit(f"load balancer {lb_id} not ACTIVE within {WAIT} s")


def one_tree(client: httpx.Client, subnet_id: str, poll: float) -> float:
    start = time.monotonic()
    lb = client.post("/load-balancer/v2/lbaas/loadbalancers", json={"loadbalancer": {
        "vip_subnet_id": subnet_id}}).json()["loadbalancer"]
    wait_active(client, lb["id"], poll)
    listener = client.post("/load-balancer/v2/lbaas/listeners", json={"listener": {
        "loadbalancer_id": lb["id"], "protocol": "HTTP", "protocol_port": 80}}).json()
    wait_active(client, lb["id"], poll)
    pool = client.post("/load-balancer/v2/lbaas/pools", json={"pool": {
        "listener_id": listener["listener"]["id"], "protocol": "HTTP",
        "lb_algorithm": "ROUND_ROBIN"}}).json()["pool"]
    wait_active(client, lb["id"], poll)
    for host in (10, 11):
        client.post(f"/load-balancer/v2/lbaas/pools/{pool['id']}/members", json={"member": {
            "address": f"10.99.0.{host}", "protocol_port": 8080}}).raise_for_status()
        wait_active(client, lb["id"], poll)
    elapsed = time.monotonic() - start
    client.delete(f"/load-balancer/v2/lbaas/loadbalancers/{lb['id']}",
                  params={"cascade": "true"}).raise_for_status()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--poll", type=float, default=0.01,
                        help="seconds between a client's status reads")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="pocketstack-lbbench-")
    load_before = os.getloadavg()
    proc, url = start_cloud(os.path.join(tmp, "data"))
    try:
        token, _project = token_for(url)
        client = httpx.Client(base_url=url, headers={"X-Auth-Token": token}, timeout=30)
        net = client.post("/network/v2.0/networks", json={"network": {"name": "lb"}}).json()
        subnet = client.post("/network/v2.0/subnets", json={"subnet": {
            "network_id": net["network"]["id"], "ip_version": 4,
            "cidr": "10.99.0.0/16"}}).json()["subnet"]
        one_tree(client, subnet["id"], args.poll)  # warm-up: first calls, service login
        trees = [one_tree(client, subnet["id"], args.poll) for _ in range(args.rounds)]
        ports = []
        for _ in range(args.rounds * 5):
            t = time.monotonic()
            client.post("/network/v2.0/ports", json={"port": {
                "network_id": net["network"]["id"]}}).raise_for_status()
            ports.append(time.monotonic() - t)
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(tmp, ignore_errors=True)
    figures = {
        "tree_active_p50_s": round(statistics.median(trees), 3),
        "tree_active_max_s": round(max(trees), 3),
        "reference_port_create_p50_ms": round(statistics.median(ports) * 1000, 1),
        "rounds": args.rounds, "poll_s": args.poll,
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }
    for key, value in figures.items():
        print(f"{key}: {value}")
    path_figures = dict(figures)
    _record_to("loadbalancer_bench.json", path_figures)


def _record_to(name: str, figures: dict) -> None:
    import datetime
    import json

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", name)
    runs = []
    if os.path.exists(path):
        with open(path) as f:
            runs = json.load(f)
    runs.append({"at": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds"), **figures})
    with open(path, "w") as f:
        json.dump(runs[-50:], f, indent=1)


if __name__ == "__main__":
    main()
