"""web-download's URL filter and fetch: glance's [import_filtering_opts] and its
SafeRedirectHandler, with the addresses actually connected to checked too.

``allowed(url)`` is glance's validate_import_uri (scheme, host, port lists; an allowed list
wins over its disallowed one; IP addresses in their standard form only). Beyond glance:
with no ``allowed_hosts`` configured, names that resolve to loopback, link-local,
multicast or unspecified addresses are refused, and the connection goes to the address
that was checked (no second lookup a DNS answer could change). Every redirect hop is
checked the same way before it is followed.
"""
from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import urllib.parse

from pocketstack.common import config

MAX_REDIRECTS = 5
TIMEOUT = 30.0
REDIRECTS = (301, 302, 303, 307, 308)


class FetchError(Exception):
    """The URL could not be fetched (the task's message)."""


def _opts():
    return config.CONF.import_filtering_opts


def normalize_host(host: str | None) -> str | None:
    """An IP address in its standard form, or a host name; None for encoded numeric
    forms (decimal, hex, octal) that glance refuses too."""
    if not host:
        return None
    for kind in (ipaddress.IPv4Address, ipaddress.IPv6Address):
        try:
            return str(kind(host))
        except ValueError:
            pass
    if host.replace(".", "").isdigit() or host.lower().startswith("0x"):
        return None
    return host.lower()


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
    if not host or not _pick(opts.allowed_hosts, opts.disallowed_hosts, host):
        return False
    if port and not _pick(opts.allowed_ports, opts.disallowed_ports, port):
        return False
    return True


def _address(host: str, port: int) -> str:
    """The address to connect to, checked when no allowed_hosts list vouches for it."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise FetchError(f"Cannot resolve {host}: {error}") from None
    for *_, sockaddr in infos:
        ip = ipaddress.ip_address(sockaddr[0].split("%")[0])
        if _opts().allowed_hosts or not (ip.is_loopback or ip.is_link_local or
                                         ip.is_multicast or ip.is_unspecified):
            return sockaddr[0]
    raise FetchError(f"Host {host} resolves only to addresses web-download may not use.")


class _Pinned(http.client.HTTPConnection):
    def __init__(self, host, port, address, **kw):
        super().__init__(host, port, timeout=TIMEOUT, **kw)
        self._address = address

    def connect(self):
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedTLS(http.client.HTTPSConnection):
    def __init__(self, host, port, address):
        super().__init__(host, port, timeout=TIMEOUT, context=ssl.create_default_context())
        self._address = address

    def connect(self):
        sock = socket.create_connection((self._address, self.port), self.timeout)
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
        return response, int(length) if length and length.isdigit() else None
    raise FetchError(f"Too many redirects fetching {url}")
