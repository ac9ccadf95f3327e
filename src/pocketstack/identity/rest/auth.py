"""/v3/auth: issue, validate, revoke tokens; the catalog, projects and domains a token
may use."""
from __future__ import annotations

from pocketstack.common import db, exceptions
from pocketstack.identity import assignment, auth, catalog, tokens
from pocketstack.identity.models import Domain
from pocketstack.identity.rest import common, views
from pocketstack.wsgi import routing


def _nocatalog(req) -> bool:
    return "nocatalog" in req.query


@routing.public
def issue_token(req):
    # the URL an OAuth1 client signed: the path, without the query (as keystone)
    token_id, body = auth.authenticate(common.json_body(req), nocatalog=_nocatalog(req),
                                       http=(common.request_url(req, query=False),
                                             req.headers))
    return routing.json_response(body, status=201, headers={"X-Subject-Token": token_id})


def _subject(req) -> str:
    subject = req.headers.get("x-subject-token")
    if not subject:
        raise exceptions.NotFound("Could not find token: X-Subject-Token is missing.")
    return subject


def _authorize_subject(req, action: str, subject_user_id: str) -> None:
    common.authorize(req, action, {"target": {"token": {"user_id": subject_user_id}}})


async def validate_token(req):
    # On the event loop, not the thread pool: with the rendered body cached this is a few
    # hundred microseconds of CPU, less than the two thread switches would cost (services
    # call it for every request they serve).
    subject = _subject(req)
    body = auth.validate_for_display(subject, nocatalog=_nocatalog(req))
    _authorize_subject(req, "identity:validate_token", body["token"]["user"]["id"])
    return routing.json_response(body, headers={"X-Subject-Token": subject})


def revoke_token(req):
    subject = _subject(req)
    try:
        data = tokens.validate(subject)
    except exceptions.Unauthorized:
        raise exceptions.NotFound("Could not find token.") from None
    _authorize_subject(req, "identity:revoke_token", data.user_id)
    tokens.revoke(audit_id=data.audit_ids[0])
    return routing.empty()


def auth_catalog(req):
    ctx = req.context
    if not (ctx.project_id or ctx.domain_id or ctx.system_scope):
        raise exceptions.Forbidden("A scoped token is required to list the catalog.")
    return routing.json_response({
        "catalog": catalog.catalog(ctx.project_id, ctx.user_id),
        "links": {"self": f"{req.service_url}/v3/auth/catalog", "previous": None, "next": None}})


def auth_projects(req):
    """The enabled projects the token's user has roles on (direct, group or inherited)."""
    with db.reader() as s:
        projects = [p for p in assignment.projects_for_user(s, req.context.user_id)
                    if p.enabled and (s.get(Domain, p.domain_id) or Domain()).enabled]
    return common.collection(req, "projects", projects, views.project)


def auth_domains(req):
    with db.reader() as s:
        domains = [d for d in assignment.domains_for_user(s, req.context.user_id) if d.enabled]
    return common.collection(req, "domains", domains, views.domain)
