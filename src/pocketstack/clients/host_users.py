"""A compute host's own user in the identity service: the credential that tells the
conductor which host asks (compute/conductor/host_identity.py checks it).

A host on the conductor ([compute] database_access = conductor) names itself in every
``host_db`` call, and the conductor lets it touch only its own servers; the name alone
could be a lie. So each host logs in as its own user and sends that token in the call's
context: ``nova-compute-<host>`` in the Default domain, with the ``service`` role on the
service project and nothing else (it can do no more at the REST APIs than any member of
that project; a host still calls the other services as ``nova``). A login is kept until
shortly before the token expires (service_users.user_token: one login per host an hour).

Its password: ``[service_user] host_password``, else the key ``nova-compute-<host>`` of
the password file. The API host makes the user: `pocketstack host-credential <host>`
(``provision``, through the identity API as admin), or its bootstrap for the hosts it
runs itself on the conductor. To cut a host off, disable or delete its user (unlike the
services' users it is not guarded by the service project's ``immutable`` option).
"""
from __future__ import annotations

import secrets

from pocketstack.clients import service_users

PREFIX = "nova-compute-"
ROLE = "service"  # on the service project ([service_user] project_name)
NAME_MAX = 255  # keystone's user name column


def user_name(host: str) -> str:
    """The identity user of compute host ``host``: the one place the convention is."""
    return PREFIX + host


def password(host: str) -> str:
    return service_users.secret(
        "host_password", user_name(host), f"password for the host user {user_name(host)}",
        f"`pocketstack host-credential {host}` on the API host makes it and prints it")


def token(host: str) -> str:
    """A valid token of ``host``'s own user, from the cache or a fresh login."""
    return service_users.user_token(user_name(host), lambda: password(host))


def forget(host: str, value: str) -> None:
    service_users.forget_user(user_name(host), value)


def context(host: str):
    """The RPC context of a host's call to the conductor: its own user's token."""
    from pocketstack.common.context import RequestContext

    return RequestContext(auth_token=token(host), user_name=user_name(host))


class ProvisionError(Exception):
    """The identity API refused a step of making a host's user."""


def provision(session, identity_url: str, host: str, password: str | None = None,
              domain_id: str = "default", project_name: str = "service") -> str:
    """Create ``host``'s user (or reset its password: its tokens are revoked) with the
    service role on the service project, through the identity API at ``identity_url``
    (``.../identity/v3``) with ``session`` (a keystoneauth1 session of an admin). Returns
    the password: ``password``, or a new random one."""
    name = user_name(host)
    if not host or len(name) > NAME_MAX:
        raise ProvisionError(f"host name {host!r} is empty or too long for a user name")
    password = password or secrets.token_urlsafe(32)
    base = identity_url.rstrip("/")

    def call(method: str, path: str, **kwargs) -> dict:
        r = session.request(base + path, method, raise_exc=False, **kwargs)
        if r.status_code >= 400:
            raise ProvisionError(f"{method} {path}: {r.status_code} {r.text[:300]}")
        return r.json() if r.content else {}

    projects = call("GET", "/projects", params={"name": project_name,
                                                "domain_id": domain_id})["projects"]
    roles = call("GET", "/roles", params={"name": ROLE})["roles"]
    if not projects or not roles:
        raise ProvisionError(f"no project {project_name} or role {ROLE}: has the API host "
                             "bootstrapped?")
    users = call("GET", "/users", params={"name": name, "domain_id": domain_id})["users"]
    if users:
        user_id = users[0]["id"]
        call("PATCH", f"/users/{user_id}", json={"user": {"password": password,
                                                          "enabled": True}})
    else:
        user_id = call("POST", "/users", json={"user": {
            "name": name, "domain_id": domain_id, "password": password, "enabled": True,
            "description": f"Compute host {host}'s calls to the conductor"}})["user"]["id"]
    call("PUT", f"/projects/{projects[0]['id']}/users/{user_id}/roles/{roles[0]['id']}")
    return password
