"""POST /v3/auth/tokens: who the caller is (methods), what the token is for (scope), which
roles it carries (direct, through groups, implied) — and the token body Keystone returns."""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from pocketstack.common import cache, config, db, exceptions, runtime
from pocketstack.common.timeutils import isotime_us, utcnow
from pocketstack.identity import (access_rules, assignment, catalog, oauth1, passwords,
                                  tokens, trusts)
from pocketstack.identity.assignment import effective_role_ids
from pocketstack.identity.models import ApplicationCredential, Domain, Project, Role, User

AUTH_FAILED = "The request you have made requires authentication."


def _unauthorized(message: str = AUTH_FAILED):
    return exceptions.Unauthorized(message)


# --- looking things up by id or by name + domain ---------------------------------------

def _text(ref: dict, key: str) -> str | None:
    """``ref[key]`` if it is a non-empty string; 400 for any other non-null value."""
    value = ref.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise exceptions.ValidationError(f"Invalid input for field '{key}': "
                                         f"{value!r} is not of type 'string'")
    return value


def _domain(s, ref: dict | None, what: str) -> Domain | None:
    if not isinstance(ref, dict) or not (_text(ref, "id") or _text(ref, "name")):
        raise exceptions.ValidationError(f"Expecting {what} domain id or name.")
    if _text(ref, "id"):
        return s.get(Domain, ref["id"])
    return s.scalar(sa.select(Domain).where(Domain.name == ref["name"]))


def _find_user(s, ref: dict) -> User | None:
    if not isinstance(ref, dict):
        raise exceptions.ValidationError("Expecting to find user in the request body.")
    if _text(ref, "id"):
        return s.get(User, ref["id"])
    if not _text(ref, "name"):
        raise exceptions.ValidationError("Expecting user id or name.")
    dom = _domain(s, ref.get("domain"), "user")
    if dom is None:
        return None
    return s.scalar(sa.select(User).where(User.name == ref["name"], User.domain_id == dom.id))


def _role_refs(s, role_ids) -> list[dict]:
    if not role_ids:
        return []
    roles = s.scalars(sa.select(Role).where(Role.id.in_(list(role_ids)))).all()
    return sorted(({"id": r.id, "name": r.name} for r in roles), key=lambda r: r["name"])


# --- authentication -----------------------------------------------------------------------

def _check_user_usable(s, user: User | None) -> User:
    if user is None or not user.enabled:
        raise _unauthorized()
    dom = s.get(Domain, user.domain_id)
    if dom is None or not dom.enabled:
        raise _unauthorized()
    return user


def _password_method(s, body: dict, http=None) -> tuple[User, dict]:
    pw = body.get("password")
    if not isinstance(pw, dict) or not isinstance(pw.get("user"), dict):
        raise exceptions.ValidationError("Expecting to find user in password.")
    ref = pw["user"]
    password = ref.get("password")
    if not isinstance(password, str):
        raise exceptions.ValidationError("Expecting to find password in user.")
    user = _find_user(s, ref)
    if user is None:
        passwords.dummy_check(password)  # same cost as a wrong password
        raise _unauthorized()
    if not passwords.check_password(password, user.password_hash):
        raise _unauthorized()
    return _check_user_usable(s, user), {}


def _token_method(s, body: dict, http=None) -> tuple[User, dict]:
    ref = body.get("token")
    if not isinstance(ref, dict) or not isinstance(ref.get("id"), str) or not ref["id"]:
        raise exceptions.ValidationError("Expecting to find id in token.")
    data = tokens.validate(ref["id"])
    if data.app_cred_id:
        raise exceptions.Forbidden("Application credential tokens cannot be rescoped.")
    if data.trust:
        raise exceptions.Forbidden("Trust-scoped tokens cannot be rescoped.")
    if data.oauth:
        raise exceptions.Forbidden(
            "You are not authorized to perform the requested action: Using OAuth-scoped "
            "token to create another token. Create a new OAuth-scoped token instead.")
    user = _check_user_usable(s, s.get(User, data.user_id))
    return user, {"expires_at": data.expires_at, "parent_audit_id": data.audit_ids[0],
                  "methods": data.methods}


def _app_cred_method(s, body: dict, http=None) -> tuple[User, dict]:
    ref = body.get("application_credential")
    if not isinstance(ref, dict) or not isinstance(ref.get("secret"), str):
        raise exceptions.ValidationError("Expecting to find secret in application_credential.")
    if _text(ref, "id"):
        cred = s.get(ApplicationCredential, ref["id"])
    elif _text(ref, "name") and isinstance(ref.get("user"), dict):
        user = _find_user(s, ref["user"])
        cred = user and s.scalar(sa.select(ApplicationCredential).where(
            ApplicationCredential.user_id == user.id, ApplicationCredential.name == ref["name"]))
    else:
        raise exceptions.ValidationError(
            "Expecting application_credential id, or name and user.")
    if cred is None or not passwords.check_password(ref["secret"], cred.secret_hash):
        raise _unauthorized()
    if cred.expires_at is not None and cred.expires_at <= utcnow():
        raise _unauthorized()
    user = _check_user_usable(s, s.get(User, cred.user_id))
    return user, {"app_cred": cred}


def _oauth1_method(s, body: dict, http=None) -> tuple[User, dict]:
    """A request signed with an OAuth1 access token (its body names only the method)."""
    if http is None:
        raise _unauthorized()
    access, role_ids = oauth1.authenticate(s, *http)
    user = _check_user_usable(s, s.get(User, access.authorizing_user_id))
    return user, {"oauth": (access, role_ids)}


METHODS = {"password": _password_method, "token": _token_method,
           "application_credential": _app_cred_method, "oauth1": _oauth1_method}
# Methods whose data is the signed request, not a member of the body's identity.
_FROM_REQUEST = ("oauth1",)


def _scope_project_id(scope) -> str | None:
    ref = scope.get("project") if isinstance(scope, dict) else None
    return ref.get("id") if isinstance(ref, dict) else None


def _resolve_scope(s, scope, user: User) -> tuple[Project | None, Domain | None, str | None]:
    if scope is None:
        return None, None, None
    if scope == "unscoped":
        return None, None, None
    if not isinstance(scope, dict):
        raise exceptions.ValidationError("Invalid scope.")
    if "system" in scope:
        if not scope["system"] == {"all": True}:
            raise exceptions.ValidationError("Only system scope 'all' is supported.")
        return None, None, "all"
    if "project" in scope:
        ref = scope["project"]
        if not isinstance(ref, dict):
            raise exceptions.ValidationError("Invalid project scope.")
        if _text(ref, "id"):
            project = s.get(Project, ref["id"])
        elif _text(ref, "name"):
            dom = _domain(s, ref.get("domain"), "project")
            project = dom and s.scalar(sa.select(Project).where(
                Project.name == ref["name"], Project.domain_id == dom.id))
        else:
            raise exceptions.ValidationError("Expecting project id or name.")
        if project is None:
            raise _unauthorized(f"Could not find project: {ref.get('id') or ref.get('name')}.")
        return project, None, None
    if "domain" in scope:
        dom = _domain(s, scope["domain"], "scope")
        if dom is None:
            raise _unauthorized("Could not find domain.")
        return None, dom, None
    raise exceptions.ValidationError("Scope must name a project, a domain or the system.")


def _scope_role_ids(s, user: User, project, domain, system) -> set[str]:
    """The roles ``user`` holds on the requested scope (401 if none)."""
    role_ids: set[str] = set()
    if project is not None:
        pdom = s.get(Domain, project.domain_id)
        if not project.enabled or pdom is None or not pdom.enabled:
            raise _unauthorized(f"Project {project.id} is disabled.")
        role_ids = effective_role_ids(s, user.id, project_id=project.id)
    elif domain is not None:
        if not domain.enabled:
            raise _unauthorized(f"Domain {domain.id} is disabled.")
        role_ids = effective_role_ids(s, user.id, domain_id=domain.id)
    elif system is not None:
        # System scope: the system role grants, and (as the bootstrap admin has no
        # system grant of its own) the roles on the bootstrap admin project.
        admin_project = s.scalar(sa.select(Project).where(
            Project.name == "admin",
            Project.domain_id == config.CONF.identity.default_domain_id))
        role_ids = effective_role_ids(s, user.id, system=True)
        if admin_project:
            role_ids |= effective_role_ids(s, user.id, project_id=admin_project.id)
    if (project or domain or system) and not role_ids:
        raise _unauthorized("User has no access to the requested scope.")
    return role_ids


def authenticate(body: dict, *, nocatalog: bool = False,
                 http: tuple[str, object] | None = None) -> tuple[str, dict]:
    """Authenticate a POST /v3/auth/tokens body; return (token id, token body).
    ``http``: the request's URL (as the client signed it) and headers, for oauth1."""
    auth = body.get("auth") if isinstance(body, dict) else None
    if not isinstance(auth, dict) or not isinstance(auth.get("identity"), dict):
        raise exceptions.ValidationError("Expecting to find identity in auth.")
    identity = auth["identity"]
    methods = identity.get("methods")
    if not isinstance(methods, list) or not methods or not all(isinstance(m, str) for m in methods):
        raise exceptions.ValidationError("Expecting to find methods in identity.")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise _unauthorized(f"Unsupported authentication method: {unknown[0]}.")
    with db.reader() as s:
        user, extra = None, {}
        for method in methods:
            if method not in identity and method not in _FROM_REQUEST:
                raise exceptions.ValidationError(f"Expecting to find {method} in identity.")
            found, info = METHODS[method](s, identity, http)
            if user is not None and found.id != user.id:
                raise _unauthorized()
            user = found
            extra.update(info)
        cred: ApplicationCredential | None = extra.get("app_cred")
        scope = auth.get("scope")
        if cred is not None:
            if scope not in (None, "unscoped") and _scope_project_id(scope) != cred.project_id:
                raise _unauthorized("Application credentials cannot request a scope.")
            scope = {"project": {"id": cred.project_id}}
        if scope is None and user.default_project_id and "token" not in methods:
            # Keystone: scope to the default project if the user may use it; otherwise
            # issue an unscoped token rather than fail.
            default = s.get(Project, user.default_project_id)
            if (default is not None and default.enabled
                    and effective_role_ids(s, user.id, project_id=default.id)):
                scope = {"project": {"id": default.id}}
        access = None
        if "oauth" in extra:
            # keystone: an access token is always scoped to its project, whatever the
            # request names
            access, role_ids = extra["oauth"]
            scope = {"project": {"id": access.project_id}}
        trust = None
        if access is not None:
            project, domain, system = _resolve_scope(s, scope, user)
            pdom = s.get(Domain, project.domain_id)
            if not project.enabled or pdom is None or not pdom.enabled:
                raise _unauthorized(f"Project {project.id} is disabled.")
            if not role_ids:
                raise _unauthorized("User has no access to the requested scope.")
        elif isinstance(scope, dict) and "OS-TRUST:trust" in scope:
            if cred is not None:
                raise _unauthorized("Application credentials cannot request a scope.")
            trust, user, role_ids = trusts.scope(s, scope["OS-TRUST:trust"], user)
            project = s.get(Project, trust.project_id) if trust.project_id else None
            domain = system = None
            pdom = project and s.get(Domain, project.domain_id)
            if project is not None and (not project.enabled or not pdom or not pdom.enabled):
                raise _unauthorized(f"Project {project.id} is disabled.")
        else:
            project, domain, system = _resolve_scope(s, scope, user)
            role_ids = _scope_role_ids(s, user, project, domain, system)
        if cred is not None:
            # The credential's roles (and the roles they imply) that the user still holds.
            role_ids &= assignment.expand_implied(s, {r["id"] for r in cred.roles})
            if not role_ids:
                raise _unauthorized("The application credential's roles are no longer held.")
        roles = _role_refs(s, role_ids)
        methods_out = sorted(set(methods) | set(extra.get("methods", [])))
        expires_at = extra.get("expires_at")
        if cred is not None and cred.expires_at and (
                expires_at is None or cred.expires_at < expires_at):
            expires_at = min(cred.expires_at,
                             utcnow() + dt.timedelta(seconds=config.CONF.token.expiration))
        if trust is not None:
            if trust.expires_at and (expires_at is None or trust.expires_at < expires_at):
                expires_at = min(trust.expires_at,
                                 utcnow() + dt.timedelta(seconds=config.CONF.token.expiration))
            trusts.consume_use(trust.id)
        token_id, data = tokens.issue(
            user_id=user.id, user_domain_id=user.domain_id, methods=methods_out,
            roles=[r["name"] for r in roles], user_name=user.name,
            project_id=project.id if project else None,
            project_name=project.name if project else None,
            project_domain_id=project.domain_id if project else None,
            domain_id=domain.id if domain else None, system=system, expires_at=expires_at,
            parent_audit_id=extra.get("parent_audit_id"),
            app_cred_id=cred.id if cred else None,
            trust=[trust.id, trust.trustor_user_id, trust.trustee_user_id,
                   trust.impersonation] if trust else None,
            oauth=[access.id, access.consumer_id] if access else None)
        return token_id, render(s, data, nocatalog=nocatalog, roles=roles)


def validate_for_display(subject_token: str, *, nocatalog: bool = False,
                         allow_expired: bool = False) -> dict:
    """GET /v3/auth/tokens: the token body for a token id (401/404 if not valid)."""
    try:
        data = tokens.validate(subject_token)
    except exceptions.Unauthorized:
        raise exceptions.NotFound("Could not find token.") from None
    # Services validate the same token again and again: the rendered body (four queries)
    # is kept for a second. The revocation check above still runs every time, so only
    # names (a renamed project) can lag, by at most that second. Treat it as read-only.
    key = (subject_token, nocatalog)
    rendered = _rendered()
    body = rendered.get(key)
    if body is None:
        with db.reader() as s:
            body = render(s, data, nocatalog=nocatalog)
        rendered.put(key, body)
    return body


def _rendered() -> cache.TTLCache:
    """The current cloud's rendered tokens (common/runtime.py)."""
    return runtime.current().slot(__name__ + ".rendered", lambda: cache.TTLCache(ttl=1.0))


def render(s, data: tokens.TokenData, *, nocatalog: bool = False,
           roles: list[dict] | None = None) -> dict:
    user = s.get(User, data.user_id)
    if user is None:
        raise exceptions.NotFound("Could not find token.")
    domains = {}

    def domain_ref(domain_id):
        if domain_id not in domains:
            d = s.get(Domain, domain_id)
            domains[domain_id] = {"id": domain_id, "name": d.name if d else domain_id}
        return domains[domain_id]

    body: dict = {
        "methods": data.methods,
        "user": {"domain": domain_ref(user.domain_id), "id": user.id, "name": user.name,
                 "password_expires_at": isotime_us(user.password_expires_at)},
        "audit_ids": data.audit_ids,
        "expires_at": isotime_us(data.expires_at),
        "issued_at": isotime_us(data.issued_at),
    }
    if data.project_id or data.domain_id or data.system or data.trust:
        if roles is None:
            by_name = {r.name: r.id for r in s.scalars(
                sa.select(Role).where(Role.name.in_(data.roles)))}
            roles = [{"id": by_name.get(n, n), "name": n} for n in data.roles]
        body["roles"] = roles
    if data.project_id:
        project = s.get(Project, data.project_id)
        if project is None:
            raise exceptions.NotFound("Could not find token.")
        body["project"] = {"domain": domain_ref(project.domain_id), "id": project.id,
                           "name": project.name}
        body["is_domain"] = False
    elif data.domain_id:
        body["domain"] = domain_ref(data.domain_id)
    elif data.system:
        body["system"] = {"all": True}
    if data.trust:
        trust_id, trustor_id, trustee_id, impersonation = data.trust
        body["OS-TRUST:trust"] = {"id": trust_id, "impersonation": impersonation,
                                  "trustor_user": {"id": trustor_id},
                                  "trustee_user": {"id": trustee_id}}
    if data.oauth:
        body["OS-OAUTH1"] = {"access_token_id": data.oauth[0], "consumer_id": data.oauth[1]}
    if data.app_cred_id:
        cred = s.get(ApplicationCredential, data.app_cred_id)
        body["application_credential"] = {
            "id": data.app_cred_id, "name": cred.name if cred else None,
            "restricted": not cred.unrestricted if cred else True}
        if cred is not None and cred.access_rules:
            body["application_credential"]["access_rules"] = access_rules.rules_of(
                s, cred.access_rules)
    if not nocatalog and (data.project_id or data.domain_id or data.system):
        body["catalog"] = catalog.catalog(data.project_id, data.user_id)
    return {"token": body}
