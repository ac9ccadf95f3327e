"""Calls to the other services' REST APIs through a keystoneauth1 session carrying the
user's token (seed steps 19-24), exactly as nova talks to glance and neutron — so compute
works whatever those services' internals are.

A background job whose user token may have expired (build deadlines, cleanup after a
restart) uses a short-lived token of pocketstack's own service user instead.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from typing import TYPE_CHECKING

from pocketstack.common import config, exceptions, runtime
from pocketstack.wsgi import inprocess

if TYPE_CHECKING:  # keystoneauth1 and requests are imported by the first call (start-up)
    from keystoneauth1 import session as ks_session

LOG = logging.getLogger(__name__)

class _Clients:
    """One cloud's HTTP session and service token (common/runtime.py): a token minted by
    one cloud means nothing to another in the same process."""

    def __init__(self):
        self.session: ks_session.Session | None = None
        self.lock = threading.Lock()
        self.service_token: tuple[float, str] | None = None


def _clients() -> _Clients:
    return runtime.current().slot(__name__, _Clients)


def session() -> ks_session.Session:
    st = _clients()
    if st.session is None:
        with st.lock:
            if st.session is None:
                import requests
                from keystoneauth1 import session as ks_session

                http = requests.Session()
                adapter = requests.adapters.HTTPAdapter(pool_connections=8, pool_maxsize=64)
                http.mount("http://", adapter)
                http.mount("https://", adapter)
                # requests re-reads the proxy and CA-bundle environment variables on every
                # request (a third of a boot's image lookup); read them once instead.
                http.proxies = requests.utils.get_environ_proxies(config.public_url())
                http.trust_env = False
                verify = (os.environ.get("REQUESTS_CA_BUNDLE")
                          or os.environ.get("CURL_CA_BUNDLE") or True)
                st.session = ks_session.Session(session=http, verify=verify)
    return st.session


def service_token() -> str:
    """A token of the `pocketstack` service user (admin + service roles)."""
    st = _clients()
    cached = st.service_token
    if cached and cached[0] > time.time() + 60:
        return cached[1]
    import sqlalchemy as sa

    from pocketstack.common import db
    from pocketstack.identity import tokens
    from pocketstack.identity.bootstrap import SERVICE_USER
    from pocketstack.identity.models import Project, User

    with db.reader() as s:
        user = s.scalar(sa.select(User).filter_by(name=SERVICE_USER))
        project = s.scalar(sa.select(Project).filter_by(name="service"))
    token, data = tokens.issue(user_id=user.id, user_domain_id=user.domain_id,
                               methods=["token"], roles=["admin", "member", "reader", "service"],
                               project_id=project.id, project_domain_id=project.domain_id)
    st.service_token = (data["e"], token)
    return token


def owner_token(user_id: str, project_id: str) -> str | None:
    """A short-lived token of a server's owner on its project, with the roles the owner
    holds there now (None if none): for background work that must act as the owner — a
    build the conductor rescheduled after its deadline creates the server's volumes, which
    the volume service gives to the token's project (unlike ports, a volume cannot be
    created for another project). What a Keystone trust delegated at create would give."""
    import datetime as dt

    import sqlalchemy as sa

    from pocketstack.common import db
    from pocketstack.identity import assignment, tokens
    from pocketstack.identity.models import Project, Role, User

    with db.reader() as s:
        user, project = s.get(User, user_id), s.get(Project, project_id)
        if user is None or project is None:
            return None
        role_ids = assignment.effective_role_ids(s, user_id, project_id=project_id)
        roles = list(s.scalars(sa.select(Role.name).where(Role.id.in_(role_ids)))) \
            if role_ids else []
    if not roles:
        return None
    expires = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=10)
    token, _ = tokens.issue(user_id=user.id, user_domain_id=user.domain_id,
                            methods=["token"], roles=roles, project_id=project.id,
                            project_domain_id=project.domain_id,
                            expires_at=expires.replace(tzinfo=None))
    return token


class ServiceError(exceptions.PocketstackError):
    """Another service answered with an error we did not expect."""
    code = 500


class Client:
    """Base for one service: ``base_path`` under the cloud's public URL."""

    base_path = ""

    def __init__(self, ctx=None, *, token: str | None = None):
        self.token = token or (ctx.auth_token if ctx is not None else None) or service_token()
        self.request_id = getattr(ctx, "request_id", None)

    @property
    def url(self) -> str:
        return config.public_url() + self.base_path

    def request(self, method: str, path: str, *, json=None, params=None, stream=False,
                ok=(200, 201, 202, 204), timeout: float = 30.0, headers=None):
        headers = dict(headers or {}, **{"X-Auth-Token": self.token,
                                         "Accept": "application/json"})
        if self.request_id:
            headers["X-OpenStack-Request-ID"] = self.request_id
        resp = None if stream else inprocess.call(method, self.base_path + path,
                                                  headers=headers, params=params, json=json)
        if resp is not None:
            return resp if resp.status_code in ok else self._error(resp)
        try:
            resp = session().request(self.url + path, method, json=json, params=params,
                                     headers=headers, raise_exc=False, stream=stream,
                                     timeout=timeout, connect_retries=1, log=False)
        except Exception as error:  # noqa: BLE001 - connection refused, timeouts
            raise exceptions.ServiceUnavailable(
                f"{type(self).__name__[:-6] or 'service'} is unreachable: {error}") from None
        if resp.status_code not in ok:
            return self._error(resp)
        return resp

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
