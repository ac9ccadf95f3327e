"""How a service call travels: one keystoneauth1 session per cloud whose requests reach
this process's own app without a socket when they can (wsgi/inprocess.py), and go over
HTTP otherwise (another host, a streamed body, a handler that needs the event loop).

keystoneauth's own requests (a service user's login) take the same road, so a token
request costs no loopback socket in the all-in-one either.
"""
from __future__ import annotations

import http
import os
import threading
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlsplit

from pocketstack.common import config, runtime
from pocketstack.wsgi import inprocess

if TYPE_CHECKING:  # keystoneauth1 and requests are imported by the first call (start-up)
    from keystoneauth1 import session as ks_session


def _in_process_adapter():
    import requests
    from requests.adapters import HTTPAdapter
    from requests.structures import CaseInsensitiveDict
    from requests.utils import get_encoding_from_headers

    class InProcessAdapter(HTTPAdapter):
        """HTTP, except for a whole (not streamed) request to this cloud's own URL that
        this process can serve inline."""

        def send(self, request, stream=False, **kwargs):
            if not stream and isinstance(request.body, (bytes, str, type(None))):
                served = self._inline(request)
                if served is not None:
                    return served
            return super().send(request, stream=stream, **kwargs)

        @staticmethod
        def _inline(request):
            base = config.public_url()
            if not request.url.startswith(base + "/"):
                return None
            parts = urlsplit(request.url[len(base):])
            body = request.body.encode() if isinstance(request.body, str) else request.body
            answer = inprocess.call(request.method, parts.path, headers=dict(request.headers),
                                    params=parse_qsl(parts.query, keep_blank_values=True),
                                    body=body)
            if answer is None:
                return None
            response = requests.Response()
            response.status_code = answer.status_code
            response.headers = CaseInsensitiveDict(answer.headers)
            response._content = answer.content
            response.encoding = get_encoding_from_headers(response.headers)
            response.reason = http.HTTPStatus(answer.status_code).phrase
            response.url, response.request = request.url, request
            return response

    return InProcessAdapter(pool_connections=8, pool_maxsize=64)


class _Transport:
    """One cloud's session (common/runtime.py): URLs and proxies are the cloud's own."""

    def __init__(self):
        self.session: ks_session.Session | None = None
        self.lock = threading.Lock()


def session() -> ks_session.Session:
    """The cloud's keystoneauth1 session, with no auth plugin: each call names its token
    (or a service user's plugin) itself."""
    state = runtime.current().slot(__name__, _Transport)
    if state.session is None:
        with state.lock:
            if state.session is None:
                import requests
                from keystoneauth1 import session as ks_session

                http_session = requests.Session()
                adapter = _in_process_adapter()
                http_session.mount("http://", adapter)
                http_session.mount("https://", adapter)
                # requests re-reads the proxy and CA-bundle environment variables on every
                # request (a third of a boot's image lookup); read them once instead.
                http_session.proxies = requests.utils.get_environ_proxies(config.public_url())
                http_session.trust_env = False
                verify = (os.environ.get("REQUESTS_CA_BUNDLE")
                          or os.environ.get("CURL_CA_BUNDLE") or True)
                state.session = ks_session.Session(session=http_session, verify=verify)
    return state.session
