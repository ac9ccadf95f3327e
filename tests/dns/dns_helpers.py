"""DNS test helpers: raw designate calls through a keystoneauth session, `dig` against
the cloud's embedded DNS server, and waits on a zone's status."""
from __future__ import annotations

import os
import subprocess
import uuid

from helpers.cloud import wait_for


class Designate:
    """Raw calls to the DNS API (the catalog's dns endpoint), error bodies included."""

    def __init__(self, session):
        self.s = session

    def req(self, method, path, json=None, headers=None, **kw):
        return self.s.request(path, method, json=json, headers=headers, raise_exc=False,
                              endpoint_filter={"service_type": "dns"}, **kw)

    def get(self, path, **kw):
        return self.req("GET", path, **kw)

    def post(self, path, json=None, **kw):
        return self.req("POST", path, json=json, **kw)

    def zone(self, name=None, **body):
        name = name or f"z{uuid.uuid4().hex[:10]}.example.com."
        r = self.post("/v2/zones", {"name": name, "email": "admin@example.com", **body})
        assert r.status_code == 202, r.text
        return r.json()

    def active(self, zone_id):
        return wait_for(lambda: (lambda z: z if z["status"] == "ACTIVE" else None)(
            self.get(f"/v2/zones/{zone_id}").json()), 10, f"zone {zone_id} ACTIVE", 0.05)

    def recordset(self, zone_id, name, rtype, records, **body):
        r = self.post(f"/v2/zones/{zone_id}/recordsets",
                      {"name": name, "type": rtype, "records": records, **body})
        assert r.status_code == 202, r.text
        return r.json()


def server_address(cloud) -> tuple[str, str]:
    with open(os.path.join(cloud.data_dir, "dns", "listen")) as f:
        host, _, port = f.read().strip().rpartition(":")
    return host, port


def dig(cloud, name, rtype="A", *options) -> str:
    host, port = server_address(cloud)
    proc = subprocess.run(["dig", f"@{host}", "-p", port, "+time=2", "+tries=2",
                           name, rtype, *options], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc.stdout


def short(cloud, name, rtype="A") -> list[str]:
    """What `dig +short` answers, sorted."""
    return sorted(dig(cloud, name, rtype, "+short").split())


def status_of(output: str) -> str:
    return output.split("status: ", 1)[1].split(",", 1)[0]


def eventually(predicate, what):
    """Within the second the service promises for a change to be served (with room for
    a busy machine)."""
    return wait_for(predicate, 10, what, 0.05)
