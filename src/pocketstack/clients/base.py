"""One call to another service's REST API, as nova makes them (seed steps 19-27).

A call made for a user carries the user's token and, as ``X-Service-Token``, the calling
service's own (nova's ``[service_user] send_service_user_token``): the target acts as
the user, and accepts the user's token even once it has expired (a long build). Work
with no user behind it (deadlines, recovery, events) carries the service token alone.
"""
from __future__ import annotations

import logging

from pocketstack.clients import service_users, transport
from pocketstack.common import config, exceptions
from pocketstack.wsgi import inprocess

LOG = logging.getLogger(__name__)


class ServiceError(exceptions.PocketstackError):
    """Another service answered with an error we did not expect."""
    code = 500


class Client:
    """Base for one target service: ``base_path`` under the cloud's public URL.

    ``caller`` is the calling service (its user signs the call); ``ctx`` the request
    context whose user the call is for, if any (or ``user_token`` itself); ``as_service``
    drops the user's token (cleanup that must not depend on it); ``endpoint`` a URL of the
    target service other than this cloud's (always over HTTP).
    """

    base_path = ""

    def __init__(self, ctx=None, *, caller: str = "compute", as_service: bool = False,
                 user_token: str | None = None, endpoint: str | None = None):
        self.caller = caller
        self.endpoint = endpoint.rstrip("/") if endpoint else None
        self.user_token = None if as_service else (user_token
                                                   or getattr(ctx, "auth_token", None))
        self.request_id = getattr(ctx, "request_id", None)

    @property
    def url(self) -> str:
        return self.endpoint or config.public_url() + self.base_path

    def _auth_headers(self) -> dict:
        service_token = service_users.token(self.caller)
        if self.user_token:
            return {"X-Auth-Token": self.user_token, "X-Service-Token": service_token}
        return {"X-Auth-Token": service_token}

    def request(self, method: str, path: str, *, json=None, params=None, stream=False,
                ok=(200, 201, 202, 204), timeout: float = 30.0, headers=None, data=None):
        for attempt in (1, 2):
            # JSON unless the call asks for another form (a key manager payload)
            sent = {"Accept": "application/json", **(headers or {}), **self._auth_headers()}
            if self.request_id:
                sent["X-OpenStack-Request-ID"] = self.request_id
            resp = self._send(method, path, sent, json, params, stream, timeout, data)
            if resp.status_code == 401 and attempt == 1:
                # The service token was revoked (its user's password changed): log in again.
                service_users.forget(self.caller, sent.get("X-Service-Token")
                                     or sent["X-Auth-Token"])
                continue
            break
        return resp if resp.status_code in ok else self._error(resp)

    def find(self, path: str, key: str | None = None):
        """GET ``path``: the body (or its ``key``), None when the target answers 404."""
        try:
            body = self.request("GET", path).json()
        except exceptions.NotFound:
            return None
        return body[key] if key else body

    def _send(self, method, path, headers, json, params, stream, timeout, data):
        if not stream and isinstance(data, (bytes, type(None))) and self.endpoint is None:
            # The target served by this process: the same request, without the socket.
            resp = inprocess.call(method, self.base_path + path, headers=headers,
                                  params=params, json=json, body=data)
            if resp is not None:
                return resp
        try:
            return transport.session().request(
                self.url + path, method, json=json, params=params, data=data,
                headers=headers, raise_exc=False, stream=stream, timeout=timeout,
                connect_retries=1, log=False)
        except Exception as error:  # noqa: BLE001 - connection refused, timeouts
            raise exceptions.ServiceUnavailable(
                f"{type(self).__name__[:-6] or 'service'} is unreachable: {error}") from None

    def _error(self, resp):
        try:
            body = resp.json()
        except ValueError:
            body = resp.text[:200]
        if resp.status_code == 404:
            raise exceptions.NotFound(str(body))
        if resp.status_code == 409:
            raise exceptions.Conflict(str(body))
        if resp.status_code in (400, 403):
            raise exceptions.BadRequest(str(body))
        raise ServiceError(f"{self.base_path} answered {resp.status_code}: {body}")
