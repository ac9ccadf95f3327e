"""web-download's URL filter and fetch: glance's [import_filtering_opts] and its
SafeRedirectHandler, with the addresses actually connected to checked too.

``allowed(url)`` is glance's validate_import_uri (scheme, host, port lists; an allowed list
wins over its disallowed one; IP addresses in their standard form only, an IPv6 address
that carries an IPv4 one compared as that IPv4 address). Beyond glance: every address the
host resolves to is checked, IPv6 forms that reach an IPv4 address (mapped, NAT64,
IPv4-compatible, 6to4) as that address, and a host with any loopback, link-local,
multicast, unspecified, reserved or broadcast address is refused unless the operator
lists that address in ``allowed_hosts``. The connection goes to the address that was
checked (no second lookup a DNS answer could change). Every redirect hop is checked the
same way before it is followed.
"""
from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import urllib.parse

from pocketstack.common import config, numbers

MAX_REDIRECTS = 5
TIMEOUT = 30.0
REDIRECTS = (301, 302, 303, 307, 308)


class FetchError(Exception):
    """The URL could not be fetched (the task's message)."""


def _opts():
    return config.CONF.import_filtering_opts


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")


def as_ipv4(ip: ipaddress.IPv4Address | ipaddress.IPv6Address):
    """The IPv4 address an IPv6 form reaches (the kernel or a translator connects
    ``::ffff:127.0.0.1`` to 127.0.0.1), else ``ip`` itself."""
    if ip.version == 4:
        return ip
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip in _NAT64 or (ip in _IPV4_COMPATIBLE and int(ip) > 1):  # not :: nor ::1
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour or ip


def _local_only(ip) -> bool:
    """Addresses a fetch for a user must never reach: the host itself, its link, the
    metadata service (169.254.169.254), multicast, broadcast and unassigned space."""
    return (ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_unspecified
            or ip.is_reserved or (ip.version == 4 and ip in _THIS_NETWORK)
            or (ip.version == 6 and ip.is_site_local))


def normalize_host(host: str | None) -> str | None:
    """An IP address in its standard form (IPv4 for an IPv6 form that carries one), or a
    host name; None for encoded numeric forms (decimal, hex, octal) that glance refuses
    too."""
    if not host:
        return None
    try:
        return str(as_ipv4(ipaddress.ip_address(host)))
    except ValueError:
        pass
    if host.replace(".", "").isdigit() or host.lower().startswith("0x"):
        return None
    return host.lower()


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _listed() -> set:
    """The operator's allowed_hosts, in the form normalize_host gives."""
    return {normalize_host(h) for h in _opts().allowed_hosts}


def _pick(allowed: list, disallowed: list, value) -> bool:
    if allowed:
        return value in allowed
    return value not in disallowed


def allowed(url: str | None) -> bool:
    if not url or not isinstance(url, str):
        return False
    try:
        parsed = urllib.parse.urlparse(url)
        port = parsed.port
    except ValueError:
        return False
    opts = _opts()
    if not parsed.scheme or parsed.scheme not in ("http", "https") or \
            not _pick(opts.allowed_schemes, opts.disallowed_schemes, parsed.scheme):
        return False
    host = normalize_host(parsed.hostname)
    listed = _listed()
    if not host or not _pick(listed, {normalize_host(h) for h in opts.disallowed_hosts},
                             host):
        return False
    if _is_address(host) and _local_only(ipaddress.ip_address(host)) and host not in listed:
        return False
    if port and not _pick(opts.allowed_ports, opts.disallowed_ports, port):
        return False
    return True


def _address(host: str, port: int) -> tuple:
    """The address to connect to (getaddrinfo's family and sockaddr), once every address
    the host resolves to passed: a local-only one only if allowed_hosts names it."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise FetchError(f"Cannot resolve {host}: {error}") from None
    listed = _listed()
    for *_, sockaddr in infos:
        ip = as_ipv4(ipaddress.ip_address(sockaddr[0].split("%")[0]))
        if _local_only(ip) and str(ip) not in listed:
            raise FetchError(f"Host {host} resolves to {ip}, an address web-download "
                             f"may not use.")
    if not infos:
        raise FetchError(f"Cannot resolve {host}")
    family, *_, sockaddr = infos[0]
    return family, sockaddr


def _connect(address: tuple, timeout: float) -> socket.socket:
    family, sockaddr = address
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(sockaddr)
    except BaseException:
        sock.close()
        raise
    return sock


class _Pinned(http.client.HTTPConnection):
    def __init__(self, host, port, address, **kw):
        super().__init__(host, port, timeout=TIMEOUT, **kw)
        self._address = address

    def connect(self):
        self.sock = _connect(self._address, self.timeout)


class _PinnedTLS(http.client.HTTPSConnection):
    def __init__(self, host, port, address):
        super().__init__(host, port, timeout=TIMEOUT, context=ssl.create_default_context())
        self._address = address

    def connect(self):
        sock = _connect(self._address, self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def open_url(url: str) -> tuple[http.client.HTTPResponse, int | None]:
    """A 200 response for ``url`` (redirects followed if each hop passes the filter), and
    its declared length."""
    for _ in range(MAX_REDIRECTS + 1):
        if not allowed(url):
            raise FetchError(f"Redirect to disallowed URL: {url}")
        parsed = urllib.parse.urlparse(url)
        tls = parsed.scheme == "https"
        port = parsed.port or (443 if tls else 80)
        address = _address(parsed.hostname, port)
        cls = _PinnedTLS if tls else _Pinned
        conn = cls(parsed.hostname, port, address)
        path = parsed.path or "/"
        if parsed.query:
            path += "?" + parsed.query
        try:
            conn.request("GET", path, headers={"User-Agent": "pocketstack-image-import"})
            response = conn.getresponse()
        except (OSError, http.client.HTTPException) as error:
            conn.close()
            raise FetchError(f"Fetching {url} failed: {error}") from None
        if response.status in REDIRECTS and response.getheader("location"):
            url = urllib.parse.urljoin(url, response.getheader("location"))
            conn.close()
            continue
        if response.status != 200:
            conn.close()
            raise FetchError(f"Fetching {url} failed: HTTP {response.status} "
                             f"{response.reason}")
        length = response.getheader("content-length")
        return response, int(length) if numbers.is_int_text(length) else None
    raise FetchError(f"Too many redirects fetching {url}")
