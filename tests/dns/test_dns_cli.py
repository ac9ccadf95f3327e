"""The user flow with the `openstack` CLI (python-designateclient's commands) and
`pocketstack dns server` telling scripts where to `dig`."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid

from dns_helpers import eventually


def test_zone_and_recordset_commands_and_dig_at_the_printed_server(cloud):
    name = f"cli{uuid.uuid4().hex[:8]}.example.org."
    zone = cloud.cli("zone", "create", "--email", "admin@example.org", name, "-f", "json")
    assert zone["name"] == name and zone["status"] == "PENDING"
    listed = cloud.cli("zone", "list", "-f", "json")
    assert name in [z["name"] for z in listed]
    rs = cloud.cli("recordset", "create", name, "www", "--type", "A",
                   "--record", "198.51.100.7", "-f", "json")
    assert rs["name"] == "www." + name and rs["records"] == "198.51.100.7"
    rows = cloud.cli("recordset", "list", name, "-f", "json")
    assert {(r["name"], r["type"]) for r in rows} >= {(name, "SOA"), (name, "NS"),
                                                     ("www." + name, "A")}

    exe = os.path.join(os.path.dirname(sys.executable), "pocketstack")
    printed = subprocess.run([exe, "dns", "server", "--data-dir", cloud.data_dir],
                             capture_output=True, text=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    host, port = printed.stdout.strip().rsplit(":", 1)

    def answer():
        out = subprocess.run(["dig", f"@{host}", "-p", port, "+short", "www." + name],
                             capture_output=True, text=True, timeout=30).stdout
        return out.split() == ["198.51.100.7"]
    eventually(answer, "the record at the printed server")


def test_dns_server_says_so_when_no_cloud_runs(tmp_path):
    exe = os.path.join(os.path.dirname(sys.executable), "pocketstack")
    proc = subprocess.run([exe, "dns", "server", "--data-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "no DNS server" in proc.stderr
