"""The PowerDNS backend ([dns] backend = pdns4), as designate's pdns4 backend drives it:
each zone is a secondary zone of PowerDNS (its HTTP API), whose master is the embedded
server (designate's mdns role); a change asks PowerDNS to transfer the zone again, and
the zone is ACTIVE once PowerDNS answers with its serial."""
from __future__ import annotations

import time

import dns.message
import dns.query
import dns.rcode
import httpx

from pocketstack.common import config
from pocketstack.dns import server as dns_server

WAIT = 10.0  # seconds PowerDNS has to serve a change


def _conf():
    return config.CONF.dns


def _url(path: str) -> str:
    return f"{_conf().pdns4_api_endpoint.rstrip('/')}/api/v1/servers/localhost{path}"


def _call(method: str, path: str, **kwargs) -> httpx.Response:
    return httpx.request(method, _url(path), headers={"X-API-Key": _conf().pdns4_api_key},
                         timeout=10, **kwargs)


def publish(zone_name: str, serial: int, master: str) -> None:
    """Make sure PowerDNS holds the zone as a secondary of ``master`` and has ``serial``;
    raise if it does not serve it within WAIT seconds."""
    r = _call("GET", f"/zones/{zone_name}")
    if r.status_code == 404 or (r.status_code == 422 and "not found" in r.text.lower()):
        r = _call("POST", "/zones", json={"name": zone_name, "kind": "Slave",
                                          "masters": [master]})
        if r.status_code not in (201, 409):
            raise RuntimeError(f"PowerDNS refused the zone {zone_name}: {r.status_code} "
                               f"{r.text[:200]}")
    elif r.status_code != 200:
        raise RuntimeError(f"PowerDNS: {r.status_code} {r.text[:200]}")
    deadline = time.monotonic() + WAIT
    while True:
        _call("PUT", f"/zones/{zone_name}/axfr-retrieve")
        if served_serial(zone_name) == serial:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"PowerDNS does not serve serial {serial} of {zone_name}")
        time.sleep(0.1)


def served_serial(zone_name: str) -> int | None:
    host, port = dns_server.parse_listen(_conf().pdns4_listen)
    try:
        answer = dns.query.udp(dns.message.make_query(zone_name, "SOA"), host, port=port,
                               timeout=1)
    except Exception:  # noqa: BLE001 - not (yet) answering
        return None
    if answer.rcode() != dns.rcode.NOERROR or not answer.answer:
        return None
    return answer.answer[0][0].serial


def remove(zone_name: str) -> None:
    r = _call("DELETE", f"/zones/{zone_name}")
    if r.status_code not in (204, 404, 422):
        raise RuntimeError(f"PowerDNS: {r.status_code} {r.text[:200]}")
