"""SECONDARY zones: their data comes by AXFR from their masters (designate's mdns does
the same), is served as it came and kept as the zone's recordsets."""
from __future__ import annotations

import json
import uuid

import dns.name
import dns.query
import dns.rdatatype
import dns.zone

from pocketstack.dns import authority as auth
from pocketstack.dns.models import RecordSet, Zone

TIMEOUT = 5.0


def _bounded(messages, max_records: int):
    """The transfer's messages, stopped once they carry more than ``max_records``
    records (the zone's quota): a master must not fill this process's memory."""
    seen = 0
    for message in messages:
        seen += sum(len(rrset) for rrset in message.answer)
        if 0 <= max_records < seen:
            raise ValueError(f"the zone has more than {max_records} records (its quota)")
        yield message


def transfer(zone: Zone, max_records: int = -1) -> auth.ZoneData:
    """The zone from the first master that hands it over, within ``max_records``
    (the SOA, given at both ends of an AXFR, counted twice; -1: no limit)."""
    last: Exception | None = None
    for master in json.loads(zone.masters):
        host, sep, port = master.rpartition(":")
        if not sep:
            host, port = master, "53"
        try:
            messages = dns.query.xfr(host.strip("[]"), zone.name, port=int(port),
                                     timeout=TIMEOUT, lifetime=TIMEOUT * 2, relativize=False)
            limit = max_records + 1 if max_records >= 0 else -1
            xfr = dns.zone.from_xfr(_bounded(messages, limit), relativize=False)
        except Exception as error:  # noqa: BLE001 - try the next master
            last = error
            continue
        rrsets = [rdataset_rrset(name, rdataset) for name, rdataset in
                  xfr.iterate_rdatasets()]
        return auth.ZoneData(dns.name.from_text(zone.name), rrsets)
    raise last or ValueError("no masters")


def rdataset_rrset(name, rdataset):
    import dns.rrset

    rrset = dns.rrset.RRset(name, rdataset.rdclass, rdataset.rdtype)
    rrset.update(rdataset)
    rrset.ttl = rdataset.ttl
    return rrset


def store(s, zone: Zone, data: auth.ZoneData) -> None:
    """The transferred records as the zone's recordsets (what the API lists)."""
    s.query(RecordSet).filter_by(zone_id=zone.id).delete()
    for name, node in data.nodes.items():
        for rdtype, rrset in node.items():
            s.add(RecordSet(id=str(uuid.uuid4()), zone_id=zone.id, project_id=zone.project_id,
                            name=name.to_text(), type=dns.rdatatype.to_text(rdtype),
                            ttl=rrset.ttl, records=json.dumps([rd.to_text() for rd in rrset]),
                            managed=rdtype in (dns.rdatatype.SOA, dns.rdatatype.NS),
                            status="ACTIVE", action="NONE"))
