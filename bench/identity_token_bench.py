"""Identity request costs that test tools pay per test class: token issue at the configured
bcrypt cost, role and domain look-ups, and the create-project/user/grant set-up.

    .venv/bin/python bench/identity_token_bench.py [--rounds N] [--cost C]

Starts a cloud in-process on a temporary data dir (SQLite) and prints median and p95
latencies. Every loop is bounded in count and time.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid

import httpx

TIME_BUDGET = 60.0  # seconds per measurement, whatever --rounds says


def measure(name: str, rounds: int, fn) -> None:
    samples, deadline = [], time.monotonic() + TIME_BUDGET
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
        if time.monotonic() > deadline:
            break
    samples.sort()
    p95 = samples[min(len(samples) - 1, int(len(samples) * 0.95))]
    print(f"{name:<44} n={len(samples):<5} median {statistics.median(samples):7.2f} ms"
          f"   p95 {p95:7.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--cost", type=int, default=12, help="bcrypt cost (default: 12)")
    args = parser.parse_args()

    from pocketstack.cloud import Cloud

    cloud = Cloud(tempfile.mkdtemp(prefix="ps-bench-"), admin_password="bench-admin",
                  overrides={"identity.password_hash_rounds": args.cost}).start(port=0)
    http = httpx.Client(base_url=cloud.auth_url, timeout=60)
    try:
        auth = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"id": "default"}, "password": "bench-admin"}}},
            "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}
        r = http.post("/v3/auth/tokens", json=auth)
        token = r.headers["x-subject-token"]
        headers = {"X-Auth-Token": token}
        print(f"bcrypt cost {args.cost}; SQLite; one client, sequential")

        issue_rounds = max(5, min(args.rounds, 40))
        measure(f"POST /v3/auth/tokens (password, cost {args.cost})", issue_rounds,
                lambda: http.post("/v3/auth/tokens", json=auth).raise_for_status())
        measure("GET /v3/auth/tokens (validate + body)", args.rounds,
                lambda: http.get("/v3/auth/tokens", headers=dict(
                    headers, **{"X-Subject-Token": token})).raise_for_status())
        measure("GET /v3/roles", args.rounds,
                lambda: http.get("/v3/roles", headers=headers).raise_for_status())
        measure("GET /v3/roles?name=member", args.rounds,
                lambda: http.get("/v3/roles?name=member", headers=headers).raise_for_status())
        measure("GET /v3/domains?name=Default", args.rounds,
                lambda: http.get("/v3/domains?name=Default",
                                 headers=headers).raise_for_status())
        member = http.get("/v3/roles?name=member", headers=headers).json()["roles"][0]["id"]

        def setup_class():
            suffix = uuid.uuid4().hex[:10]
            p = http.post("/v3/projects", headers=headers,
                          json={"project": {"name": f"p-{suffix}"}})
            u = http.post("/v3/users", headers=headers,
                          json={"user": {"name": f"u-{suffix}", "password": "pw"}})
            p.raise_for_status()
            u.raise_for_status()
            http.put(f"/v3/projects/{p.json()['project']['id']}/users/"
                     f"{u.json()['user']['id']}/roles/{member}",
                     headers=headers).raise_for_status()

        measure(f"project + user (cost {args.cost}) + grant", max(5, min(args.rounds, 40)),
                setup_class)
        measure("GET /v3/role_assignments?effective (all)", max(5, min(args.rounds, 50)),
                lambda: http.get("/v3/role_assignments?effective",
                                 headers=headers).raise_for_status())
    finally:
        http.close()
        cloud.stop()


if __name__ == "__main__":
    main()
