"""The zones the DNS server answers for, in memory, and how a question is answered
(RFC 1034 4.3.2 as an authoritative-only server: referrals below delegations, CNAMEs,
wildcards, NXDOMAIN for names that do not exist, NODATA with the SOA for names that do).

A zone is replaced whole (``install``): readers see the old data or the new, never a mix.
"""
from __future__ import annotations

import threading

import dns.name
import dns.rdataclass
import dns.rdatatype
import dns.rrset

NOERROR, NXDOMAIN, REFUSED = 0, 3, 5
SOA, NS, CNAME, ANY = dns.rdatatype.SOA, dns.rdatatype.NS, dns.rdatatype.CNAME, \
    dns.rdatatype.ANY
WILD = dns.name.Name((b"*",))


class ZoneData:
    """One zone's records: ``nodes[name][rdtype] = RRset``."""

    def __init__(self, origin: dns.name.Name, rrsets: list[dns.rrset.RRset]):
        self.origin = origin
        self.nodes: dict[dns.name.Name, dict[int, dns.rrset.RRset]] = {}
        self.names: set[dns.name.Name] = {origin}  # existing names, empty non-terminals too
        for rrset in rrsets:
            self.nodes.setdefault(rrset.name, {})[rrset.rdtype] = rrset
            name = rrset.name
            while name != origin and name not in self.names:
                self.names.add(name)
                name = name.parent()
        self.soa = self.nodes[origin][SOA]

    @property
    def serial(self) -> int:
        return self.soa[0].serial

    def negative_soa(self) -> dns.rrset.RRset:
        """The SOA for a negative answer, its TTL capped by the SOA minimum (RFC 2308)."""
        soa = self.soa.copy()
        soa.ttl = min(self.soa.ttl, self.soa[0].minimum)
        return soa

    def transfer(self) -> list[dns.rrset.RRset]:
        """AXFR: the SOA, every other RRset, the SOA again."""
        out = [self.soa]
        for name in sorted(self.nodes):
            out.extend(r for t, r in sorted(self.nodes[name].items()) if t != SOA)
        return out + [self.soa]


class Answer:
    __slots__ = ("rcode", "answer", "authority", "additional", "aa")

    def __init__(self, rcode=NOERROR, aa=True):
        self.rcode, self.aa = rcode, aa
        self.answer: list = []
        self.authority: list = []
        self.additional: list = []


class Authority:
    def __init__(self):
        self.zones: dict[dns.name.Name, ZoneData] = {}
        self.generation = 0  # bumped on every change: cached answers of older ones are stale
        self._lock = threading.Lock()

    def install(self, zone: ZoneData) -> None:
        with self._lock:
            zones = dict(self.zones)
            zones[zone.origin] = zone
            self.zones = zones
            self.generation += 1

    def remove(self, origin: dns.name.Name) -> None:
        with self._lock:
            zones = dict(self.zones)
            zones.pop(origin, None)
            self.zones = zones
            self.generation += 1

    def zone_for(self, qname: dns.name.Name) -> ZoneData | None:
        zones = self.zones
        name = qname
        while True:
            zone = zones.get(name)
            if zone is not None:
                return zone
            if name == dns.name.root or not name.labels:
                return None
            name = name.parent()

    def answer(self, qname: dns.name.Name, qtype: int) -> Answer:
        zone = self.zone_for(qname)
        if zone is None:
            return Answer(REFUSED, aa=False)
        out = Answer()
        self._resolve(zone, qname, qtype, out, depth=0)
        return out

    def _resolve(self, zone: ZoneData, qname, qtype, out: Answer, depth: int) -> None:
        referral = self._delegation(zone, qname, qtype)
        if referral is not None:
            if depth == 0:
                out.aa = False
            out.authority.append(referral)
            for rd in referral:
                glue = zone.nodes.get(rd.target, {})
                out.additional.extend(glue[t] for t in (dns.rdatatype.A, dns.rdatatype.AAAA)
                                      if t in glue)
            return
        node = zone.nodes.get(qname)
        owner = qname
        if node is None and qname not in zone.names:
            node = self._wildcard(zone, qname)
            if node is None:
                if depth == 0:
                    out.rcode = NXDOMAIN
                out.authority.append(zone.negative_soa())
                return
        node = node or {}
        if qtype == ANY and node:
            out.answer.extend(_owned(r, owner) for r in node.values())
            return
        rrset = node.get(qtype)
        if rrset is not None:
            out.answer.append(_owned(rrset, owner))
            return
        cname = node.get(CNAME)
        if cname is not None:
            out.answer.append(_owned(cname, owner))
            target = cname[0].target
            if depth < 8 and target.is_subdomain(zone.origin):
                self._resolve(zone, target, qtype, out, depth + 1)
            return
        out.authority.append(zone.negative_soa())  # NODATA

    @staticmethod
    def _delegation(zone: ZoneData, qname, qtype):
        """The NS RRset of a delegation at or above ``qname`` (below the apex), if any."""
        if qname == zone.origin:
            return None
        labels = len(qname) - len(zone.origin)
        for i in range(labels - 1, -1, -1):  # from just below the apex down to qname
            cut = dns.name.Name(qname.labels[i:])
            node = zone.nodes.get(cut)
            if node and NS in node and not (cut == qname and qtype == dns.rdatatype.DS):
                return node[NS]
        return None

    @staticmethod
    def _wildcard(zone: ZoneData, qname):
        encloser = qname.parent()
        while encloser not in zone.names and encloser != zone.origin:
            encloser = encloser.parent()
        return zone.nodes.get(WILD.concatenate(encloser))


def _owned(rrset: dns.rrset.RRset, owner) -> dns.rrset.RRset:
    """The RRset under the name asked (a wildcard's records answer as the query's name)."""
    if rrset.name == owner:
        return rrset
    copy = dns.rrset.RRset(owner, rrset.rdclass, rrset.rdtype)
    copy.update(rrset)
    copy.ttl = rrset.ttl
    return copy
