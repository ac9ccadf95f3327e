"""The same phases against any OpenStack clouds, side by side (issue 13).

    python bench/compare.py                               # an in-process pocketstack
    python bench/compare.py --cloud mycloud --cloud @local  # clouds.yaml name vs pocketstack
    python bench/compare.py --auth-url URL --username U --password P --project-name PR

A cloud is a clouds.yaml name (openstacksdk reads it), ``@given`` for the ``--auth-url``
credentials, ``@inprocess`` (the default: ``from pocketstack import Cloud`` in this
process, which shares one interpreter with the clients) or ``@local`` (``pocketstack up``
in a child process, so the figures are the cloud's and not the benchmark's; ``--workers N``
and ``--compute-workers M`` are passed on to it).

Phases, each bounded in count and in time (``--timeout`` seconds per phase):

* token: sequential ``POST /v3/auth/tokens`` with the password;
* port: sequential port create on the benchmark's network (IPv4 + IPv6 subnets);
* boot: sequential boots with one network, POST -> ACTIVE polled every 5 ms client-side,
  and server-side from the create action's events (start of the action to the last
  event's finish) where the cloud shows them;
* burst: N servers from K clients (threads, one HTTP connection each), until all ACTIVE;
* delete: the burst's servers deleted from K clients, until all gone;
* image: upload of M MiB next to ``cp`` of the same bytes in the same run.

Everything the run creates carries the prefix ``cmp-<random>`` and is deleted at the end,
also after a failure. Without ``--image``/``--network`` it makes a tiny image and its own
network: on a real cloud pass an image that boots. Load averages are printed per cloud.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import requests

COMPUTE_MICROVERSION = "compute 2.79"  # networks as a list; instance action events
POLL = 0.005  # client-side status poll interval of the sequential boots


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summary(values):
    if not values:
        return None
    return {"n": len(values), "p50": statistics.median(values),
            "p95": percentile(values, 0.95), "max": max(values)}


def parse_time(text):
    """ISO time of an instance action or event (with or without fraction and zone)."""
    from datetime import UTC, datetime

    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


class Target:
    """One cloud: its password auth, a token and the endpoints the phases use."""

    def __init__(self, name, auth: dict, region=None, verify=True, closer=None):
        self.name, self.auth, self.region, self.closer = name, auth, region, closer
        self.http = requests.Session()
        self.http.verify = verify
        self.http.trust_env = False
        self.token_body = {"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": auth["username"], "password": auth["password"],
                "domain": _domain(auth, "user")}}},
            "scope": {"project": {"name": auth["project_name"],
                                  "domain": _domain(auth, "project")}}}}
        self.auth_url = auth["auth_url"].rstrip("/")
        if not self.auth_url.endswith("/v3"):
            self.auth_url += "/v3"
        self.token, catalog = self.issue_token()
        self.compute = self.endpoint(catalog, "compute")
        self.network = self.endpoint(catalog, "network").rstrip("/")
        if not self.network.endswith("/v2.0"):
            self.network += "/v2.0"
        self.image = self.endpoint(catalog, "image").rstrip("/")
        if not self.image.endswith("/v2"):
            self.image += "/v2"

    def issue_token(self):
        r = self.http.post(self.auth_url + "/auth/tokens", json=self.token_body, timeout=60)
        r.raise_for_status()
        return r.headers["X-Subject-Token"], r.json()["token"].get("catalog", [])

    def endpoint(self, catalog, service_type):
        for service in catalog:
            if service["type"] == service_type:
                for ep in service["endpoints"]:
                    if ep["interface"] == "public" and (
                            self.region is None or ep.get("region_id", ep.get("region"))
                            == self.region):
                        return ep["url"].rstrip("/")
        raise SystemExit(f"{self.name}: no public {service_type} endpoint in the catalog")

    def session(self):
        """A fresh keep-alive connection with the token (one per client thread)."""
        s = requests.Session()
        s.verify, s.trust_env = self.http.verify, False
        s.headers.update({"X-Auth-Token": self.token, "OpenStack-API-Version":
                          COMPUTE_MICROVERSION, "X-OpenStack-Nova-API-Version": "2.79"})
        return s


def _domain(auth, kind):
    for key in (f"{kind}_domain_id", "domain_id"):
        if auth.get(key):
            return {"id": auth[key]}
    for key in (f"{kind}_domain_name", "domain_name"):
        if auth.get(key):
            return {"name": auth[key]}
    return {"id": "default"}


# --- the clouds -------------------------------------------------------------------------

def start_inprocess():
    import logging

    logging.basicConfig(level=logging.WARNING)
    from pocketstack import Cloud

    cloud = Cloud(overrides={"identity.password_hash_rounds": 4}).start(port=0)
    auth = {"auth_url": cloud.auth_url, "username": "admin",
            "password": cloud.admin_password, "project_name": "admin"}
    return Target("pocketstack (in-process)", auth, closer=cloud.stop), True


def start_local(timeout=60, workers=1, compute_workers=None):
    data_dir = tempfile.mkdtemp(prefix="cmp-local-")
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    exe = os.path.join(os.path.dirname(sys.executable), "pocketstack")
    with open(os.path.join(data_dir, "up.log"), "wb") as log:  # the child keeps its copy
        proc = subprocess.Popen([exe, "up", "--data-dir", os.path.join(data_dir, "d"),
                                 "--port", str(port), "--admin-password", "bench-admin",
                                 "--workers", str(workers),
                                 *(["--compute-workers", str(compute_workers)]
                                   if compute_workers is not None else [])],
                                stdout=log, stderr=subprocess.STDOUT)

    def close():
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(data_dir, ignore_errors=True)

    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            # The compute API answers once every service warmed up.
            if requests.get(url + "/compute/v2.1/", timeout=5).status_code in (200, 401):
                auth = {"auth_url": url + "/identity", "username": "admin",
                        "password": "bench-admin", "project_name": "admin"}
                label = "pocketstack up" + (f" --workers {workers}" if workers > 1 else "") \
                    + (f" --compute-workers {compute_workers}"
                       if compute_workers is not None else "")
                return Target(f"pocketstack ({label})", auth, closer=close), True
        except requests.RequestException:
            pass
        time.sleep(0.1)
    close()
    raise SystemExit("pocketstack up did not start")


def from_clouds_yaml(name):
    import openstack.config

    region = openstack.config.OpenStackConfig().get_one(cloud=name)
    auth = dict(region.auth)
    if "password" not in auth:
        raise SystemExit(f"{name}: compare.py needs password auth in clouds.yaml")
    return Target(name, auth, region=region.region_name or None,
                  verify=region.verify), False


def open_target(name, a):
    if name == "@inprocess":
        return start_inprocess()
    if name == "@local":
        return start_local(workers=a.workers, compute_workers=a.compute_workers)
    if name == "@given":
        auth = {"auth_url": a.auth_url, "username": a.username, "password": a.password,
                "project_name": a.project_name, "user_domain_id": a.user_domain_id,
                "project_domain_id": a.project_domain_id}
        return Target(a.auth_url, auth), False
    return from_clouds_yaml(name)


# --- the phases -------------------------------------------------------------------------

class Run:
    def __init__(self, target: Target, a, own_cloud: bool):
        self.t, self.a, self.own = target, a, own_cloud
        self.s = target.session()
        self.prefix = f"cmp-{uuid.uuid4().hex[:8]}"
        self.created = {"servers": [], "ports": [], "subnets": [], "networks": [],
                        "images": []}
        self.out: dict = {"cloud": target.name}

    def check(self, r):
        if r.status_code >= 400:
            raise RuntimeError(f"{r.request.method} {r.url}: {r.status_code} {r.text[:300]}")
        return r

    # setup ----------------------------------------------------------------------------
    def setup(self):
        t, s, a = self.t, self.s, self.a
        if self.own:  # our own throwaway cloud: no instance quota in the way
            project = self.check(s.get(t.auth_url + "/auth/tokens", headers={
                "X-Subject-Token": t.token}, params={"nocatalog": 1})).json()
            pid = project["token"]["project"]["id"]
            s.put(t.compute + f"/os-quota-sets/{pid}", json={"quota_set": {
                "instances": -1, "cores": -1, "ram": -1}})
            s.put(t.network + f"/quotas/{pid}", json={"quota": {"port": -1}})
        self.network_id = a.network or self.make_network()
        self.image_id = a.image or self.make_image("tiny", b"\0" * 4096)
        self.flavor_id = a.flavor or self.smallest_flavor()

    def make_network(self):
        t, s = self.t, self.s
        net = self.check(s.post(t.network + "/networks", json={"network": {
            "name": self.prefix}})).json()["network"]["id"]
        self.created["networks"].append(net)
        for body in ({"ip_version": 4, "cidr": "10.213.0.0/20"},
                     {"ip_version": 6, "cidr": "fd13:13::/64", "ipv6_address_mode": "slaac",
                      "ipv6_ra_mode": "slaac"}):
            sub = self.check(s.post(t.network + "/subnets", json={"subnet": dict(
                body, name=self.prefix, network_id=net)})).json()["subnet"]["id"]
            self.created["subnets"].append(sub)
        return net

    def make_image(self, label, data):
        t, s = self.t, self.s
        img = self.check(s.post(t.image + "/images", json={
            "name": f"{self.prefix}-{label}", "disk_format": "raw",
            "container_format": "bare"})).json()["id"]
        self.created["images"].append(img)
        self.check(s.put(t.image + f"/images/{img}/file", data=data,
                         headers={"Content-Type": "application/octet-stream"}))
        return img

    def smallest_flavor(self):
        flavors = self.check(self.s.get(self.t.compute + "/flavors/detail")).json()["flavors"]
        return min(flavors, key=lambda f: (f["ram"], f["vcpus"], f["disk"]))["id"]

    # phases ---------------------------------------------------------------------------
    def phase_token(self):
        lat, end = [], time.monotonic() + self.a.timeout
        for _ in range(self.a.tokens):
            if time.monotonic() > end:
                break
            t0 = time.perf_counter()
            self.check(self.t.http.post(self.t.auth_url + "/auth/tokens",
                                        json=self.t.token_body, timeout=60))
            lat.append((time.perf_counter() - t0) * 1000)
        self.out["token_ms"] = summary(lat)

    def phase_port(self):
        lat, end = [], time.monotonic() + self.a.timeout
        for i in range(self.a.ports):
            if time.monotonic() > end:
                break
            t0 = time.perf_counter()
            r = self.check(self.s.post(self.t.network + "/ports", json={"port": {
                "network_id": self.network_id, "name": f"{self.prefix}-port-{i}"}}))
            lat.append((time.perf_counter() - t0) * 1000)
            self.created["ports"].append(r.json()["port"]["id"])
        self.out["port_ms"] = summary(lat)
        for port in list(self.created["ports"]):
            self.s.delete(self.t.network + f"/ports/{port}")
            self.created["ports"].remove(port)

    def boot(self, s, name):
        r = self.check(s.post(self.t.compute + "/servers", json={"server": {
            "name": name, "imageRef": self.image_id, "flavorRef": self.flavor_id,
            "networks": [{"uuid": self.network_id}]}}))
        sid = r.json()["server"]["id"]
        self.created["servers"].append(sid)
        return sid

    def phase_boot(self):
        client, server, errors = [], [], 0
        end = time.monotonic() + self.a.timeout
        for i in range(self.a.boots):
            if time.monotonic() > end:
                break
            t0 = time.perf_counter()
            sid = self.boot(self.s, f"{self.prefix}-seq-{i}")
            deadline, status = time.monotonic() + 60, "BUILD"
            while status not in ("ACTIVE", "ERROR") and time.monotonic() < deadline:
                time.sleep(POLL)
                r = self.s.get(self.t.compute + f"/servers/{sid}")
                status = r.json()["server"]["status"] if r.status_code == 200 else "ERROR"
            if status != "ACTIVE":
                errors += 1
                continue
            client.append((time.perf_counter() - t0) * 1000)
            took = self.server_side_ms(sid)
            if took is not None:
                server.append(took)
        self.out["boot_client_ms"] = summary(client)
        self.out["boot_server_ms"] = summary(server)
        self.out["boot_errors"] = errors

    def server_side_ms(self, sid):
        """Create action start to the last event's finish, if the cloud shows events
        (nova: admin, microversion 2.51+). Precision is the cloud's timestamps'."""
        r = self.s.get(self.t.compute + f"/servers/{sid}/os-instance-actions")
        if r.status_code != 200:
            return None
        create = [x for x in r.json()["instanceActions"] if x["action"] == "create"]
        if not create:
            return None
        r = self.s.get(self.t.compute +
                       f"/servers/{sid}/os-instance-actions/{create[0]['request_id']}")
        events = r.json().get("instanceAction", {}).get("events") if r.ok else None
        finishes = [e["finish_time"] for e in events or () if e.get("finish_time")]
        if not finishes:
            return None
        start = parse_time(create[0]["start_time"])
        return (max(parse_time(f) for f in finishes) - start).total_seconds() * 1000

    def wait_all(self, ids, gone, timeout):
        """Wait until every id is out of BUILD (or, ``gone``, deleted); returns (unfinished
        ids, errored ids). Polls the id-only list every 0.25 s (``status=BUILD`` while
        booting) so that waiting on hundreds of servers does not itself load the cloud; one
        detail list at the end tells ACTIVE from ERROR."""
        pending, end = set(ids), time.monotonic() + timeout
        params = {"name": f"^{self.prefix}-burst-", "limit": 1000}
        if not gone:
            params["status"] = "BUILD"
        while pending and time.monotonic() < end:
            r = self.check(self.s.get(self.t.compute + "/servers", params=params))
            pending &= {x["id"] for x in r.json()["servers"]}
            if pending:
                time.sleep(0.25)
        if gone:
            return pending, []
        params.pop("status")
        r = self.check(self.s.get(self.t.compute + "/servers/detail", params=params))
        status = {x["id"]: x["status"] for x in r.json()["servers"]}
        return pending, [i for i in ids if i not in pending and status.get(i) != "ACTIVE"]

    def phase_burst(self):
        n, k = self.a.burst, self.a.clients
        if not n:
            return
        sessions = [self.t.session() for _ in range(k)]

        def one(i):
            return self.boot(sessions[i % k], f"{self.prefix}-burst-{i}")

        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(k) as pool:
            ids = list(pool.map(one, range(n)))
        posted = time.perf_counter() - t0
        pending, bad = self.wait_all(ids, False, self.a.timeout)
        self.out["burst"] = {"n": n, "clients": k, "seconds": time.perf_counter() - t0,
                             "posted_seconds": posted, "error": len(bad),
                             "unfinished": len(pending)}

        def delete(i):
            sessions[i % k].delete(self.t.compute + f"/servers/{ids[i]}")

        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(k) as pool:
            list(pool.map(delete, range(n)))
        pending, _ = self.wait_all(ids, True, self.a.timeout)
        self.out["delete"] = {"n": n, "clients": k, "seconds": time.perf_counter() - t0,
                              "unfinished": len(pending)}
        for sid in ids:
            if sid not in pending:
                self.created["servers"].remove(sid)

    def phase_image(self):
        if not self.a.image_mib:
            return
        work = tempfile.mkdtemp(prefix="cmp-image-")
        try:
            src = os.path.join(work, "src")
            with open(src, "wb") as f:
                f.writelines(os.urandom(1 << 20) for _ in range(self.a.image_mib))
            t0 = time.perf_counter()
            subprocess.run(["cp", src, os.path.join(work, "copy")], check=True, timeout=600)
            cp = time.perf_counter() - t0
            os.unlink(os.path.join(work, "copy"))
            t0 = time.perf_counter()
            with open(src, "rb") as f:
                self.make_image("upload", f)
            upload = time.perf_counter() - t0
        finally:
            shutil.rmtree(work, ignore_errors=True)
        mib = self.a.image_mib
        self.out["image"] = {"mib": mib, "upload_s": upload, "cp_s": cp,
                             "upload_mib_s": mib / upload, "cp_mib_s": mib / cp,
                             "ratio": cp / upload}

    # cleanup --------------------------------------------------------------------------
    def cleanup(self):
        """Delete everything this run made, servers first (their ports go with them)."""
        t, s, c = self.t, self.s, self.created
        for sid in c["servers"]:
            s.delete(t.compute + f"/servers/{sid}")
        end = time.monotonic() + self.a.timeout
        while c["servers"] and time.monotonic() < end:
            c["servers"] = [x for x in c["servers"]
                            if s.get(t.compute + f"/servers/{x}").status_code != 404]
            time.sleep(0.1)
        for kind, url in (("ports", t.network + "/ports/"), ("subnets", t.network + "/subnets/"),
                          ("networks", t.network + "/networks/"),
                          ("images", t.image + "/images/")):
            c[kind] = [x for x in c[kind] if s.delete(url + x).status_code not in (
                200, 202, 204, 404)]
        self.out["left_behind"] = {k: v for k, v in c.items() if v}

    def run(self):
        self.out["load_start"] = os.getloadavg()
        try:
            self.setup()
            for phase in self.a.phases:
                getattr(self, "phase_" + phase)()
        except Exception as error:  # noqa: BLE001 - reported, then cleaned up
            self.out["failed"] = f"{type(error).__name__}: {error}"
        finally:
            self.cleanup()
            self.out["load_end"] = os.getloadavg()
        return self.out


# --- the table --------------------------------------------------------------------------

def load(values):
    return " ".join(f"{v:.2f}" for v in values)


def rows(out):
    def lat(key):
        v = out.get(key)
        return f"{v['p50']:.1f} / {v['p95']:.1f} (n={v['n']})" if v else "-"

    burst, delete, image = out.get("burst"), out.get("delete"), out.get("image")
    return [
        ("load average at start", load(out["load_start"])),
        ("token issue ms p50 / p95", lat("token_ms")),
        ("port create ms p50 / p95", lat("port_ms")),
        ("boot POST->ACTIVE ms p50 / p95 (client, 5 ms polls)", lat("boot_client_ms")),
        ("boot ms p50 / p95 (server, action events)", lat("boot_server_ms")),
        ("boot errors", str(out.get("boot_errors", "-"))),
        ("burst all ACTIVE s", f"{burst['n']} from {burst['clients']}: "
         f"{burst['seconds']:.2f} (POSTs {burst['posted_seconds']:.2f})" if burst else "-"),
        ("burst ERROR / unfinished", f"{burst['error']} / {burst['unfinished']}"
         if burst else "-"),
        ("delete all gone s", f"{delete['seconds']:.2f} (unfinished {delete['unfinished']})"
         if delete else "-"),
        ("image upload MiB/s vs cp", f"{image['upload_mib_s']:.0f} vs {image['cp_mib_s']:.0f} "
         f"({image['ratio'] * 100:.0f} % of cp, {image['mib']} MiB)" if image else "-"),
        ("load average at end", load(out["load_end"])),
        ("left behind", json.dumps(out.get("left_behind")) if out.get("left_behind")
         else "nothing"),
        ("failed", out.get("failed", "-")),
    ]


def table(results):
    header = ["", *[r["cloud"] for r in results]]
    body = [[label, *[dict(rows(r))[label] for r in results]]
            for label, _ in rows(results[0])]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    def line(row):
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |"

    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                      *map(line, body)])


PHASES = ("token", "port", "boot", "burst", "image")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cloud", action="append", help="clouds.yaml name, @inprocess, @local "
                   "or @given (repeat for a side-by-side table; default @inprocess)")
    p.add_argument("--auth-url")
    p.add_argument("--username")
    p.add_argument("--password")
    p.add_argument("--project-name")
    p.add_argument("--user-domain-id", default="default")
    p.add_argument("--project-domain-id", default="default")
    p.add_argument("--image", help="image to boot (default: a tiny one the run uploads)")
    p.add_argument("--flavor", help="flavor (default: the smallest)")
    p.add_argument("--network", help="network to boot on (default: one the run makes)")
    p.add_argument("--tokens", type=int, default=20)
    p.add_argument("--ports", type=int, default=50)
    p.add_argument("--boots", type=int, default=30)
    p.add_argument("--burst", type=int, default=100)
    p.add_argument("--clients", type=int, default=10)
    p.add_argument("--image-mib", type=int, default=64)
    p.add_argument("--phases", default=",".join(PHASES),
                   help="comma-separated subset of " + ",".join(PHASES))
    p.add_argument("--timeout", type=float, default=120, help="seconds per phase, at most")
    p.add_argument("--json", help="write the figures as JSON to this file")
    p.add_argument("--workers", type=int, default=1,
                   help="@local: `pocketstack up --workers N` (API processes)")
    p.add_argument("--compute-workers", type=int, default=None,
                   help="@local: `pocketstack up --compute-workers M`")
    a = p.parse_args(argv)
    a.phases = [x for x in a.phases.split(",") if x]
    if unknown := set(a.phases) - set(PHASES):
        p.error(f"unknown phases: {', '.join(sorted(unknown))}")
    a.cloud = a.cloud or (["@given"] if a.auth_url else ["@inprocess"])
    if "@given" in a.cloud and not (a.auth_url and a.username and a.password
                                    and a.project_name):
        p.error("@given needs --auth-url, --username, --password and --project-name")
    return a


def main(argv=None):
    a = parse_args(argv)
    results = []
    for name in a.cloud:
        target, own = open_target(name, a)
        try:
            results.append(Run(target, a, own).run())
        finally:
            if target.closer:
                target.closer()
    print(f"{os.cpu_count()} CPUs; client: {sys.executable}")
    print(table(results))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()
