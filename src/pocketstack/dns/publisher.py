"""Hands zones to the DNS server (designate's worker and backend in one): a PENDING zone
is read whole and installed, then it and its recordsets become ACTIVE; a zone being
deleted is dropped, then its row goes. The API wakes it (``notify``); API processes of
their own are seen within ``POLL`` seconds.
"""
from __future__ import annotations

import json
import logging
import threading

import dns.name
import dns.rdata
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import sqlalchemy as sa

from pocketstack.common import config, db, runtime
from pocketstack.dns import authority as auth, quotas
from pocketstack.dns.models import RecordSet, Zone

LOG = logging.getLogger(__name__)
POLL = 0.5


def _wake() -> threading.Event:
    """This cloud's wake-up call for its publisher (several clouds share a test process)."""
    return runtime.current().slot(__name__, threading.Event)


def notify() -> None:
    _wake().set()


def zone_data(zone: Zone, recordsets: list[RecordSet]) -> auth.ZoneData:
    origin = dns.name.from_text(zone.name)
    rrsets = []
    for rs in recordsets:
        rdtype = dns.rdatatype.from_text(rs.type)
        rrset = dns.rrset.RRset(dns.name.from_text(rs.name), dns.rdataclass.IN, rdtype)
        for text in json.loads(rs.records):
            rrset.add(dns.rdata.from_text(dns.rdataclass.IN, rdtype, text, origin=None,
                                          relativize=False))
        rrset.ttl = rs.ttl if rs.ttl is not None else zone.ttl
        rrsets.append(rrset)
    return auth.ZoneData(origin, rrsets)


class Publisher:
    def __init__(self, authority: auth.Authority, master: str = ""):
        self.authority = authority
        self.master = master  # the embedded server's address, for a backend to pull from
        self._stop = threading.Event()
        self._wake = _wake()
        # threads do not inherit the cloud's runtime (its database, its config): bound
        self._thread = threading.Thread(target=runtime.bind(self._run), name="dns-publisher",
                                        daemon=True)
        self._transfers: set[tuple[str, int]] = set()  # (zone id, version) under way
        self._lock = threading.Lock()

    def start(self) -> "Publisher":
        self.load_all()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=10)

    def load_all(self) -> None:
        with db.reader() as s:
            zones = s.query(Zone).filter(Zone.action != "DELETE",
                                         Zone.status != "PENDING").all()
            for zone in zones:
                self._install(s, zone)
        self.publish_pending()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(POLL)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.publish_pending()
            except Exception:  # noqa: BLE001 - the next round tries again
                LOG.exception("Publishing DNS zones failed")

    def publish_pending(self) -> None:
        with db.reader() as s:
            pending = s.query(Zone).filter(Zone.status == "PENDING").all()
            work = []
            for zone in pending:
                if zone.action == "DELETE":
                    work.append((zone, None))
                    continue
                if zone.type == "SECONDARY":
                    work.append((zone, "secondary"))
                    continue
                try:
                    work.append((zone, self._install(s, zone)))
                except Exception:  # noqa: BLE001 - a zone the server cannot load
                    LOG.exception("Zone %s cannot be served", zone.name)
                    work.append((zone, "error"))
        for zone, outcome in work:
            if outcome == "secondary":
                self._start_transfer(zone)
            elif outcome == "error":
                self._mark(zone, "ERROR")
            elif config.CONF.dns.backend == "pdns4":
                self._in_thread(zone, lambda z=zone, o=outcome: self._backend(z, o))
            elif outcome is None:
                self._drop(zone)
            else:
                self._mark(zone, "ACTIVE")

    def _drop(self, zone: Zone) -> None:
        self.authority.remove(dns.name.from_text(zone.name))
        with db.transaction() as s:
            s.query(Zone).filter_by(id=zone.id, version=zone.version).delete()

    def _backend(self, zone: Zone, data) -> None:
        """PowerDNS serves the zone's new serial (or has dropped it) before it is ACTIVE
        (or gone), as designate's worker waits for its backends."""
        from pocketstack.dns import pdns4

        try:
            if data is None:
                pdns4.remove(zone.name)
            else:
                pdns4.publish(zone.name, data.serial,
                              config.CONF.dns.pdns4_master or self.master)
        except Exception as error:  # noqa: BLE001 - PowerDNS down or refusing
            LOG.warning("PowerDNS did not take zone %s: %s", zone.name, error)
            self._mark(zone, "ERROR")
            return
        if data is None:
            self._drop(zone)
        else:
            self._mark(zone, "ACTIVE")

    def _install(self, s, zone: Zone):
        rows = s.query(RecordSet).filter_by(zone_id=zone.id).all()
        data = zone_data(zone, rows)
        self.authority.install(data)
        return data

    @staticmethod
    def _mark(zone: Zone, status: str) -> None:
        """ACTIVE (or ERROR) unless the zone changed meanwhile (the next round then
        publishes that change)."""
        with db.transaction() as s:
            done = s.query(Zone).filter_by(id=zone.id, version=zone.version).update(
                {"status": status, "action": "NONE" if status == "ACTIVE" else zone.action})
            if done and status == "ACTIVE":
                s.query(RecordSet).filter(RecordSet.zone_id == zone.id,
                                          RecordSet.status != "ACTIVE").update(
                    {"status": "ACTIVE", "action": "NONE"}, synchronize_session=False)

    def _start_transfer(self, zone: Zone) -> None:
        """A transfer waits on the masters (seconds when one is down): in a thread of
        its own, so the other zones' changes are served meanwhile."""
        self._in_thread(zone, lambda: self._transfer(zone))

    def _in_thread(self, zone: Zone, work) -> None:
        """``work`` for this version of the zone, once, in a thread of its own."""
        key = (zone.id, zone.version)
        with self._lock:
            if key in self._transfers:
                return
            self._transfers.add(key)

        def run():
            try:
                work()
            finally:
                with self._lock:
                    self._transfers.discard(key)
        threading.Thread(target=runtime.bind(run), name=f"dns-work-{zone.name}",
                         daemon=True).start()

    def _transfer(self, zone: Zone) -> None:
        from pocketstack.dns import secondary

        try:
            with db.reader() as s:
                max_records = quotas.limits(s, zone.project_id)["zone_records"]
            data = secondary.transfer(zone, max_records)
        except Exception as error:  # noqa: BLE001 - masters down, refused, bad data
            LOG.warning("Zone transfer of %s from %s failed: %s", zone.name, zone.masters,
                        error)
            self._mark(zone, "ERROR")
            return
        self.authority.install(data)
        with db.transaction() as s:
            done = s.query(Zone).filter_by(id=zone.id, version=zone.version).update(
                {"status": "ACTIVE", "action": "NONE", "serial": data.serial})
            if done:
                secondary.store(s, zone, data)


def pending_count() -> int:
    with db.reader() as s:
        return s.query(sa.func.count(Zone.id)).filter(Zone.status == "PENDING").scalar()
