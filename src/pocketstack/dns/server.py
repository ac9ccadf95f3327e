"""The embedded authoritative DNS server: UDP and TCP on one address and port, answers
from an Authority (authority.py), AXFR/IXFR (as a full transfer) over TCP.

UDP answers are cached by the query's bytes after its id (the same question with the
same flags and EDNS options gets the same answer; a client's EDNS cookie, which this
server does not echo, is left out), until the zones change: a repeated question costs a
dictionary lookup instead of dnspython's parse and render.
"""
from __future__ import annotations

import logging
import socket
import socketserver
import struct
import threading

import dns.exception
import dns.flags
import dns.message
import dns.opcode
import dns.rcode
import dns.rdataclass
import dns.rdatatype

from pocketstack.dns import authority as auth

LOG = logging.getLogger(__name__)
CACHE_SIZE = 20000
TRANSFER_CHUNK = 100  # RRsets per AXFR message
AXFR, IXFR = dns.rdatatype.AXFR, dns.rdatatype.IXFR


def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.strip().rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"[dns] listen must be HOST:PORT, not {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


class Responder:
    """Turns query bytes into answer bytes (shared by the UDP and TCP sides)."""

    def __init__(self, authority: auth.Authority):
        self.authority = authority
        self._cache: dict[bytes, bytes] = {}
        self._generation = -1

    def udp(self, data: bytes) -> bytes | None:
        if self._generation != self.authority.generation:
            self._cache, self._generation = {}, self.authority.generation
        key = cache_key(data)
        cached = self._cache.get(key)
        if cached is not None:
            return data[:2] + cached
        wire = self.respond(data, tcp=False)
        if wire is not None:
            if len(self._cache) >= CACHE_SIZE:
                self._cache = {}
            self._cache[key] = wire[2:]
        return wire

    def respond(self, data: bytes, tcp: bool) -> bytes | None:
        """One answer's bytes; None to say nothing (not a query we can parse at all)."""
        try:
            query = dns.message.from_wire(data)
        except dns.exception.DNSException:
            return _formerr(data)
        if query.flags & dns.flags.QR:
            return None
        response = dns.message.make_response(query)
        response.flags &= ~dns.flags.RA
        if query.opcode() != dns.opcode.QUERY or len(query.question) != 1:
            response.set_rcode(dns.rcode.NOTIMP if query.opcode() != dns.opcode.QUERY
                               else dns.rcode.FORMERR)
            return response.to_wire()
        question = query.question[0]
        if question.rdclass != dns.rdataclass.IN:
            response.set_rcode(dns.rcode.REFUSED)
            return response.to_wire()
        if question.rdtype in (AXFR, IXFR):
            zone = self.authority.zones.get(question.name)
            if zone is None or (question.rdtype == AXFR and not tcp):
                response.set_rcode(dns.rcode.REFUSED if zone is None else dns.rcode.FORMERR)
                return response.to_wire()
            response.flags |= dns.flags.AA
            response.answer.append(zone.soa)  # IXFR over UDP: "ask again over TCP"
            return response.to_wire()
        result = self.authority.answer(question.name, question.rdtype)
        response.set_rcode(result.rcode)
        if result.aa:
            response.flags |= dns.flags.AA
        response.answer.extend(result.answer)
        response.authority.extend(result.authority)
        response.additional.extend(result.additional)
        limit = 65535 if tcp else max(512, query.payload if query.edns >= 0 else 512)
        try:
            return response.to_wire(max_size=limit)
        except dns.exception.TooBig:
            response = dns.message.make_response(query)
            response.flags |= dns.flags.TC | (dns.flags.AA if result.aa else 0)
            response.set_rcode(result.rcode)
            return response.to_wire()

    def transfer(self, data: bytes) -> list[bytes] | None:
        """The messages of a zone transfer, when ``data`` asks for one."""
        try:
            query = dns.message.from_wire(data)
        except dns.exception.DNSException:
            return None
        if len(query.question) != 1 or query.question[0].rdtype not in (AXFR, IXFR):
            return None
        zone = self.authority.zones.get(query.question[0].name)
        if zone is None:
            return None
        rrsets = zone.transfer()
        out = []
        for start in range(0, len(rrsets), TRANSFER_CHUNK):
            response = dns.message.make_response(query)
            response.flags |= dns.flags.AA
            response.flags &= ~dns.flags.RA
            response.answer.extend(rrsets[start:start + TRANSFER_CHUNK])
            out.append(response.to_wire(max_size=65535))
        return out


COOKIE = 10  # the EDNS option code of DNS cookies (RFC 7873)


def cache_key(data: bytes) -> bytes:
    """The query after its id, without an EDNS COOKIE option (dig and BIND resolvers send
    a fresh one each time; the answer does not depend on it). Anything unusual: the
    query's bytes as they are."""
    i, end = 12, len(data)
    while i < end:  # the question's name: plain labels (queries do not compress)
        length = data[i]
        if length == 0 or length & 0xC0:
            break
        i += length + 1
    if i >= end or data[i] != 0:
        return data[2:]
    i += 5  # the root label, QTYPE, QCLASS
    opt = data[i:]
    if len(opt) < 11 or opt[0] != 0 or opt[1:3] != b"\x00\x29":  # not an OPT RR first
        return data[2:]
    rdlength = int.from_bytes(opt[9:11], "big")
    options, kept, j = opt[11:11 + rdlength], bytearray(), 0
    while j + 4 <= len(options):
        size = int.from_bytes(options[j + 2:j + 4], "big")
        if int.from_bytes(options[j:j + 2], "big") != COOKIE:
            kept += options[j:j + 4 + size]
        j += 4 + size
    return data[2:i] + opt[:9] + bytes(kept) + opt[11 + rdlength:]


def _formerr(data: bytes) -> bytes | None:
    if len(data) < 12:
        return None
    flags = struct.unpack("!H", data[2:4])[0]
    if flags & 0x8000:  # a response: never answer one
        return None
    # Header only: the id, QR, the opcode and RD echoed, rcode FORMERR.
    return data[:2] + struct.pack("!HHHHH", 0x8000 | (flags & 0x7900) | 1, 0, 0, 0, 0)


class _TCPHandler(socketserver.BaseRequestHandler):
    def handle(self):
        responder: Responder = self.server.responder
        sock = self.request
        sock.settimeout(10.0)
        try:
            while True:
                head = _recv_exactly(sock, 2)
                if head is None:
                    return
                data = _recv_exactly(sock, struct.unpack("!H", head)[0])
                if data is None:
                    return
                messages = responder.transfer(data)
                if messages is None:
                    answer = responder.respond(data, tcp=True)
                    messages = [answer] if answer is not None else []
                for wire in messages:
                    sock.sendall(struct.pack("!H", len(wire)) + wire)
        except OSError:
            return


def _recv_exactly(sock, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


class _TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class DNSServer:
    """UDP and TCP listeners on one port; ``address`` once started."""

    def __init__(self, authority: auth.Authority, host: str, port: int):
        self.responder = Responder(authority)
        self.host, self.port = host, port
        self._stopping = False
        self._threads: list[threading.Thread] = []

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def start(self) -> "DNSServer":
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        for _ in range(20):  # port 0: the free UDP port must be free for TCP as well
            udp = socket.socket(family, socket.SOCK_DGRAM)
            udp.bind((self.host, self.port))
            port = udp.getsockname()[1]
            _TCPServer.address_family = family
            try:
                tcp = _TCPServer((self.host, port), _TCPHandler)
            except OSError:
                udp.close()
                if self.port:
                    raise
                continue
            break
        else:
            raise OSError("no port free for both UDP and TCP")
        self.port, self.udp, self.tcp = port, udp, tcp
        tcp.responder = self.responder
        self._threads = [threading.Thread(target=self._serve_udp, name="dns-udp", daemon=True),
                         threading.Thread(target=tcp.serve_forever, kwargs={
                             "poll_interval": 0.5}, name="dns-tcp", daemon=True)]
        for thread in self._threads:
            thread.start()
        LOG.info("DNS server answering on %s (UDP and TCP)", self.address)
        return self

    def _serve_udp(self) -> None:
        udp, responder = self.udp, self.responder
        while not self._stopping:
            try:
                data, peer = udp.recvfrom(65535)
            except OSError:
                if self._stopping:
                    return
                continue
            if self._stopping:
                return
            try:
                wire = responder.udp(data)
                if wire is not None:
                    udp.sendto(wire, peer)
            except Exception:  # noqa: BLE001 - one bad packet must not stop the server
                LOG.exception("DNS query from %s failed", peer)

    def stop(self) -> None:
        self._stopping = True
        try:  # wake the UDP thread blocked in recvfrom
            with socket.socket(self.udp.family, socket.SOCK_DGRAM) as wake:
                wake.sendto(b"", (self.host if self.host not in ("0.0.0.0", "::") else
                                  ("127.0.0.1" if self.udp.family == socket.AF_INET else "::1"),
                                  self.port))
        except OSError:
            pass
        self.tcp.shutdown()
        self.tcp.server_close()
        for thread in self._threads:
            thread.join(timeout=5)
        self.udp.close()
