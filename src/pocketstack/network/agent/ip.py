"""The few host commands the agent runs (iproute2, nft), and sockets inside a namespace."""
from __future__ import annotations

import ctypes
import json
import logging
import os
import socket
import subprocess
import threading

LOG = logging.getLogger(__name__)
CLONE_NEWNET = 0x40000000


class CommandFailed(Exception):
    pass


def run(*args: str, ns: str | None = None, check: bool = True, stdin: str | None = None
        ) -> str:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        raise CommandFailed(f"{' '.join(cmd)}: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout


def ip(*args: str, ns: str | None = None, check: bool = True) -> str:
    return run("ip", *(["-n", ns] if ns else []), *args, check=check)


def namespaces() -> set[str]:
    return set(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else set()


def link_exists(name: str) -> bool:
    """In this (the root) namespace; no process started."""
    return os.path.exists(f"/sys/class/net/{name}")


def bridge_ports(bridge: str) -> list[str]:
    """The devices on ``bridge`` (in the root namespace; no process started)."""
    path = f"/sys/class/net/{bridge}/brif"
    return sorted(os.listdir(path)) if os.path.isdir(path) else []


def addresses(dev: str, ns: str | None = None) -> set[str]:
    """'address/prefixlen' of the device (IPv4 and global IPv6)."""
    out = ip("-j", "addr", "show", "dev", dev, ns=ns, check=False)
    found = set()
    for link in json.loads(out or "[]"):
        for a in link.get("addr_info", []):
            if a.get("scope") != "link":
                found.add(f"{a['local']}/{a['prefixlen']}")
    return found


def disable_ipv6(dev: str) -> None:
    """No link-local address: the host must not be reachable through guest bridges."""
    path = f"/proc/sys/net/ipv6/conf/{dev}/disable_ipv6"
    if os.path.exists(path):
        with open(path, "w") as f:
            f.write("1")


_libc = None


def _setns(fd: int) -> None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns failed")


def listening_socket(ns: str, address: str, port: int) -> socket.socket:
    """A TCP socket listening on address:port inside namespace ``ns``."""
    sock = socket_in(ns, socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
        sock.listen(64)
    except Exception:
        sock.close()
        raise
    return sock


def socket_in(ns: str, family: int, kind: int, proto: int = 0) -> socket.socket:
    """A socket of namespace ``ns``. It is made on a thread of its own that enters the
    namespace (a namespace is per thread), so the process's other threads stay where
    they are; the socket stays in ``ns`` whoever uses it."""
    result: dict = {}

    def make():
        try:
            with open(f"/run/netns/{ns}") as f:
                _setns(f.fileno())
            result["socket"] = socket.socket(family, kind, proto)
        except Exception as error:  # noqa: BLE001 - handed to the caller
            result["error"] = error

    thread = threading.Thread(target=make, name=f"netns-{ns[:14]}")
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["socket"]


def announce(ns: str, dev: str, mac: str, address: str) -> None:
    """One gratuitous ARP for ``address`` from ``dev`` in ``ns`` (what ``arping -U``
    sends): neighbours update their entry for it at once, and one still resolving it
    (asked before the address existed) stops waiting for its next retry, a second away."""
    sender = bytes.fromhex(mac.replace(":", ""))
    ip4 = socket.inet_aton(address)
    frame = (b"\xff" * 6 + sender + b"\x08\x06" +                  # Ethernet, ARP
             b"\x00\x01\x08\x00\x06\x04\x00\x01" +               # IPv4 over Ethernet, request
             sender + ip4 + b"\x00" * 6 + ip4)                       # asking for itself
    sock = socket_in(ns, socket.AF_PACKET, socket.SOCK_RAW)
    try:
        sock.bind((dev, 0))
        sock.send(frame)
    finally:
        sock.close()
