"""What survives a restart (the zones are served again from the database at start-up),
and the server's wire behaviour: truncation over
UDP with the full answer over TCP, a malformed packet answered FORMERR."""
from __future__ import annotations

import socket
import uuid

from helpers.cloud import ADMIN_PASSWORD, TEST_OVERRIDES, CloudHandle
from dns_helpers import Designate, dig, eventually, short


def test_zones_are_served_again_after_a_restart(tmp_path):
    from pocketstack.cloud import Cloud

    data_dir = str(tmp_path / "data")
    overrides = dict(TEST_OVERRIDES, **{"dns.listen": "127.0.0.1:0"})
    name = f"r{uuid.uuid4().hex[:8]}.example.com."
    with Cloud(data_dir, admin_password=ADMIN_PASSWORD, overrides=overrides) as c:
        cloud = CloudHandle(c)
        designate = Designate(cloud.session())
        zone = designate.zone(name)
        designate.recordset(zone["id"], "www." + name, "A", ["192.0.2.33"])
        designate.active(zone["id"])
        serial = designate.get(f"/v2/zones/{zone['id']}").json()["serial"]
    with Cloud(data_dir, overrides=overrides) as c:
        cloud = CloudHandle(c)
        assert short(cloud, "www." + name) == ["192.0.2.33"]
        assert dig(cloud, name, "SOA", "+short").split()[2] == str(serial)


def test_a_big_answer_is_truncated_over_udp_and_whole_over_tcp(cloud, designate):
    zone = designate.zone()
    name = "big." + zone["name"]
    records = [f'"{i:02d}{"x" * 200}"' for i in range(10)]
    designate.recordset(zone["id"], name, "TXT", records)
    eventually(lambda: "01xxx" in dig(cloud, name, "TXT", "+tcp"), "served")
    udp = dig(cloud, name, "TXT", "+noedns", "+ignore")
    assert " tc" in udp.split("flags:")[1].split(";")[0]
    whole = dig(cloud, name, "TXT")  # dig retries over TCP
    assert "ANSWER: 10" in whole


def test_a_malformed_packet_gets_formerr_and_the_server_keeps_answering(cloud, designate):
    from dns_helpers import server_address

    host, port = server_address(cloud)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(5)
        garbage = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\xff\xff"
        sock.sendto(garbage, (host, int(port)))
        reply = sock.recv(512)
        assert reply[:2] == b"\x12\x34" and reply[3] & 0x0F == 1  # FORMERR
        sock.sendto(b"\x00" * 3, (host, int(port)))  # too short to answer at all
    zone = designate.zone()
    designate.active(zone["id"])
    assert dig(cloud, zone["name"], "SOA", "+short")
