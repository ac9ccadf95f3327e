"""Forget connections inside a namespace (what ``conntrack -D`` does, over netlink, so the
host needs no conntrack tool).

A floating IP's connections keep their NAT after its rules go: the kernel applies the
mapping recorded when a connection began, not the rules. A continuous ping to a floating
IP just disassociated would still reach the guest. The router's rules mark every
connection they translate for a floating IP with that address as a 32-bit connection mark
(l3.render_nat); taking the floating IP away deletes the connections with its mark, as
neutron's L3 agent deletes them by address.
"""
from __future__ import annotations

import errno
import ipaddress
import socket
import struct

from pocketstack.network.agent import ip as host

NETLINK_NETFILTER = 12
IPCTNL_MSG_CT_DELETE = (1 << 8) | 2  # NFNL_SUBSYS_CTNETLINK, IPCTNL_MSG_CT_DELETE
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
CTA_MARK, CTA_MARK_MASK = 8, 21


def mark_of(address: str) -> int:
    """The connection mark of a floating IP's connections: its address as a number."""
    return int(ipaddress.IPv4Address(address))


def _attr(kind: int, value: bytes) -> bytes:
    return struct.pack("=HH", 4 + len(value), kind) + value


def delete_marked(ns: str, marks: list[int]) -> None:
    """Delete the namespace's connections carrying any of ``marks`` (a flush filtered by
    mark: one message per mark, answered with an acknowledgement)."""
    if not marks:
        return
    sock = host.socket_in(ns, socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    try:
        sock.settimeout(5)
        for seq, mark in enumerate(marks, 1):
            # nfgenmsg: family AF_UNSPEC with version 0: connections of every family
            body = struct.pack("=BBH", socket.AF_UNSPEC, 0, 0) + \
                _attr(CTA_MARK, struct.pack("!I", mark)) + \
                _attr(CTA_MARK_MASK, struct.pack("!I", 0xFFFFFFFF))
            sock.send(struct.pack("=IHHII", 16 + len(body), IPCTNL_MSG_CT_DELETE,
                                  NLM_F_REQUEST | NLM_F_ACK, seq, 0) + body)
            reply = sock.recv(65536)
            kind = struct.unpack_from("=H", reply, 4)[0]
            if kind == NLMSG_ERROR:
                code = -struct.unpack_from("=i", reply, 16)[0]
                if code not in (0, errno.ENOENT):  # ENOENT: nothing had the mark
                    raise OSError(code, f"deleting connections marked {mark:#x} in {ns}")
    finally:
        sock.close()
