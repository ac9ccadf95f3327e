"""OS-OAUTH1 delegation (keystone/oauth1, keystone/api/os_oauth1.py): a consumer asks for
a request token on a project, a user authorizes it with some of its roles there, the
consumer trades it (with the verifier) for an access token, and signs token requests
with it (the ``oauth1`` method of POST /v3/auth/tokens). Signatures are HMAC-SHA1,
checked by oauthlib's endpoints with keystone's request validator, as keystone does.

Tokens issued this way carry [access token id, consumer id]: deleting the access token
(or its consumer) revokes them; they cannot be rescoped, nor delegate further.
"""
from __future__ import annotations

import datetime as dt
import secrets
import string
import uuid

import sqlalchemy as sa
from oauthlib import oauth1 as _oauthlib
from oauthlib.common import extract_params
from oauthlib.oauth1.rfc5849 import utils as _oauth_utils

from pocketstack.common import config, db, exceptions
from pocketstack.common.timeutils import isotime_us, utcnow
from pocketstack.identity import assignment, tokens
from pocketstack.identity.assignment import effective_role_ids
from pocketstack.identity.models import (OAuth1AccessToken, OAuth1Consumer,
                                         OAuth1RequestToken, Project, Role)

# keystone/oauth1/backends/base.py: alphanumerics without the easily confused ones
VERIFIER_CHARS = "".join(c for c in string.ascii_letters + string.digits
                         if c not in "jiIl1oO0")


def expecting(attribute: str, target: str) -> exceptions.ValidationError:
    """keystone's ValidationError for a missing attribute."""
    return exceptions.ValidationError(
        f"Expecting to find {attribute} in {target}. The server could not comply with the "
        "request since it is either malformed or otherwise incorrect. The client is "
        "assumed to be in error.")


def _new_token_id() -> str:
    return uuid.uuid4().hex  # keystone's validator only takes 32 hex characters


def _expiry(seconds: int) -> dt.datetime | None:
    return utcnow() + dt.timedelta(seconds=seconds) if seconds > 0 else None


def _expired(expires_at: dt.datetime | None) -> bool:
    return expires_at is not None and utcnow() > expires_at


def oauth_headers(headers) -> dict:
    """The oauth_* parameters of the Authorization header."""
    value = headers.get("authorization")
    if not value:
        raise exceptions.ValidationError(
            "No Authorization headers found, cannot proceed with OAuth related calls.")
    try:
        return dict(_oauth_utils.parse_authorization_header(value))
    except (ValueError, TypeError):
        raise exceptions.ValidationError("The Authorization header is not an OAuth one.") \
            from None


def _check_oauth_answer(body: str | None) -> None:
    """oauthlib answers a malformed request with error=...&error_description=...; keystone
    turns that into a 400 with the details."""
    params = {k: v for k, v in extract_params(body or "") or [] if not k.startswith("oauth_")}
    if "error" in params:
        raise exceptions.ValidationError(
            f"Validation failed with errors: {params['error']}, detail message is: "
            f"{params.get('error_description')}.")
    if params:
        raise exceptions.ValidationError(
            "Unknown parameters found,please provide only oauth parameters.")


class _Validator(_oauthlib.RequestValidator):
    """keystone/oauth1/validator.py: ids and nonces are hex, no realms, no TLS demand;
    timestamps are checked by oauthlib, nonces are not remembered (as keystone)."""

    enforce_ssl = False
    safe_characters = set("abcdef0123456789")

    def _check_token(self, token):
        return set(token) <= self.safe_characters and len(token) == 32

    check_client_key = check_request_token = check_access_token = _check_token

    def check_nonce(self, nonce):
        return set(nonce) <= self.safe_characters

    def check_verifier(self, verifier):
        return all(c in VERIFIER_CHARS for c in verifier) and len(verifier) == 8

    def _get(self, model, ident):
        with db.reader() as s:
            return s.get(model, ident)

    def get_client_secret(self, client_key, request):
        consumer = self._get(OAuth1Consumer, client_key)
        return (consumer.secret or "") if consumer else ""

    def get_request_token_secret(self, client_key, token, request):
        found = self._get(OAuth1RequestToken, token)
        return found.request_secret if found else ""

    def get_access_token_secret(self, client_key, token, request):
        found = self._get(OAuth1AccessToken, token)
        return found.access_secret if found else ""

    def get_default_realms(self, client_key, request):
        return []

    def get_realms(self, token, request):
        return []

    def get_redirect_uri(self, token, request):
        return "oob"

    def get_rsa_key(self, client_key, request):
        return ""

    def invalidate_request_token(self, client_key, request_token, request):
        pass  # the access token's creation deletes it

    def validate_client_key(self, client_key, request):
        consumer = self._get(OAuth1Consumer, client_key)
        return consumer is not None and consumer.secret is not None

    def validate_request_token(self, client_key, token, request):
        found = self._get(OAuth1RequestToken, token)
        return found is not None and found.consumer_id == client_key

    def validate_access_token(self, client_key, token, request):
        found = self._get(OAuth1AccessToken, token)
        return found is not None and found.consumer_id == client_key

    def validate_timestamp_and_nonce(self, client_key, timestamp, nonce, request,
                                     request_token=None, access_token=None):
        return True

    def validate_redirect_uri(self, client_key, redirect_uri, request):
        return True

    def validate_requested_realms(self, client_key, realms, request):
        return True

    def validate_realms(self, client_key, token, request, uri=None, realms=None):
        return True

    def validate_verifier(self, client_key, token, verifier, request):
        found = self._get(OAuth1RequestToken, token)
        return found is not None and found.verifier == verifier

    def verify_request_token(self, token, request):
        return isinstance(token, str)

    def verify_realms(self, token, realms, request):
        return True

    def save_access_token(self, token, request):
        pass

    def save_request_token(self, token, request):
        pass

    def save_verifier(self, token, verifier, request):
        pass


def _endpoint(kind):
    return kind(request_validator=_Validator(), token_generator=_new_token_id)


def _form(token_id: str, secret: str, expires_at: dt.datetime | None) -> str:
    out = f"oauth_token={token_id}&oauth_token_secret={secret}"
    if expires_at is not None:
        out += f"&oauth_expires_at={isotime_us(expires_at)}"
    return out


# --- request token ----------------------------------------------------------------------


def create_request_token(url: str, headers) -> str:
    """POST /v3/OS-OAUTH1/request_token: the form-encoded answer."""
    consumer_id = oauth_headers(headers).get("oauth_consumer_key")
    project_id = headers.get("requested-project-id")
    if not consumer_id:
        raise expecting("oauth_consumer_key", "request")
    if not project_id:
        raise expecting("Requested-Project-Id", "request")
    with db.reader() as s:
        if s.get(Project, project_id) is None:
            raise exceptions.NotFound(f"Could not find project: {project_id}.")
        if s.get(OAuth1Consumer, consumer_id) is None:
            raise exceptions.NotFound("Consumer not found")
    try:
        _, body, _ = _endpoint(_oauthlib.RequestTokenEndpoint).create_request_token_response(
            url, http_method="POST", body="", headers=dict(headers))
    except NotImplementedError:  # oauthlib's dummy client: a consumer that cannot sign
        body = None
    if not body:
        raise exceptions.Unauthorized("Invalid signature")
    _check_oauth_answer(body)
    token = OAuth1RequestToken(
        id=_new_token_id(), request_secret=uuid.uuid4().hex, requested_project_id=project_id,
        consumer_id=consumer_id,
        expires_at=_expiry(config.CONF.oauth1.request_token_duration))
    with db.transaction() as s:
        s.add(token)
    return _form(token.id, token.request_secret, token.expires_at)


def _request_token(s, token_id: str) -> OAuth1RequestToken:
    found = s.get(OAuth1RequestToken, token_id)
    if found is None:
        raise exceptions.NotFound("Request token not found")
    if _expired(found.expires_at):
        raise exceptions.Unauthorized("Request token is expired")
    return found


def authorize(user_id: str, token_id: str, roles: list[dict]) -> str:
    """PUT /v3/OS-OAUTH1/authorize/{id}: the user lends the named roles it holds on the
    requested project; the verifier the consumer needs for its access token."""
    with db.transaction() as s:
        token = _request_token(s, token_id)
        wanted = set()
        for ref in roles:
            if ref.get("id"):
                wanted.add(ref["id"])
                continue
            found = s.scalars(sa.select(Role.id).where(Role.name == ref["name"],
                                                      Role.domain_id.is_(None))).all()
            if not found:
                raise exceptions.NotFound(f"Could not find role: {ref['name']}.")
            wanted.add(found[0])
        held = effective_role_ids(s, user_id, project_id=token.requested_project_id)
        if not held >= wanted:
            raise exceptions.Unauthorized("authorizing user does not have role required")
        token.authorizing_user_id = user_id
        token.role_ids = sorted(wanted)
        token.verifier = "".join(secrets.choice(VERIFIER_CHARS) for _ in range(8))
        return token.verifier


# --- access token -----------------------------------------------------------------------


def create_access_token(url: str, headers) -> str:
    """POST /v3/OS-OAUTH1/access_token: the request token (authorized, with its verifier)
    becomes an access token; the form-encoded answer."""
    params = oauth_headers(headers)
    consumer_id, token_id = params.get("oauth_consumer_key"), params.get("oauth_token")
    verifier = params.get("oauth_verifier")
    for name, value in (("oauth_consumer_key", consumer_id), ("oauth_token", token_id),
                        ("oauth_verifier", verifier)):
        if not value:
            raise expecting(name, "request")
    with db.reader() as s:
        request_token = _request_token(s, token_id)
        consumer = s.get(OAuth1Consumer, consumer_id)
    try:
        _, body, _ = _endpoint(_oauthlib.AccessTokenEndpoint).create_access_token_response(
            url, http_method="POST", body="", headers=dict(headers))
    except NotImplementedError:  # oauthlib's dummy client: an unknown consumer (keystone)
        if consumer is None:
            raise exceptions.Unauthorized("Provided consumer does not exist.") from None
        if request_token.consumer_id != consumer_id:
            raise exceptions.Unauthorized(
                "Provided consumer key does not match stored consumer key.") from None
        raise exceptions.Unauthorized("Invalid signature") from None
    if not body:
        if request_token.verifier != verifier:
            raise exceptions.Unauthorized("Provided verifier does not match stored verifier")
        raise exceptions.Unauthorized("Invalid signature")
    _check_oauth_answer(body)
    if not request_token.authorizing_user_id:
        raise exceptions.Unauthorized("Request Token does not have an authorizing user id.")
    with db.transaction() as s:
        used = s.get(OAuth1RequestToken, token_id)
        if used is None:  # traded by a concurrent request
            raise exceptions.NotFound("Request token not found")
        access = OAuth1AccessToken(
            id=_new_token_id(), access_secret=uuid.uuid4().hex,
            authorizing_user_id=used.authorizing_user_id, project_id=used.requested_project_id,
            role_ids=list(used.role_ids or []), consumer_id=used.consumer_id,
            expires_at=_expiry(config.CONF.oauth1.access_token_duration))
        s.add(access)
        s.delete(used)
    return _form(access.id, access.access_secret, access.expires_at)


# --- authentication with an access token ------------------------------------------------


def authenticate(s, url: str, headers) -> tuple[OAuth1AccessToken, set[str]]:
    """The oauth1 method of POST /v3/auth/tokens: the access token the request is signed
    with, and the roles its tokens carry (the delegated ones, and those they imply, that
    the user still holds on the project)."""
    token_id = oauth_headers(headers).get("oauth_token")
    if not token_id:
        raise expecting("oauth_token", "request")
    access = s.get(OAuth1AccessToken, token_id)
    if access is None:
        raise exceptions.NotFound("Access token not found")
    if _expired(access.expires_at):
        raise exceptions.Unauthorized("Access token is expired")
    try:
        valid, _ = _endpoint(_oauthlib.ResourceEndpoint).validate_protected_resource_request(
            url, http_method="POST", body="", headers=dict(headers), realms=None)
    except NotImplementedError:  # oauthlib's dummy client or token: another consumer's
        valid = False
    if not valid:
        raise exceptions.Unauthorized("Could not validate the access token")
    held = effective_role_ids(s, access.authorizing_user_id, project_id=access.project_id)
    return access, held & assignment.expand_implied(s, set(access.role_ids))


# --- access tokens of a user ------------------------------------------------------------


def list_access_tokens(user_id: str) -> list[OAuth1AccessToken]:
    with db.reader() as s:
        return list(s.scalars(sa.select(OAuth1AccessToken).where(
            OAuth1AccessToken.authorizing_user_id == user_id).order_by(OAuth1AccessToken.id)))


def get_access_token(user_id: str, token_id: str) -> OAuth1AccessToken:
    """keystone answers 404 for another user's token."""
    with db.reader() as s:
        found = s.get(OAuth1AccessToken, token_id)
    if found is None:
        raise exceptions.NotFound("Access token not found")
    if found.authorizing_user_id != user_id:
        raise exceptions.NotFound("Could not find access token.")
    return found


def delete_access_token(user_id: str, token_id: str) -> None:
    with db.transaction() as s:
        found = s.get(OAuth1AccessToken, token_id)
        if found is None:
            raise exceptions.NotFound("Access token not found")
        if found.authorizing_user_id != user_id:
            raise exceptions.Unauthorized("User IDs do not match")
        s.delete(found)
        tokens.revoke(s, access_token_id=token_id)


def delete_consumer_tokens(s, consumer_id: str) -> None:
    """A deleted consumer's request and access tokens go, and its tokens stop working."""
    s.execute(sa.delete(OAuth1RequestToken).where(
        OAuth1RequestToken.consumer_id == consumer_id))
    for token_id in s.scalars(sa.select(OAuth1AccessToken.id).where(
            OAuth1AccessToken.consumer_id == consumer_id)).all():
        tokens.revoke(s, access_token_id=token_id)
    s.execute(sa.delete(OAuth1AccessToken).where(OAuth1AccessToken.consumer_id == consumer_id))
