"""The PowerDNS backend ([dns] backend = pdns4): PowerDNS (Debian's pdns-server with its
sqlite3 backend, started here on free ports) holds every zone as a secondary of the
embedded server, and answers each change before the zone is ACTIVE."""
from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import uuid

import pytest

from helpers.cloud import own_cloud, wait_for
from dns_helpers import Designate

PDNS = shutil.which("pdns_server") or "/usr/sbin/pdns_server"
SCHEMA = "/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql"

pytestmark = pytest.mark.skipif(
    not (os.path.exists(PDNS) and os.path.exists(SCHEMA)),
    reason="needs Debian's pdns-server and pdns-backend-sqlite3")


def _free_port() -> int:
    """A port free for both UDP and TCP (DNS listens on both): the kernel picks a free
    UDP port, which TCP may hold already (one CI run: EADDRINUSE); then another."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, \
                socket.socket() as tcp:
            udp.bind(("127.0.0.1", 0))
            port = udp.getsockname()[1]
            try:
                tcp.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no port free for both UDP and TCP")


@pytest.fixture(scope="module")
def pdns():
    tmp = tempfile.mkdtemp(prefix="pocketstack-pdns-")
    db = os.path.join(tmp, "pdns.sqlite3")
    with sqlite3.connect(db) as conn, open(SCHEMA) as schema:
        conn.executescript(schema.read())
    dns_port, api_port, key = _free_port(), _free_port(), uuid.uuid4().hex
    with open(os.path.join(tmp, "pdns.conf"), "w") as f:
        f.write(f"launch=gsqlite3\ngsqlite3-database={db}\nlocal-address=127.0.0.1\n"
                f"local-port={dns_port}\nsocket-dir={tmp}\ndaemon=no\nguardian=no\n"
                f"disable-syslog=yes\nsecondary=yes\napi=yes\napi-key={key}\n"
                f"webserver=yes\nwebserver-address=127.0.0.1\nwebserver-port={api_port}\n"
                f"webserver-allow-from=127.0.0.1\nxfr-cycle-interval=1\n")
    proc = subprocess.Popen([PDNS, f"--config-dir={tmp}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        import httpx

        def up():
            try:
                return httpx.get(f"http://127.0.0.1:{api_port}/api/v1/servers",
                                 headers={"X-API-Key": key}, timeout=1).status_code == 200
            except httpx.HTTPError:
                return False
        wait_for(up, 30, "PowerDNS's API", 0.1)
        yield {"dns": dns_port, "api": api_port, "key": key}
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)


def _dig(port, name, rtype="A"):
    return subprocess.run(["dig", "@127.0.0.1", "-p", str(port), "+short", "+time=1",
                           "+tries=1", name, rtype], capture_output=True, text=True,
                          timeout=30).stdout.split()


def test_powerdns_serves_every_zone_change_before_it_is_active(pdns):
    overrides = {"dns.backend": "pdns4",
                 "dns.pdns4_api_endpoint": f"http://127.0.0.1:{pdns['api']}",
                 "dns.pdns4_api_key": pdns["key"],
                 "dns.pdns4_listen": f"127.0.0.1:{pdns['dns']}"}
    with own_cloud("pdns4", **overrides) as cloud:
        designate = Designate(cloud.session())
        zone = designate.zone()
        name = zone["name"]
        zone = designate.active(zone["id"])
        assert _dig(pdns["dns"], name, "SOA")[2] == str(zone["serial"])

        rs = designate.recordset(zone["id"], "www." + name, "A", ["192.0.2.80"])
        designate.active(zone["id"])
        assert _dig(pdns["dns"], "www." + name) == ["192.0.2.80"]  # already, when ACTIVE
        designate.req("PUT", f"/v2/zones/{zone['id']}/recordsets/{rs['id']}",
                      json={"records": ["192.0.2.81"]})
        designate.active(zone["id"])
        assert _dig(pdns["dns"], "www." + name) == ["192.0.2.81"]

        designate.req("DELETE", f"/v2/zones/{zone['id']}")
        wait_for(lambda: designate.get(f"/v2/zones/{zone['id']}").status_code == 404, 20,
                 "the zone gone", 0.1)
        assert _dig(pdns["dns"], name, "SOA") == []
