"""DNS benchmark: how soon `dig` sees a recordset change, and how many queries a second
the embedded DNS server answers, with PowerDNS serving the same zone as the reference.

    python bench/dns.py [--changes 20] [--clients 4] [--seconds 5] [--json FILE]

Runs `pocketstack up` on a temporary data dir in a child process ([dns] listen on a free
port), makes a zone of 100 A records through the DNS API, then:

* change → visible: a recordset's records are replaced through the API and `dig` is asked
  again and again until it answers the new address (target ≤ 1 s);
* queries/s: N client processes each keep W queries in flight over UDP (wire format
  rendered by dnspython, 100 different names, answers checked by id) for S seconds
  (target ≥ 10,000 q/s or within 2× of PowerDNS);
* the same load against `pdns_server` (Debian's pdns-server with its bind backend) on a
  free port, serving the zone as the API exported it, when it is installed.

Every wait is bounded. The figures are printed with the load average (and appended to
``--json FILE``).
"""
from __future__ import annotations

import os
import sys

# Run as `python bench/dns.py`, this file's folder comes first on sys.path and would hide
# dnspython's `dns` package behind this very file.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import dns.message  # noqa: E402
import dns.rcode  # noqa: E402

EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")
ZONE = "bench.example."
NAMES = 100


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_cloud(data_dir: str):
    with open(os.path.join(data_dir, "pocketstack.conf"), "w") as f:
        f.write("[dns]\nlisten = 127.0.0.1:0\n")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(os.path.join(data_dir, "..", "up.log"), "wb")
    proc = subprocess.Popen([EXE, "up", "--data-dir", data_dir, "--port", str(port),
                             "--admin-password", "bench"], stdout=log, stderr=subprocess.STDOUT)
    listen = os.path.join(data_dir, "dns", "listen")
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        ready = subprocess.run([EXE, "wait", "--data-dir", data_dir, "--timeout", "2"],
                               capture_output=True)
        if ready.returncode == 0 and os.path.exists(listen):
            host, _, p = open(listen).read().strip().rpartition(":")
            return proc, url, (host, int(p))
    proc.kill()
    raise SystemExit("pocketstack up did not start; see " + log.name)


def session(url: str):
    from keystoneauth1 import session as ks
    from keystoneauth1.identity import v3

    return ks.Session(auth=v3.Password(auth_url=url + "/identity/v3", username="admin",
                                       password="bench", project_name="admin",
                                       user_domain_id="default", project_domain_id="default"))


def api(s, method, path, **kw):
    r = s.request(path, method, endpoint_filter={"service_type": "dns"}, raise_exc=False,
                  **kw)
    if r.status_code >= 400:
        raise SystemExit(f"{method} {path}: {r.status_code} {r.text}")
    return r


def wait_active(s, zone_id, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if api(s, "GET", f"/v2/zones/{zone_id}").json()["status"] == "ACTIVE":
            return
        time.sleep(0.05)
    raise SystemExit("zone not ACTIVE in time")


def dig_short(server, name) -> str:
    return subprocess.run(["dig", f"@{server[0]}", "-p", str(server[1]), "+short",
                           "+time=1", "+tries=1", name, "A"], capture_output=True,
                          text=True, timeout=10).stdout.strip()


def change_latency(s, server, zone_id, rs_id, changes: int) -> list[float]:
    out = []
    for i in range(changes):
        address = f"198.51.100.{i % 250 + 1}"
        start = time.monotonic()
        api(s, "PUT", f"/v2/zones/{zone_id}/recordsets/{rs_id}",
            json={"records": [address]})
        while dig_short(server, "changing." + ZONE) != address:
            if time.monotonic() - start > 10:
                raise SystemExit("a change was not served within 10 s")
        out.append(time.monotonic() - start)
    return out


def _client(server, window, seconds, queries, counter):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect(server)
    sock.settimeout(0.5)
    answered = errors = 0
    in_flight = 0
    end = time.monotonic() + seconds
    qid = random.randrange(65536)
    while time.monotonic() < end:
        while in_flight < window:
            qid = (qid + 1) & 0xFFFF
            wire = queries[qid % len(queries)]
            sock.send(qid.to_bytes(2, "big") + wire[2:])
            in_flight += 1
        try:
            reply = sock.recv(4096)
        except socket.timeout:
            in_flight = 0  # lost: send afresh
            errors += 1
            continue
        in_flight -= 1
        if reply[3] & 0x0F == 0:  # NOERROR
            answered += 1
        else:
            errors += 1
    counter.put((answered, errors))


def load(server, clients: int, window: int, seconds: float) -> tuple[float, int]:
    queries = [dns.message.make_query(f"h{i}.{ZONE}", "A").to_wire() for i in range(NAMES)]
    sample = dns.message.from_wire(_ask(server, queries[0]))
    assert sample.rcode() == dns.rcode.NOERROR and sample.answer, sample
    counter = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=_client, args=(server, window, seconds, queries,
                                                            counter)) for _ in range(clients)]
    for p in procs:
        p.start()
    results = [counter.get(timeout=seconds + 30) for _ in procs]
    for p in procs:
        p.join(timeout=10)
    answered = sum(a for a, _ in results)
    return answered / seconds, sum(e for _, e in results)


def _ask(server, wire: bytes) -> bytes:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(2)
        sock.sendto(wire, server)
        return sock.recv(4096)


def start_pdns(tmp: str, zone_text: str):
    exe = shutil.which("pdns_server") or "/usr/sbin/pdns_server"
    if not os.path.exists(exe):
        return None, None
    port = free_port()
    zone_file = os.path.join(tmp, "bench.zone")
    with open(zone_file, "w") as f:
        f.write(zone_text)
    with open(os.path.join(tmp, "named.conf"), "w") as f:
        f.write(f'zone "{ZONE.rstrip(".")}" {{ type master; file "{zone_file}"; }};\n')
    with open(os.path.join(tmp, "pdns.conf"), "w") as f:
        f.write(f"launch=bind\nbind-config={tmp}/named.conf\nlocal-address=127.0.0.1\n"
                f"local-port={port}\nsocket-dir={tmp}\ndaemon=no\nguardian=no\n"
                f"disable-syslog=yes\nloglevel=3\nwebserver=no\n")
    proc = subprocess.Popen([exe, f"--config-dir={tmp}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    server = ("127.0.0.1", port)
    probe = dns.message.make_query(f"h0.{ZONE}", "A").to_wire()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if dns.message.from_wire(_ask(server, probe)).answer:
                return proc, server
        except OSError:
            time.sleep(0.1)
    proc.kill()
    return None, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--changes", type=int, default=20)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--window", type=int, default=16, help="queries in flight per client")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--json", help="append the figures to this file")
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="pocketstack-dnsbench-")
    data_dir = os.path.join(tmp, "data")
    os.makedirs(data_dir)
    proc, url, server = start_cloud(data_dir)
    pdns = None
    try:
        s = session(url)
        zone = api(s, "POST", "/v2/zones", json={"name": ZONE, "email": "a@example.com"}).json()
        for i in range(NAMES):
            api(s, "POST", f"/v2/zones/{zone['id']}/recordsets",
                json={"name": f"h{i}.{ZONE}", "type": "A", "records": [f"192.0.2.{i + 1}"]})
        rs = api(s, "POST", f"/v2/zones/{zone['id']}/recordsets",
                 json={"name": "changing." + ZONE, "type": "A",
                       "records": ["198.51.100.254"]}).json()
        wait_active(s, zone["id"])

        latencies = change_latency(s, server, zone["id"], rs["id"], args.changes)
        ours, our_errors = load(server, args.clients, args.window, args.seconds)

        export = api(s, "POST", f"/v2/zones/{zone['id']}/tasks/export").json()
        text = api(s, "GET", f"/v2/zones/tasks/exports/{export['id']}/export").text
        pdns, pdns_server = start_pdns(os.path.join(tmp), text)
        theirs = their_errors = None
        if pdns is not None:
            theirs, their_errors = load(pdns_server, args.clients, args.window, args.seconds)
    finally:
        if pdns is not None:
            pdns.terminate()
            pdns.wait(timeout=10)
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)

    figures = {
        "change_visible_p50_s": round(statistics.median(latencies), 3),
        "change_visible_max_s": round(max(latencies), 3),
        "qps_pocketstack": round(ours), "errors_pocketstack": our_errors,
        "qps_pdns": round(theirs) if theirs is not None else None,
        "errors_pdns": their_errors, "clients": args.clients, "window": args.window,
        "seconds": args.seconds, "loadavg": os.getloadavg(),
        "uptime": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
    }
    print(json.dumps(figures, indent=1))
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps(figures) + "\n")


if __name__ == "__main__":
    main()
